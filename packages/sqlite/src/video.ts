/** {@link VideoStore} on SQLite. */
import type Database from "better-sqlite3";
import type { Migration } from "./migrations.js";
import type { VideoStore } from "@tollgate/core";

export function createVideoOps(_db: Database.Database): VideoStore {
  return {};
}

/** Schema of this capability (migration version 2; add later changes as new versions). */
export const VIDEO_MIGRATIONS: readonly Migration[] = [];
