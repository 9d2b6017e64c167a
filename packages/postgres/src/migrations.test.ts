import pg from "pg";
import { describe, expect, it } from "vitest";
import { MIGRATIONS, migrate, type Migration } from "./migrations.js";
import type { Queryable } from "./queryable.js";
import { quoteIdent } from "./rows.js";
import { createPostgresStore } from "./store.js";
import { testDatabases } from "./test-databases.js";

const ALL = MIGRATIONS.map((m) => m.version);

async function recorded(db: Queryable, schema: string): Promise<number[]> {
  const { rows } = await db.query<{ version: string }>(`SELECT version::text AS version FROM ${quoteIdent(schema)}.schema_migrations ORDER BY version`);
  // Sorted as numbers: the text column would put 10 before 2.
  return rows.map((r) => Number(r.version)).sort((a, b) => a - b);
}

async function tables(db: Queryable, schema: string): Promise<string[]> {
  const { rows } = await db.query<{ t: string }>("SELECT table_name::text AS t FROM information_schema.tables WHERE table_schema = $1::text ORDER BY 1", [schema]);
  return rows.map((r) => r.t);
}

const databases = testDatabases("migrations");

for (const { name, db, connect, schema: newSchema } of databases) {
  describe(`postgres migrations (${name})`, () => {
    it("migrate creates the schema, applies every version once, and a re-run applies nothing", async () => {
      const schema = newSchema();
      expect(ALL).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]);
      expect(await migrate(db, { schema })).toEqual(ALL);
      expect(await migrate(db, { schema })).toEqual([]);
      expect(await recorded(db, schema)).toEqual(ALL);
      expect(await tables(db, schema)).toEqual(["agents", "auth_nonces", "auth_sessions", "charges", "dispenser_chains", "dispenser_claims", "feedback", "intents", "key_events", "key_model_spend", "keys", "schema_migrations", "transcript_rests", "usage_days", "video_jobs", "x402_nonces"]);
      const { rows } = await db.query<{ name: string }>(`SELECT name FROM ${quoteIdent(schema)}.schema_migrations WHERE version = 7`);
      expect(rows[0]?.name).toBe("intents by owner (listIntents)");
    });

    it("three concurrent migrations (separate pools on a server) apply each version exactly once", async () => {
      const schema = newSchema();
      const results = await Promise.all([connect(), connect(), connect()].map((pool) => migrate(pool, { schema })));
      expect(results.flat().sort((a, b) => a - b)).toEqual(ALL);
      expect(await recorded(db, schema)).toEqual(ALL);
      // And three stores starting together on the next schema.
      const next = newSchema();
      const stores = await Promise.all([connect(), connect(), connect()].map((pool) => createPostgresStore({ pool, schema: next })));
      expect(await recorded(db, next)).toEqual(ALL);
      await Promise.all(stores.map((s) => s.close()));
    });

    it("a failing migration is rolled back whole; earlier versions stay and a fixed re-run continues", async () => {
      const schema = newSchema();
      const good: Migration = { version: 1, name: "a", sql: "CREATE TABLE a (x integer)" };
      const bad: Migration = { version: 2, name: "b", sql: "CREATE TABLE b (x integer); SELECT no_such_function()" };
      await expect(migrate(db, { schema }, [good, bad])).rejects.toThrow(/no_such_function/);
      expect(await recorded(db, schema)).toEqual([1]);
      expect(await tables(db, schema)).toEqual(["a", "schema_migrations"]);
      expect(await migrate(db, { schema }, [good, { ...bad, sql: "CREATE TABLE b (x integer)" }])).toEqual([2]);
      expect(await tables(db, schema)).toEqual(["a", "b", "schema_migrations"]);
    });

    it("migration 15 sums the charges of a schema populated at version 14 into per-day rollups; new charges then add to them", async () => {
      const schema = newSchema();
      const q = quoteIdent(schema);
      expect(await migrate(db, { schema }, MIGRATIONS.filter((m) => m.version <= 14))).toEqual(ALL.filter((v) => v <= 14));
      const day = 86_400_000;
      const t0 = Math.floor(Date.now() / day) * day - 3 * day;
      await db.query(
        `INSERT INTO ${q}.keys (key_id, token_hash, owner, chain_id, purpose, budget_limit, budget_used, budget_reserved, created_at, expires_at)
         VALUES ('key_u', 'tok_u', 'owner_u', 8453, 'api', 1000000, 0, 0, ${t0}, ${t0 + 30 * day})`,
      );
      const charge = async (n: number, at: number, amount: number, modelId: string | null) => {
        const request = JSON.stringify(modelId === null ? { service: "s" } : { service: "s", modelId });
        await db.query(
          `INSERT INTO ${q}.intents (intent_id, key_id, owner, chain_id, status, max_amount, final_amount, released_amount, fingerprint, request, created_at, expires_at)
           VALUES ($1::text, 'key_u', 'owner_u', 8453, 'settled', $2::numeric, $2::numeric, 0, 'f', $3::json, $4::bigint, $4::bigint + 60000)`,
          [`pi_u${n}`, amount, request, at],
        );
        await db.query(
          `INSERT INTO ${q}.charges (charge_id, intent_id, key_id, owner, chain_id, amount, status, created_at)
           VALUES ($1::text, $2::text, 'key_u', 'owner_u', 8453, $3::numeric, 'queued', $4::bigint)`,
          [`ch_u${n}`, `pi_u${n}`, amount, at],
        );
      };
      await charge(1, t0 + 1, 5, "m1");
      await charge(2, t0 + 2, 7, "m1");
      await charge(3, t0 + 3, 11, null);
      await charge(4, t0 + day, 13, "m2");

      expect(await migrate(db, { schema })).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23]);
      const rollups = async () =>
        (await db.query(`SELECT day_start::text AS day, model_id, spent::text, calls::int FROM ${q}.usage_days ORDER BY day_start, model_id`)).rows;
      expect(await rollups()).toEqual([
        { day: String(t0), model_id: "", spent: "11", calls: 1 },
        { day: String(t0), model_id: "m1", spent: "12", calls: 2 },
        { day: String(t0 + day), model_id: "m2", spent: "13", calls: 1 },
      ]);
      // The trigger adds the next charge; the usage read of whole days comes from the rollups.
      await charge(5, t0 + day + 9, 17, "m2");
      const store = await createPostgresStore({ pool: db, schema, migrate: false });
      const usage = await store.usageByWallet({ wallet: "owner_u", fromMs: t0, toMs: t0 + 2 * day, now: t0 + 2 * day });
      expect(usage.cells.sort((a, b) => a.dayStart - b.dayStart || String(a.modelId).localeCompare(String(b.modelId)))).toEqual([
        { dayStart: t0, modelId: "m1", spent: 12n, calls: 2 },
        { dayStart: t0, modelId: null, spent: 11n, calls: 1 },
        { dayStart: t0 + day, modelId: "m2", spent: 30n, calls: 2 },
      ]);
      await store.close();
    });

    it("migration 13 counts each key's authorized intents of a schema populated at version 12", async () => {
      const schema = newSchema();
      const q = quoteIdent(schema);
      expect(await migrate(db, { schema }, MIGRATIONS.filter((m) => m.version <= 12))).toEqual(ALL.filter((v) => v <= 12));
      const now = Date.now();
      const key = (id: string, reserved: number) =>
        db.query(
          `INSERT INTO ${q}.keys (key_id, token_hash, owner, chain_id, purpose, budget_limit, budget_used, budget_reserved, created_at, expires_at)
           VALUES ($1::text, $2::text, 'owner_m', 8453, 'api', 1000, 0, $3::numeric, $4::bigint, $5::bigint)`,
          [id, `tok_${id}`, reserved, now, now + 86_400_000],
        );
      const intent = (id: string, keyId: string, status: string) =>
        db.query(
          `INSERT INTO ${q}.intents (intent_id, key_id, owner, chain_id, status, max_amount, released_amount, fingerprint, request, created_at, expires_at)
           VALUES ($1::text, $2::text, 'owner_m', 8453, $3::text, 10, CASE WHEN $3::text = 'authorized' THEN NULL ELSE 10 END, 'f', 'null', $4::bigint, $5::bigint)`,
          [id, keyId, status, now, now + 60_000],
        );
      await key("key_a", 30);
      await key("key_b", 0);
      await key("key_c", 0);
      for (const [i, status] of ["authorized", "settled", "authorized", "expired", "authorized", "aborted"].entries()) await intent(`pi_a${i}`, "key_a", status);
      await intent("pi_b0", "key_b", "aborted");
      await intent("pi_b1", "key_b", "expired");

      expect(await migrate(db, { schema })).toEqual([13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]);
      const { rows } = await db.query<{ key_id: string; n: string }>(`SELECT key_id, open_intents::text AS n FROM ${q}.keys ORDER BY key_id`);
      expect(rows).toEqual([
        { key_id: "key_a", n: "3" },
        { key_id: "key_b", n: "0" },
        { key_id: "key_c", n: "0" },
      ]);

      // The store goes on from the backfilled count: key_a holds 3 of 4, and a settle frees one.
      const store = await createPostgresStore({ pool: db, schema, migrate: false });
      const reserve = (intentId: string) =>
        store.reserve({ intent: { intentId, keyId: "key_a", maxAmount: 10n, fingerprint: "f", request: null, createdAt: now, expiresAt: now + 60_000 }, now, openLimit: 4 });
      expect((await reserve("pi_a_new1")).ok).toBe(true);
      expect(await reserve("pi_a_new2")).toMatchObject({ ok: false, reason: "too_many_open_intents" });
      expect((await store.settle({ intentId: "pi_a0", finalAmount: 1n, result: null, now })).ok).toBe(true);
      expect((await reserve("pi_a_new3")).ok).toBe(true);
      expect((await db.query<{ n: string }>(`SELECT open_intents::text AS n FROM ${q}.keys WHERE key_id = 'key_a'`)).rows).toEqual([{ n: "4" }]);
      await store.close();
    });

    it("migrate: false refuses a schema that is not (fully) migrated, and accepts a migrated one", async () => {
      const schema = newSchema();
      await expect(createPostgresStore({ pool: db, schema, migrate: false })).rejects.toThrow(/is not migrated/);
      await migrate(db, { schema }, MIGRATIONS.slice(0, 3));
      await expect(createPostgresStore({ pool: db, schema, migrate: false })).rejects.toThrow(/lacks migrations 4, 5, 6, 7, 8, 9, 10, 11, 12, 13/);
      await migrate(db, { schema });
      const store = await createPostgresStore({ pool: db, schema, migrate: false });
      expect(await store.getKeyById("key_none")).toBeNull();
      await store.close();
      // A passed pool stays open after close().
      expect((await db.query<{ one: string }>("SELECT '1' AS one")).rows).toEqual([{ one: "1" }]);
    });
  });
}

