/** {@link DispenserStore} on SQLite. */
import type Database from "better-sqlite3";
import type { Migration } from "./migrations.js";
import type { DispenserStore } from "@tollgate/core";

export function createDispenserOps(_db: Database.Database): DispenserStore {
  return {};
}

/** Schema of this capability (migration version 5; add later changes as new versions). */
export const DISPENSER_MIGRATIONS: readonly Migration[] = [];
