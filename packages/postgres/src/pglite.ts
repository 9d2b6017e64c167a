/**
 * A {@link Queryable} over PGlite (PostgreSQL compiled to WASM, in process): for tests and
 * embedded use. Typed structurally, so this package never imports `@electric-sql/pglite`.
 */
import type { Queryable } from "./queryable.js";

/** What the adapter uses of a PGlite instance (or of one of its transactions). */
interface PgliteSession {
  query(text: string, params?: any[]): Promise<{ rows: unknown[] }>;
  exec(text: string): Promise<{ rows: unknown[] }[]>;
}

/** A PGlite instance (`new PGlite()` from `@electric-sql/pglite`). */
export interface PgliteLike extends PgliteSession {
  transaction<T>(fn: (tx: PgliteSession) => Promise<T>): Promise<T>;
}

function session(db: PgliteSession): Queryable["query"] {
  return async (text, params) => {
    if (params && params.length > 0) return (await db.query(text, params)) as { rows: never[] };
    // Without parameters, the simple protocol: a migration is several statements in one string.
    const results = await db.exec(text);
    return { rows: (results[results.length - 1]?.rows ?? []) as never[] };
  };
}

/**
 * Wraps a PGlite instance as a {@link Queryable}. PGlite has one connection and runs one
 * statement at a time; `transaction` holds it for the whole transaction (PGlite's own lock), so
 * concurrent {@link migrate} calls on one instance serialize.
 */
export function createPgliteQueryable(pglite: PgliteLike): Queryable {
  return {
    query: session(pglite),
    transaction: (fn) => pglite.transaction((tx) => fn({ query: session(tx) })),
  };
}
