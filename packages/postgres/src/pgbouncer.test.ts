/**
 * The store behind a real PgBouncer in transaction mode (Debian's, started here in front of
 * DATABASE_URL's server): with `preparedStatements: false` the whole conformance suite passes, with
 * group commit and without; with named prepared statements the pooler hands a connection's
 * statements to server connections that never prepared them (PgBouncer before 1.21), which is why
 * the option exists.
 */
import { makeIntent, makeKey, runStoreConformance } from "@tollgate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresStore } from "./store.js";
import { serverMissing, testDatabases } from "./test-databases.js";
import { PGBOUNCER_BIN, startPgBouncer, type PgBouncer } from "./test-pgbouncer.js";

const [server] = testDatabases("pgbouncer", ["server"]);

if (!server) serverMissing("the PostgreSQL store behind PgBouncer");
else if (!PGBOUNCER_BIN) {
  if (process.env.CI)
    it("the PostgreSQL store behind PgBouncer needs pgbouncer", () => {
      throw new Error("pgbouncer is not installed, and CI must run this test: apt-get install pgbouncer (or set PGBOUNCER_BIN)");
    });
  else it.skip("the PostgreSQL store behind PgBouncer (skipped: pgbouncer is not installed; apt-get install pgbouncer)", () => {});
} else {
  let bouncer: PgBouncer;
  beforeAll(async () => {
    bouncer = await startPgBouncer(process.env.DATABASE_URL!);
  });
  afterAll(() => bouncer?.stop());

  for (const groupCommit of [true, false])
    runStoreConformance(`postgres behind PgBouncer (transaction mode, unnamed statements, group commit ${groupCommit ? "on" : "off"})`, {
      create: () => createPostgresStore({ connectionString: bouncer.url, schema: server.schema(), preparedStatements: false, groupCommit }),
    });

  describe("PgBouncer in transaction mode", () => {
    const reserves = async (preparedStatements: boolean, groupCommit: boolean) => {
      const store = await createPostgresStore({ connectionString: bouncer.url, schema: server.schema(), preparedStatements, groupCommit });
      const key = makeKey({ budgetLimit: 10n ** 9n });
      await store.insertKey(key);
      // Sequential ones, then concurrent ones (in groups, or each on a connection of the pool).
      const results = [];
      for (let i = 0; i < 5; i++) results.push(await store.reserve({ intent: makeIntent(key.keyId, 3n), now: key.createdAt }).catch((e: unknown) => e));
      results.push(
        ...(await Promise.all(
          Array.from({ length: 60 }, () => store.reserve({ intent: makeIntent(key.keyId, 3n), now: key.createdAt }).catch((e: unknown) => e)),
        )),
      );
      const stats = store.groupCommitStats?.();
      const reserved = (await store.getKeyById(key.keyId))?.budgetReserved;
      await store.close();
      return { results, stats, reserved };
    };

    it("unnamed statements: 65 reserves alone and in groups all commit, exactly once each", async () => {
      const { results, stats, reserved } = await reserves(false, true);
      expect(results.filter((r) => (r as { ok?: boolean }).ok === true)).toHaveLength(65);
      expect(reserved).toBe(65n * 3n);
      expect(stats!.groups).toBeGreaterThan(0);
    });

    it("named prepared statements (the default) fail there: the pool's connections share server connections that prepared other names", async () => {
      const { results, reserved } = await reserves(true, false);
      const failed = results.filter((r): r is Error => r instanceof Error);
      expect(failed.length).toBeGreaterThan(0);
      for (const e of failed) expect(e.message).toMatch(/prepared statement "tollgate_s\d+_\d+g?" (already exists|does not exist)/);
      // What failed was not written: the key holds exactly what the successes reserved.
      expect(reserved).toBe(BigInt(results.length - failed.length) * 3n);
    });
  });
}
