/** `createPostgresStore`: the Store for several gateway instances sharing one PostgreSQL database. */
import { MAX_AMOUNT, type Store } from "@tollgate/core";
import pg from "pg";
import { createAgentOps } from "./agents.js";
import { createAuthOps } from "./auth.js";
import { createChargeOps } from "./charges.js";
import { createDispenserOps } from "./dispenser.js";
import { createFeedbackOps } from "./feedback.js";
import { createKeyOps } from "./keys.js";
import { createLedgerOps } from "./ledger.js";
import { createHealthOps, missingMigrations } from "./health.js";
import { migrate } from "./migrations.js";
import { isPool, serializedConnection, type Queryable } from "./queryable.js";
import { createGroupCommit, preparedStatements } from "./group-commit.js";
import { groupLocks } from "./ledger-locks.js";
import { tablesIn } from "./rows.js";
import { createUsageOps } from "./usage.js";
import { createVideoOps } from "./video.js";
import { createPaymentNonceOps } from "./x402.js";
import { createTranscriptRestOps } from "./transcript-rests.js";

/** Options of {@link createPostgresStore}: exactly one of `connectionString` and `pool`. */
export interface PostgresStoreOptions {
  /** A PostgreSQL URL; a `pg.Pool` is created for it and closed by `store.close()`. */
  connectionString?: string;
  /** An existing `pg.Pool`, `pg.Client` or PGlite adapter; NOT closed by `store.close()`. */
  pool?: Queryable;
  /** Connections of the pool created for `connectionString`. @default 10 */
  poolSize?: number;
  /** How long the pool created for `connectionString` waits to open a connection, in ms. @default 10000 */
  connectTimeoutMs?: number;
  /** The schema the tables live in (created if missing). @default "public" */
  schema?: string;
  /**
   * Run {@link migrate} at creation. With `false` the schema must already be migrated (e.g. by a
   * deploy step calling `migrate()`); creation then only checks that it is.
   * @default true
   */
  migrate?: boolean;
  /**
   * Commit the statements of one event-loop turn together: one round trip and one commit per
   * group, each statement still its own guard (see the package README). Applies when the store
   * talks to a pool (`connectionString`, or a `pg.Pool` passed as `pool`). It prepares statements
   * on the pool's connections (unless `preparedStatements: false`) and sends each group as one
   * extended-protocol pipeline, which runs as one implicit transaction.
   * @default true
   */
  groupCommit?: boolean;
  /**
   * Run the statements as named prepared statements on the store's connections (parsed and planned
   * once per connection). Set `false` behind a pooler in transaction mode that does not keep
   * prepared statements across transactions (PgBouncer before 1.21, or without
   * `max_prepared_statements`): every statement is then parsed on each run, which costs CPU on the
   * database server. Applies to the pool the store creates and to group commit; a pool passed as
   * `pool` runs the other statements unnamed anyway.
   * @default true
   */
  preparedStatements?: boolean;
}

function check(options: PostgresStoreOptions): Required<Pick<PostgresStoreOptions, "poolSize" | "schema" | "migrate" | "groupCommit" | "preparedStatements">> {
  const problems: string[] = [];
  if (typeof options !== "object" || options === null) throw new TypeError("createPostgresStore: options must be an object");
  const { connectionString, pool, poolSize = 10, schema = "public", migrate: run = true, groupCommit = true, preparedStatements: prepared = true } = options;
  if ((connectionString === undefined) === (pool === undefined)) problems.push("pass exactly one of `connectionString` and `pool`");
  if (connectionString !== undefined && (typeof connectionString !== "string" || connectionString.length === 0)) problems.push("`connectionString` must be a non-empty string");
  if (pool !== undefined && typeof pool?.query !== "function") problems.push("`pool` must have a query(text, params) method (a pg.Pool, pg.Client or the PGlite adapter)");
  if (!Number.isInteger(poolSize) || poolSize < 1) problems.push("`poolSize` must be a positive integer");
  if (typeof schema !== "string" || schema.length === 0 || schema.length > 63) problems.push("`schema` must be a string of 1 to 63 characters");
  if (typeof run !== "boolean") problems.push("`migrate` must be a boolean");
  if (typeof groupCommit !== "boolean") problems.push("`groupCommit` must be a boolean");
  if (typeof prepared !== "boolean") problems.push("`preparedStatements` must be a boolean");
  if (problems.length > 0) throw new TypeError(`createPostgresStore: ${problems.join("; ")}`);
  return { poolSize, schema, migrate: run, groupCommit, preparedStatements: prepared };
}