it("createPostgresStore reports every bad option at once", async () => {
  const pool: Queryable = { query: async () => ({ rows: [] }) };
  await expect(createPostgresStore({})).rejects.toThrow(/exactly one of `connectionString` and `pool`/);
  await expect(createPostgresStore({ connectionString: "postgres://x", pool })).rejects.toThrow(TypeError);
  const error = await createPostgresStore({ pool, poolSize: 0, schema: "", migrate: "yes" as unknown as boolean }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TypeError);
  expect(String(error)).toMatch(/poolSize.*schema.*migrate/);
  await expect(createPostgresStore({ pool: {} as Queryable })).rejects.toThrow(/query\(text, params\)/);
  await expect(migrate(pool, { schema: "" })).rejects.toThrow(TypeError);
});

const server = databases.find((d) => d.name === "server");
it.runIf(server)("a store on a connection string closes its own pool, idempotently; a bad URL fails creation; a pg.Client works", async () => {
  const url = process.env.DATABASE_URL as string;
  const schema = server!.schema();
  const store = await createPostgresStore({ connectionString: url, schema, poolSize: 2 });
  expect(await store.listAgents()).toEqual([]);
  await store.close();
  await store.close();
  await expect(store.listAgents()).rejects.toThrow(/after calling end|ended/i);
  await expect(createPostgresStore({ connectionString: "postgres://postgres@127.0.0.1:1/none" })).rejects.toThrow();

  // A single pg.Client works too: migrate sends BEGIN/COMMIT through it, and the store leaves it open.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const viaClient = await createPostgresStore({ pool: client, schema: server!.schema() });
    expect(await viaClient.revokeKey("key_none", 1)).toBeNull();
    await viaClient.close();
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  } finally {
    await client.end();
  }
});
