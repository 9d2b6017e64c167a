/** {@link PaymentNonceStore} on SQLite. */
import type Database from "better-sqlite3";
import type { Migration } from "./migrations.js";
import type { PaymentNonceStore } from "@tollgate/core";

export function createPaymentNonceOps(_db: Database.Database): PaymentNonceStore {
  return {};
}

/** Schema of this capability (migration version 6; add later changes as new versions). */
export const X402_MIGRATIONS: readonly Migration[] = [];
