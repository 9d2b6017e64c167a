/** `@tollgate/sqlite`: the better-sqlite3 Store with versioned migrations and WAL. */
export { createSqliteStore } from "./store.js";
export type { SqliteStoreOptions } from "./store.js";
export { MIGRATIONS, migrate } from "./migrations.js";
export type { Migration } from "./migrations.js";
export { MAX_INT64 } from "./rows.js";
