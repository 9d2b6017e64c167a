/**
 * Migrations wait for their locks whatever `lock_timeout` the role or the connection sets: an
 * instance starting while another migrates the same schema (holding the migrations' advisory lock)
 * waits for it instead of failing its start. On the real server only (PGlite has one connection).
 */
import { makeKey } from "@tollgate/testing";
import pg from "pg";
import { describe, it } from "vitest";
import { createPostgresStore } from "./store.js";
import { serverMissing, testDatabases } from "./test-databases.js";

const url = process.env.DATABASE_URL;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (!url) serverMissing("migration locks");
for (const { schema } of testDatabases("migrationlocks", ["server"])) {
  describe("migrations and lock_timeout", () => {
    it("a store whose connections set lock_timeout = 100 ms waits for another instance's migration lock", async () => {
      const s = schema();
      const other = new pg.Client({ connectionString: url });
      other.on("error", () => {});
      await other.connect();
      let creating: ReturnType<typeof createPostgresStore> | undefined;
      try {
        await other.query("BEGIN");
        await other.query("SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))", [0x746f6c6c, s]);
        const withTimeout = new URL(url!);
        withTimeout.searchParams.set("options", "-c lock_timeout=100");
        creating = createPostgresStore({ connectionString: withTimeout.toString(), schema: s });
        await sleep(600);
        await other.query("COMMIT");
      } finally {
        await other.end().catch(() => {});
      }
      const store = await creating!;
      await store.insertKey(makeKey());
      await store.close();
    }, 20_000);
  });
}
