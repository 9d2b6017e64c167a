/**
 * The PostgreSQL store's readiness probe and open-reservation count: on PGlite always, and on the
 * real server when DATABASE_URL is set; a database that is gone (a closed PGlite, a pool ended by
 * `store.close()`) is not ready.
 */
import { PGlite } from "@electric-sql/pglite";
import { createGateway } from "@tollgate/core";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "./migrations.js";
import { createPgliteQueryable } from "./pglite.js";
import { quoteIdent } from "./rows.js";
import { createPostgresStore } from "./store.js";
import { serverMissing, testDatabases } from "./test-databases.js";

const LATEST = Math.max(...MIGRATIONS.map((m) => m.version));
const OWNER = "0x00000000000000000000000000000000000000a1";

for (const database of testDatabases("readiness")) {
  describe(`PostgreSQL readiness (${database.name})`, () => {
    it("is ready with every migration recorded, and names a missing one", async () => {
      const schema = database.schema();
      const store = await createPostgresStore({ pool: database.db, schema });
      expect(await store.ready!()).toEqual({ ok: true, detail: `PostgreSQL, schema at migration ${LATEST}` });
      await database.db.query(`DELETE FROM ${quoteIdent(schema)}.schema_migrations WHERE version = $1::int`, [LATEST]);
      expect(await store.ready!()).toEqual({ ok: false, detail: `migrations ${LATEST} are not applied (run tollgate migrate)` });
      // Creation with migrate: false runs the same check.
      await expect(createPostgresStore({ pool: database.db, schema, migrate: false })).rejects.toThrow(`lacks migrations ${LATEST}`);
    });

    it("counts only the intents still holding a reservation", async () => {
      const store = await createPostgresStore({ pool: database.db, schema: database.schema() });
      const gateway = createGateway({ store, sweepIntervalMs: 0 });
      const now = Date.now();
      const { key } = await gateway.services.keys.create({ owner: OWNER, chainId: 8453, purpose: "api", budgetLimit: 1_000n, expiresAt: now + 86_400_000 });
      const prepare = () => gateway.services.ledger.prepare({ key, chainId: 8453, service: "s", action: "a", resource: "r", method: "POST", maxAmount: 10n });
      const first = await prepare();
      await prepare();
      expect(await store.countOpenIntents!(Date.now())).toBe(2);
      await gateway.services.ledger.settle({ intentId: first.intent.intentId, finalAmount: 5n });
      expect(await store.countOpenIntents!(Date.now())).toBe(1);
      // At a time past every intent's expiry, none holds a reservation any more.
      expect(await store.countOpenIntents!(Date.now() + 16 * 60_000)).toBe(0);
      await gateway.close();
    });
  });
}

const servers = testDatabases("metrics", ["server"]);
if (servers.length === 0) serverMissing("the group-commit metrics");
for (const database of servers)
  it("server: the store's group commit is on /metrics; a store that does not group (PGlite) has no such families", async () => {
    const store = await createPostgresStore({ pool: database.db, schema: database.schema() });
    const gateway = createGateway({ store, sweepIntervalMs: 0 });
    const { key } = await gateway.services.keys.create({
      owner: OWNER,
      chainId: 8453,
      purpose: "api",
      budgetLimit: 1_000n,
      expiresAt: Date.now() + 86_400_000,
    });
    await Promise.all(
      Array.from({ length: 8 }, () =>
        gateway.services.ledger.prepare({ key, chainId: 8453, service: "s", action: "a", resource: "r", method: "POST", maxAmount: 10n }),
      ),
    );
    const text = await (await gateway.fetch(new Request("http://gateway.test/metrics"))).text();
    expect(text).toMatch(/^tollgate_store_commit_groups_total 1$/m);
    expect(text).toMatch(/^tollgate_store_grouped_writes_total 8$/m);
    expect(text).toMatch(/^tollgate_store_group_retries_total 0$/m);
    expect(text).toMatch(/^tollgate_store_deadlocks_total 0$/m);
    await gateway.close();

    const lite = new PGlite();
    const plain = createGateway({ store: await createPostgresStore({ pool: createPgliteQueryable(lite) }), sweepIntervalMs: 0 });
    expect(await (await plain.fetch(new Request("http://gateway.test/metrics"))).text()).not.toMatch(/tollgate_store_commit_groups_total/);
    await plain.close();
    await lite.close();
  });

