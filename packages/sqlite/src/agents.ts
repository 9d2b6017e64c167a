/** {@link AgentStore} on SQLite. */
import type Database from "better-sqlite3";
import type { Migration } from "./migrations.js";
import type { AgentStore } from "@tollgate/core";

export function createAgentOps(_db: Database.Database): AgentStore {
  return {};
}

/** Schema of this capability (migration version 4; add later changes as new versions). */
export const AGENTS_MIGRATIONS: readonly Migration[] = [];