/** Throws unless every migration is recorded in `schema`. */
async function assertMigrated(db: Queryable, schema: string): Promise<void> {
  const missing = await missingMigrations(db, tablesIn(schema)).catch((error: unknown) => {
    throw new Error(`createPostgresStore: schema "${schema}" is not migrated (run migrate() or pass migrate: true)`, { cause: error });
  });
  if (missing.length > 0) throw new Error(`createPostgresStore: schema "${schema}" lacks migrations ${missing.join(", ")} (run migrate())`);
}

/**
 * Opens a PostgreSQL {@link Store} (and migrates its schema unless `migrate: false`). Every store
 * operation is one SQL statement, so the guarded ones are atomic on their own and any number of
 * gateway instances may share the database (the package README says how each guard stays exact
 * under READ COMMITTED). Amounts are exact up to 2^256-1 (`store.maxAmount`).
 * @throws TypeError on invalid options; the database error if it cannot connect or migrate (a pool
 * created here is closed again first).
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const { poolSize, schema, migrate: run, groupCommit, preparedStatements: prepared } = check(options);
  let db: Queryable;
  let ops: Queryable;
  let end: (() => Promise<void>) | undefined;
  if (options.connectionString !== undefined) {
    // A bounded connect: an address that drops packets fails in 10 s, not at the OS TCP timeout.
    const pool = new pg.Pool({ connectionString: options.connectionString, max: poolSize, connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000 });
    // An idle connection that breaks (server restart, network) is dropped by the pool and the next
    // query opens a new one; without a listener pg's "error" event would end the process instead.
    pool.on("error", () => {});
    db = pool;
    ops = preparedStatements(pool, prepared ? undefined : null);
    end = () => pool.end();
  } else {
    const given = options.pool as Queryable;
    // A single connection (a pg.Client) shared by every operation: transactions must run alone on it.
    db = isPool(given) || given.transaction ? given : serializedConnection(given);
    ops = db;
  }
  try {
    if (run) await migrate(db, { schema });
    else await assertMigrated(db, schema);
  } catch (error) {
    await end?.();
    throw error;
  }

  const t = tablesIn(schema);
  const group = groupCommit && isPool(db) ? createGroupCommit(db, { lead: groupLocks(t), prepared }) : undefined;
  let closing: Promise<void> | undefined;
  return {
    maxAmount: MAX_AMOUNT,
    ...createKeyOps(ops, t, db),
    ...createLedgerOps(ops, t, group),
    ...createChargeOps(ops, t),
    ...createFeedbackOps(ops, t, db),
    ...createAgentOps(ops, t),
    ...createDispenserOps(ops, t),
    ...createVideoOps(ops, t),
    ...createPaymentNonceOps(ops, t, db),
    ...createTranscriptRestOps(ops, t),
    ...createAuthOps(ops, t),
    ...createUsageOps(ops, t),
    ...createHealthOps(ops, t),
    ...(group ? { groupCommitStats: () => ({ ...group.stats }) } : {}),
    async close() {
      // The ledger calls already issued are answered first (their group commits), then the pool ends.
      closing ??= (group?.drain() ?? Promise.resolve()).then(() => end?.());
      await closing;
    },
  };
}
