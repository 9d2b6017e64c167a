/** The one thing the store needs from a driver, and the retry of a statement that lost a unique-index race. */

/**
 * Anything that runs one parameterized statement: a `pg.Pool`, a `pg.Client`, or the PGlite
 * adapter ({@link createPgliteQueryable}). Every store operation is one call of `query`, so any
 * connection of a pool may run it. A call without `params` must go out as one simple-protocol
 * Query message (pg and the PGlite adapter do this), so that a migration of several statements
 * is allowed.
 */
export interface Queryable {
  query<R = any>(text: string, params?: unknown[]): Promise<{ rows: R[] }>;
  /**
   * Optional: runs `fn` between BEGIN and COMMIT (ROLLBACK if it throws) on one connection that
   * no other caller uses meanwhile ({@link inTransaction}: migrations and the store's few
   * transactions). Without it, a `pg.Pool` has one client checked out, and anything else gets
   * BEGIN/COMMIT through `query` (right only for a connection nothing else uses meanwhile: the
   * store wraps a shared `pg.Client` in {@link serializedConnection}).
   */
  transaction?<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

/** A `pg.Pool` (or anything shaped like one): `connect()` checks out a client to `release()`. */
export interface PoolLike extends Queryable {
  connect(): Promise<Queryable & { release(error?: Error | boolean): void }>;
  totalCount: number;
}

/** Whether `db` is a `pg.Pool` (or shaped like one). */
export function isPool(db: Queryable): db is PoolLike {
  return typeof (db as Partial<PoolLike>).connect === "function" && typeof (db as Partial<PoolLike>).totalCount === "number";
}

/** Runs `fn` in a transaction on one connection of `db` (see {@link Queryable.transaction}). */
export async function inTransaction<T>(db: Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  if (db.transaction) return db.transaction(fn);
  if (isPool(db)) {
    const client = await db.connect();
    let broken: Error | undefined;
    try {
      return await begin(client, fn);
    } catch (error) {
      // A client whose ROLLBACK failed may still be inside the transaction: the pool must drop it.
      broken = error instanceof RollbackError ? error : undefined;
      throw error;
    } finally {
      client.release(broken);
    }
  }
  return begin(db, fn);
}

class RollbackError extends Error {}

async function begin<T>(tx: Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  await tx.query("BEGIN");
  let result: T;
  try {
    result = await fn(tx);
  } catch (error) {
    try {
      await tx.query("ROLLBACK");
    } catch (rollback) {
      throw new RollbackError(`ROLLBACK failed after: ${(error as Error).message}`, { cause: rollback });
    }
    throw error;
  }
  await tx.query("COMMIT");
  return result;
}

/** The PostgreSQL error fields this package looks at (pg's and PGlite's DatabaseError both carry them). */
interface PgError {
  code?: string;
  constraint?: string;
}

/**
 * Runs `run`, and again after an error for which `retryable` answers true (asked only while
 * another attempt remains), at most `attempts` times in all; the last error is thrown.
 */
export async function retryWhile<T>(retryable: (error: unknown) => boolean, run: () => Promise<T>, attempts: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= attempts || !retryable(error)) throw error;
    }
  }
}

/**
 * A single statement cannot see rows that concurrent transactions committed after it started,
 * except through a unique index. Where a guard depends on such a row (an idempotency key, the one
 * current session key, a dispenser claim), the index makes the later statement fail with a
 * unique violation: the statement changed nothing, and `run` is called again so that its new
 * snapshot sees the winner. Each retry follows a commit by another caller, so this ends.
 */
export function retryOnConflict<T>(constraints: readonly string[], run: () => Promise<T>): Promise<T> {
  const conflict = (error: unknown) => {
    const { code, constraint } = error as PgError;
    return code === "23505" && constraint !== undefined && constraints.includes(constraint);
  };
  return retryWhile(conflict, run, MAX_ATTEMPTS);
}

const MAX_ATTEMPTS = 50;

/**
 * One connection that every operation shares (a `pg.Client`), made safe for the store's few
 * transactions: a transaction runs alone on it, and a statement issued meanwhile waits for it to
 * end (sent through the shared connection, it would run inside it, and a failure of either would
 * roll back the other's work). pg runs one statement at a time on a client anyway.
 */
export function serializedConnection(db: Queryable): Queryable {
  let tail: Promise<unknown> = Promise.resolve();
  const alone = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
  return {
    query: <R>(text: string, params?: unknown[]) => alone(() => db.query<R>(text, params)),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => alone(() => begin(db, fn)),
  };
}
