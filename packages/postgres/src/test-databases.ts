/**
 * Test helper: the databases this package's tests run on — one PGlite per test file always, and
 * the real server when DATABASE_URL is set. Every schema handed out is dropped after the file.
 */
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { afterAll, beforeAll, it } from "vitest";
import { createPgliteQueryable } from "./pglite.js";
import type { Queryable } from "./queryable.js";
import { quoteIdent } from "./rows.js";

/** How to get a server: the CI script prints the URL of a throwaway loopback cluster. */
const HOW = "start one with: export DATABASE_URL=$(.ci/postgres-start)";

/**
 * Registers what stands in for `what` (tests of the real server) when DATABASE_URL is unset:
 * under CI (`CI` set) one failing test naming what is missing, because CI must never pass by
 * skipping; elsewhere a skipped test with the reason in its title.
 */
export function serverMissing(what: string): void {
  if (process.env.CI)
    it(`${what} needs a PostgreSQL server`, () => {
      throw new Error(`DATABASE_URL is not set, and CI must run the PostgreSQL tests: ${HOW}`);
    });
  else it.skip(`${what} (skipped: DATABASE_URL is not set; ${HOW}; the pglite run covers the store suite)`, () => {});
}

export interface TestDatabase {
  name: "pglite" | "server";
  /** A shared Queryable (a PGlite adapter, or a pool of 10 connections). */
  db: Queryable;
  /** Another independent handle on the same database (a new pool on the server; the same PGlite). */
  connect(): Queryable;
  /** A new schema name, unique in this run, dropped after the file. */
  schema(): string;
}

/** The databases of `kinds` that are available (the server only with DATABASE_URL). */
export function testDatabases(label: string, kinds: readonly TestDatabase["name"][] = ["pglite", "server"]): TestDatabase[] {
  const run = `${label}_${process.pid}_${Date.now().toString(36)}`;
  const out: TestDatabase[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  const make = (name: TestDatabase["name"], db: Queryable, connect: () => Queryable): TestDatabase => {
    const schemas: string[] = [];
    cleanups.push(async () => {
      for (const s of schemas) await db.query(`DROP SCHEMA IF EXISTS ${quoteIdent(s)} CASCADE`);
    });
    const schema = () => {
      const s = `${run}_${schemas.length + 1}`;
      schemas.push(s);
      return s;
    };
    return { name, db, connect, schema };
  };

  if (kinds.includes("pglite")) {
    const pglite = new PGlite();
    // Starting PGlite takes ~4 s (~20 s on a loaded CI machine): paid in a hook (60 s), not in a file's first test (20 s).
    beforeAll(async () => {
      await pglite.waitReady;
    });
    const lite = createPgliteQueryable(pglite);
    out.push(make("pglite", lite, () => lite));
    cleanups.push(() => pglite.close());
  }

  const url = process.env.DATABASE_URL;
  if (url && kinds.includes("server")) {
    const pools: pg.Pool[] = [];
    const pool = () => {
      const p = new pg.Pool({ connectionString: url, max: 10 });
      pools.push(p);
      return p;
    };
    out.push(make("server", pool(), pool));
    cleanups.push(async () => {
      await Promise.all(pools.map((p) => p.end()));
    });
  }

  // Schemas first, then the connections they were dropped through.
  afterAll(async () => {
    for (const c of cleanups) await c();
  });
  return out;
}
