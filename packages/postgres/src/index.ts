/** `@tollgate/postgres`: the PostgreSQL Store (driver `pg`), with versioned migrations. */
export { createPostgresStore } from "./store.js";
export type { PostgresStoreOptions } from "./store.js";
export { MIGRATIONS, migrate } from "./migrations.js";
export type { Migration } from "./migrations.js";
export type { Queryable } from "./queryable.js";
export { createPgliteQueryable } from "./pglite.js";
export type { PgliteLike } from "./pglite.js";
