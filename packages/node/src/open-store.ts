/**
 * Opens the store a `--db` value names: a SQLite file (`@tollgate/sqlite`), or a PostgreSQL server
 * for a `postgres://`/`postgresql://` URL (`@tollgate/postgres`, loaded only then, so SQLite users
 * never load `pg`). Failures come back as one readable line and an exit code, never as a throw.
 */
import { resolve } from "node:path";
import type { Store } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { isPostgresUrl, redactUrl } from "./config.js";

/** The outcome of {@link openStore}: the store and what it is (for the banner; no password), or a one-line problem with its exit code. */
export type OpenStoreResult =
  | { ok: true; store: Store; description: string }
  /** `exitCode` 2: unusable configuration (missing package, unreachable server, options that do not apply); 1: the store failed. */
  | { ok: false; exitCode: 1 | 2; message: string };

/** The database options of a command (`--db`, `--db-schema`, `--db-pool-size`, `--db-migrate`, `--db-group-commit`, `--db-prepared-statements`). */
export interface DatabaseConfig {
  /** A SQLite file path or a `postgres://` URL. */
  db: string;
  /** PostgreSQL schema. @default "public" */
  dbSchema?: string | undefined;
  /** PostgreSQL pool size. @default 10 */
  dbPoolSize?: number | undefined;
  /** Apply pending PostgreSQL migrations at open (false: only check). @default true */
  dbMigrate?: boolean | undefined;
  /** Commit the ledger writes of one event-loop turn in one PostgreSQL transaction. @default true */
  dbGroupCommit?: boolean | undefined;
  /** Run PostgreSQL statements as named prepared statements (false behind a pooler in transaction mode). @default true */
  dbPreparedStatements?: boolean | undefined;
}

/** Loads `@tollgate/postgres`; a parameter so that a test can make the import fail for real. */
export type PostgresLoader = () => Promise<Pick<typeof import("@tollgate/postgres"), "createPostgresStore">>;

const loadPostgres: PostgresLoader = () => import("@tollgate/postgres");

/** Node socket errors and PostgreSQL SQLSTATEs that mean "the server cannot be reached or refuses us". */
const UNREACHABLE = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|28\w{3}|3D000|08\w{3}|53300|57P03)$/;

/** One line from an error: AggregateErrors (IPv4 + IPv6 refusals) have an empty message of their own. */
function oneLine(error: unknown): string {
  const e = error as { message?: string; code?: string; errors?: unknown[] };
  const text = e.message || (e.errors ?? []).map((x) => (x as Error).message).join("; ") || e.code || String(error);
  return text.replace(/\s*\n\s*/g, " ");
}

/**
 * Opens the store of `config.db`. SQLite: creates the file's directory when missing (exit code 1
 * when it cannot). PostgreSQL: connects with a pool of `dbPoolSize` (default 10) and applies
 * pending migrations to `dbSchema` (default `public`) under an advisory lock, so several
 * instances may start at once (with `dbMigrate: false` it only checks that they were applied).
 * `dbSchema`/`dbPoolSize`/`dbMigrate`/`dbGroupCommit`/`dbPreparedStatements` with a SQLite file is a usage error.
 * Passwords never appear in the description or the messages.
 */
export async function openStore(config: DatabaseConfig, load: PostgresLoader = loadPostgres): Promise<OpenStoreResult> {
  const { db, dbSchema, dbPoolSize, dbMigrate, dbGroupCommit, dbPreparedStatements } = config;
  if (!isPostgresUrl(db)) {
    const flags = { "--db-schema": dbSchema, "--db-pool-size": dbPoolSize, "--db-migrate": dbMigrate, "--db-group-commit": dbGroupCommit, "--db-prepared-statements": dbPreparedStatements };
    const misplaced = Object.entries(flags).flatMap(([flag, v]) => (v === undefined ? [] : [flag]));
    const named = misplaced.length > 1 ? `${misplaced.slice(0, -1).join(", ")} and ${misplaced.at(-1)} apply` : `${misplaced[0]} applies`;
    if (misplaced.length > 0) return { ok: false, exitCode: 2, message: `${named} only to a postgres:// --db (got the SQLite file ${JSON.stringify(db)})` };
    try {
      return { ok: true, store: createSqliteStore({ filename: db }), description: db === ":memory:" ? "SQLite in memory" : `SQLite ${resolve(db)}` };
    } catch (error) {
      return { ok: false, exitCode: 1, message: `cannot open the database ${JSON.stringify(db)}: ${oneLine(error)}` };
    }
  }
  const shown = redactUrl(db);
  let postgres: Awaited<ReturnType<PostgresLoader>>;
  try {
    postgres = await load();
  } catch (error) {
    const message = oneLine(error);
    const code = (error as { code?: string }).code;
    if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return { ok: false, exitCode: 1, message: `cannot load @tollgate/postgres: ${message}` };
    const what = /['"]pg['"]/.test(message) ? "pg (the PostgreSQL driver @tollgate/postgres uses)" : "@tollgate/postgres";
    return { ok: false, exitCode: 2, message: `a postgres:// --db needs ${what}: npm install @tollgate/postgres pg` };
  }
  try {
    const store = await postgres.createPostgresStore({
      connectionString: db,
      ...(dbSchema === undefined ? {} : { schema: dbSchema }),
      ...(dbPoolSize === undefined ? {} : { poolSize: dbPoolSize }),
      ...(dbMigrate === undefined ? {} : { migrate: dbMigrate }),
      ...(dbGroupCommit === undefined ? {} : { groupCommit: dbGroupCommit }),
      ...(dbPreparedStatements === undefined ? {} : { preparedStatements: dbPreparedStatements }),
    });
    return { ok: true, store, description: `PostgreSQL ${shown}, schema ${dbSchema ?? "public"}, pool of ${dbPoolSize ?? 10} connections` };
  } catch (error) {
    const code = String((error as { code?: string }).code ?? "");
    // pg's own connection timeout has no code, only this message.
    if (UNREACHABLE.test(code) || /timeout expired|connection timeout/i.test(oneLine(error)))
      return { ok: false, exitCode: 2, message: `cannot connect to PostgreSQL at ${shown}: ${oneLine(error)}` };
    const hint = dbMigrate === false ? ` (with --db-migrate off, run \`tollgate migrate --db … --db-schema ${dbSchema ?? "public"}\` first)` : "";
    return { ok: false, exitCode: 1, message: `cannot open the PostgreSQL store at ${shown}: ${oneLine(error)}${hint}` };
  }
}
