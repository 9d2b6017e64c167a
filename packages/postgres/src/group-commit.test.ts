/**
 * Group commit on the real server: what one turn issues goes as one group, a failing statement
 * fails alone while the rest of its group commits, and two instances whose groups touch the same
 * keys in opposite orders never deadlock (the group's leading locks) and keep exact books.
 */
import type { KeyRecord, LedgerStore, Store } from "@tollgate/core";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createGroupCommit, type GroupCommit } from "./group-commit.js";
import { createLedgerOps } from "./ledger.js";
import { groupLocks } from "./ledger-locks.js";
import { tablesIn } from "./rows.js";
import { createPostgresStore } from "./store.js";
import { serverMissing, testDatabases } from "./test-databases.js";

const T0 = Date.UTC(2026, 0, 1);
const OWNER = "0x00000000000000000000000000000000000000dd";
let seq = 0;
const id = (prefix: string) => `${prefix}_g${++seq}`;

const databases = testDatabases("group", ["server"]);
if (databases.length === 0) serverMissing("the group-commit tests");

for (const { db, connect, schema: newSchema } of databases) {
  /** A migrated schema, its store, and a ledger of `pool` grouping through a group commit we can watch. */
  async function open(pool = db as pg.Pool, schema = newSchema()): Promise<{ store: Store; ledger: LedgerStore; group: GroupCommit; schema: string }> {
    const store = await createPostgresStore({ pool, schema, groupCommit: false });
    const group = createGroupCommit(pool, { lead: groupLocks(tablesIn(schema)) });
    return { store, ledger: createLedgerOps(pool, tablesIn(schema), group), group, schema };
  }
  const newKey = async (store: Store, budgetLimit: bigint): Promise<KeyRecord> => {
    const key: KeyRecord = {
      keyId: id("key"),
      tokenHash: id("tok"),
      owner: OWNER,
      chainId: 8453,
      purpose: "api",
      budgetLimit,
      budgetUsed: 0n,
      budgetReserved: 0n,
      createdAt: T0,
      expiresAt: T0 + 86_400_000,
    };
    await store.insertKey(key);
    return key;
  };
  const intent = (keyId: string, maxAmount: bigint, intentId = id("pi")) => ({
    intentId,
    keyId,
    maxAmount,
    fingerprint: "fp",
    request: {},
    createdAt: T0,
    expiresAt: T0 + 60_000,
  });

  describe("postgres group commit (server)", () => {
    it("the reserves of one turn commit as one group, each guarded on its own", async () => {
      const { store, ledger, group } = await open();
      const key = await newKey(store, 100n);
      // 12 reserves of 10 against a budget of 100: exactly 10 fit, in one group.
      const results = await Promise.all(Array.from({ length: 12 }, () => ledger.reserve({ intent: intent(key.keyId, 10n), now: T0 })));
      expect(group.stats).toMatchObject({ groups: 1, grouped: 12, retried: 0 });
      expect(results.filter((r) => r.ok)).toHaveLength(10);
      expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.reason)).toEqual(["budget_exhausted", "budget_exhausted"]);
      expect(await store.getKeyById(key.keyId)).toMatchObject({ budgetReserved: 100n, budgetUsed: 0n });

      // Their settles, in one group too, each with its charge.
      const settled = await Promise.all(
        results.flatMap((r) =>
          r.ok
            ? [
                ledger.settle({
                  intentId: r.intent.intentId,
                  finalAmount: 7n,
                  result: {},
                  now: T0 + 1,
                  charge: {
                    chargeId: id("ch"),
                    intentId: r.intent.intentId,
                    keyId: key.keyId,
                    owner: OWNER,
                    chainId: 8453,
                    amount: 7n,
                    status: "queued",
                    createdAt: T0 + 1,
                  },
                }),
              ]
            : [],
        ),
      );
      expect(settled.every((s) => s.ok)).toBe(true);
      expect(group.stats).toMatchObject({ groups: 2, grouped: 22, retried: 0 });
      expect(await store.getKeyById(key.keyId)).toMatchObject({ budgetReserved: 0n, budgetUsed: 70n });
    });

    it("unnamed statements (prepared: false): a group that interleaves texts is sent in runs of one text, and each caller gets its own rows", async () => {
      const group = createGroupCommit(db as pg.Pool, { prepared: false });
      const texts = ["SELECT $1::text AS v, 'a' AS kind", "SELECT $1::text AS v, 'b' AS kind, 1 AS extra", "SELECT $1::int + 1 AS v, 'c' AS kind"];
      const calls = Array.from({ length: 15 }, (_, i) => ({ text: texts[(i * 7) % 3]!, value: String(i) }));
      const answers = await Promise.all(calls.map((c) => group.query<{ v: string; kind: string }>(c.text, [c.value], {})));
      expect(group.stats).toMatchObject({ groups: 1, grouped: 15, retried: 0 });
      answers.forEach((a, i) => {
        const kind = calls[i]!.text.includes("'c'") ? "c" : calls[i]!.text.includes("'b'") ? "b" : "a";
        expect(a.rows).toEqual([{ v: kind === "c" ? String(i + 1) : String(i), kind, ...(kind === "b" ? { extra: "1" } : {}) }]);
      });
    });

    it("a statement that fails takes down only itself: the group rolls back and each runs alone", async () => {
      const { store, ledger, group } = await open();
      const key = await newKey(store, 1000n);
      const taken = intent(key.keyId, 5n);
      expect((await ledger.reserve({ intent: taken, now: T0 })).ok).toBe(true);
      // The third reuses an existing intent id: its INSERT violates the primary key.
      const outcomes = await Promise.allSettled(
        [5n, 6n, 7n, 8n].map((amount, i) => ledger.reserve({ intent: intent(key.keyId, amount, i === 2 ? taken.intentId : undefined), now: T0 })),
      );
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
      expect(String((outcomes[2] as PromiseRejectedResult).reason)).toMatch(/intents_pkey|duplicate key/);
      expect(group.stats.retried).toBe(1);
      // 5 + 5 + 6 + 8: the failed 7 reserved nothing, and nothing was reserved twice.
      expect(await store.getKeyById(key.keyId)).toMatchObject({ budgetReserved: 24n });
    });

    it("close() answers the ledger calls already issued before it ends the pool", async () => {
      const { store, schema } = await open();
      const key = await newKey(store, 1000n);
      const own = await createPostgresStore({ connectionString: process.env.DATABASE_URL!, schema });
      const calls = Array.from({ length: 8 }, () => own.reserve({ intent: intent(key.keyId, 10n), now: T0 }));
      await own.close();
      expect((await Promise.all(calls)).every((r) => r.ok)).toBe(true);
      expect(await store.getKeyById(key.keyId)).toMatchObject({ budgetReserved: 80n });
    });

    it("a group whose backend is terminated (a server restart) rolled back: its statements run alone on a new connection", async () => {
      const { store, ledger, group, schema } = await open();
      const key = await newKey(store, 1000n);
      const blocker = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await blocker.connect();
      try {
        // Hold the key's row so that the group waits in its leading lock statement.
        await blocker.query("BEGIN");
        await blocker.query(`SELECT 1 FROM ${tablesIn(schema)("keys")} WHERE key_id = $1 FOR UPDATE`, [key.keyId]);
        const calls = Array.from({ length: 3 }, () => ledger.reserve({ intent: intent(key.keyId, 10n), now: T0 }));
        // Another session watches (outside a transaction, each query sees pg_stat_activity afresh).
        const watcher = new pg.Client({ connectionString: process.env.DATABASE_URL });
        await watcher.connect();
        let pid: number | undefined;
        try {
          for (const started = Date.now(); pid === undefined && Date.now() - started < 20_000;) {
            const { rows } = await watcher.query<{ pid: number }>(
              `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
              [`%${tablesIn(schema)("intents")}%FOR NO KEY UPDATE%`],
            );
            pid = rows[0]?.pid;
            if (pid === undefined) await new Promise((r) => setTimeout(r, 10));
          }
        } finally {
          await watcher.end();
        }
        expect(pid, "the group waits for the key").toBeDefined();
        await blocker.query("SELECT pg_terminate_backend($1)", [pid]);
        await blocker.query("ROLLBACK");
        expect((await Promise.all(calls)).every((r) => r.ok)).toBe(true);
        expect(group.stats.retried).toBe(1);
        expect(await store.getKeyById(key.keyId)).toMatchObject({ budgetReserved: 30n });
      } finally {
        await blocker.end();
      }
    }, 30_000);

    it("a prepared statement dropped under the store: that group runs alone, and the next ones prepare it again", async () => {
      const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
      try {
        const { store, ledger, group } = await open(pool);
        const key = await newKey(store, 10n ** 9n);
        const round = async (now: number) => {
          const reserved = await Promise.all(Array.from({ length: 4 }, () => ledger.reserve({ intent: intent(key.keyId, 10n), now })));
          const settled = await Promise.all(
            reserved.map((r) =>
              r.ok ? ledger.settle({ intentId: r.intent.intentId, finalAmount: 4n, result: {}, now }) : Promise.reject(new Error(r.reason)),
            ),
          );
          expect(settled.every((s) => s.ok)).toBe(true);
        };
        await round(T0);
        // The reserve's statement (the one with the idempotency CTE) goes; the finishing one stays.
        const client = await pool.connect();
        try {
          const { rows } = await client.query<{ name: string }>(
            `SELECT name FROM pg_prepared_statements WHERE name LIKE 'tollgate_s%g' AND statement LIKE '%idem AS%'`,
          );
          expect(rows).toHaveLength(1);
          await client.query(`DEALLOCATE ${rows[0]!.name}`);
        } finally {
          client.release();
        }
        await round(T0 + 1); // Bind fails (26000): the group runs alone, its connection is replaced, and the next groups prepare again
        await round(T0 + 2);
        expect(group.stats).toMatchObject({ groups: 6, retried: 1 });
        expect(await store.getKeyById(key.keyId)).toMatchObject({ budgetReserved: 0n, budgetUsed: 48n });
      } finally {
        await pool.end();
      }
    });

    it("two instances grouping reserves and settles on shared keys in opposite orders never deadlock, and the books balance", async () => {
      const schema = newSchema();
      const a = await open(db as pg.Pool, schema);
      const other = connect() as pg.Pool;
      const b = await open(other, schema);
      const keys = await Promise.all(Array.from({ length: 6 }, () => newKey(a.store, 10n ** 9n)));
      const rounds = 40;
      let calls = 0;
      const run = async (ledger: LedgerStore, order: readonly KeyRecord[], round: number) => {
        // One turn: a reserve on every key (in this instance's order), then every settle in one turn.
        const reserved = await Promise.all(order.map((k) => ledger.reserve({ intent: intent(k.keyId, 100n), now: T0 + round })));
        await Promise.all(
          reserved.map((r, i) => {
            if (!r.ok) throw new Error(`reserve refused: ${r.reason}`);
            calls++;
            const keyId = order[i]!.keyId;
            return ledger.settle({
              intentId: r.intent.intentId,
              finalAmount: 30n,
              result: {},
              now: T0 + round,
              charge: {
                chargeId: id("ch"),
                intentId: r.intent.intentId,
                keyId,
                owner: OWNER,
                chainId: 8453,
                amount: 30n,
                status: "queued",
                createdAt: T0 + round,
              },
            });
          }),
        ).then((settled) => expect(settled.every((s) => s.ok)).toBe(true));
      };
      const forward = keys;
      const backward = [...keys].reverse();
      await Promise.all([
        (async () => {
          for (let r = 0; r < rounds; r++) await run(a.ledger, forward, r);
        })(),
        (async () => {
          for (let r = 0; r < rounds; r++) await run(b.ledger, backward, r);
        })(),
      ]);
      expect(calls).toBe(2 * rounds * keys.length);
      expect(a.group.stats.groups + b.group.stats.groups).toBeGreaterThanOrEqual(4 * rounds - 4);
      expect(a.group.stats.deadlocks + b.group.stats.deadlocks).toBe(0);
      expect(a.group.stats.retried + b.group.stats.retried).toBe(0);
      for (const k of keys) expect(await a.store.getKeyById(k.keyId)).toMatchObject({ budgetReserved: 0n, budgetUsed: BigInt(2 * rounds * 30) });
      const { rows } = await db.query<{ n: string; total: string }>(`SELECT count(*)::text AS n, sum(amount)::text AS total FROM "${schema}".charges`);
      expect(rows[0]).toEqual({ n: String(calls), total: String(calls * 30) });
    });
  });
}
