/** {@link FeedbackStore} on SQLite. */
import type Database from "better-sqlite3";
import type { Migration } from "./migrations.js";
import type { FeedbackStore } from "@tollgate/core";

export function createFeedbackOps(_db: Database.Database): FeedbackStore {
  return {};
}

/** Schema of this capability (migration version 3; add later changes as new versions). */
export const FEEDBACK_MIGRATIONS: readonly Migration[] = [];