describe("PostgreSQL readiness when the database is gone", () => {
  it("a closed PGlite: /readyz answers 503 with the store check failed", async () => {
    const pglite = new PGlite();
    const store = await createPostgresStore({ pool: createPgliteQueryable(pglite) });
    const gateway = createGateway({ store, sweepIntervalMs: 0, readiness: { cacheMs: 0 }, video: { pollerIntervalMs: 0 } });
    const get = (path: string) => gateway.fetch(new Request(`http://gateway.test${path}`));
    expect((await get("/readyz")).status).toBe(200);
    await pglite.close();
    const res = await get("/readyz").then(
      async (r) => [r.status, ((await r.json()) as { error: { code: string; details: { checks: Record<string, { ok: boolean }> } } }).error] as const,
    );
    expect(res[0]).toBe(503);
    expect(res[1].code).toBe("not_ready");
    expect(res[1].details.checks.store!.ok).toBe(false);
    await gateway.close();
  });

  const url = process.env.DATABASE_URL;
  if (url)
    it("a pool the store created and ended by store.close(): ready() rejects", async () => {
      const store = await createPostgresStore({ connectionString: url, schema: `readiness_${process.pid}_${Date.now().toString(36)}` });
      expect((await store.ready!()).ok).toBe(true);
      await store.close();
      await expect(store.ready!()).rejects.toThrow();
    });
  else serverMissing("ready() after the store's own pool ended");

  if (url)
    it("a database that stops answering: /readyz names the error's code only, the log gets the whole error", async () => {
      const schema = `readiness_gone_${process.pid}_${Date.now().toString(36)}`;
      const pool = new pg.Pool({ connectionString: url, max: 1, idleTimeoutMillis: 1 });
      pool.on("error", () => {});
      const warnings: Array<{ object: Record<string, unknown>; message: string | undefined }> = [];
      const logger = { debug() {}, info() {}, warn: (object: Record<string, unknown>, message?: string) => warnings.push({ object, message }), error() {} };
      const gateway = createGateway({
        store: await createPostgresStore({ pool, schema }),
        logger,
        sweepIntervalMs: 0,
        readiness: { cacheMs: 0 },
        video: { pollerIntervalMs: 0 },
      });
      const get = (path: string) => gateway.fetch(new Request(`http://gateway.test${path}`));
      try {
        expect((await get("/readyz")).status).toBe(200);
        // Once the pool has closed its idle connection, every new one goes to a port where nothing listens.
        while (pool.totalCount > 0) await new Promise((r) => setTimeout(r, 5));
        const gone = new URL(url);
        gone.port = "1";
        pool.options.connectionString = gone.toString();
        const res = await get("/readyz");
        const text = await res.text();
        expect(res.status).toBe(503);
        const body = JSON.parse(text) as { error: { code: string; details: { checks: Record<string, { ok: boolean; detail: string }> } } };
        expect(body.error.details.checks.store).toMatchObject({ ok: false, detail: "failed: ECONNREFUSED (the server log has the error)" });
        // Anyone may call /readyz: the driver's message (address, port, user) stays in the log.
        expect(text).not.toContain(gone.hostname);
        expect(text).not.toContain(gone.username || "postgres");
        const logged = warnings.filter((w) => w.message === "readiness check failed");
        expect(logged.map((w) => w.object.check)).toEqual(["store"]);
        expect(String((logged[0]!.object.err as Error).message)).toContain(`ECONNREFUSED ${gone.hostname}:1`);
      } finally {
        await gateway.close();
        await pool.end();
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
        await admin.end();
      }
    });
  else serverMissing("readiness when the database stops answering");
});
