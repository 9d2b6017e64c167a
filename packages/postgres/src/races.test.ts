/**
 * Beyond the conformance races: every ledger operation at once, on shared keys, with clocks up to
 * 4 s apart (as between instances), so statements lock overlapping intents and keys in every
 * interleaving. This would surface a deadlock (a statement would fail) or a lost update (the books
 * below would not balance). Real server only: PGlite runs one statement at a time.
 */
import { prng } from "@tollgate/testing";
import type { ChargeRecord, IntentRecord, KeyRecord, Store } from "@tollgate/core";
import { expect, it } from "vitest";
import type { Queryable } from "./queryable.js";
import { quoteIdent } from "./rows.js";
import { createPostgresStore } from "./store.js";
import { serverMissing, testDatabases } from "./test-databases.js";

const T0 = Date.UTC(2026, 0, 1);
const OWNER = "0x00000000000000000000000000000000000000cc";
const OPS = 400;

async function allIntents(store: Store): Promise<IntentRecord[]> {
  const out: IntentRecord[] = [];
  let cursor: { createdAt: number; intentId: string } | null = null;
  do {
    const page: Awaited<ReturnType<Store["listIntents"]>> = await store.listIntents(OWNER, { limit: 100, ...(cursor ? { cursor } : {}) });
    out.push(...page.intents);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/** Each key's open-intent counter and its number of authorized intents, by key id. */
async function openCounts(db: Queryable, schema: string): Promise<Record<string, [string, string]>> {
  const q = quoteIdent(schema);
  const { rows } = await db.query<{ key_id: string; counter: string; open: string }>(
    `SELECT k.key_id, k.open_intents::text AS counter, (SELECT count(*) FROM ${q}.intents i WHERE i.key_id = k.key_id AND i.status = 'authorized')::text AS open
     FROM ${q}.keys k ORDER BY k.key_id`,
  );
  return Object.fromEntries(rows.map((r) => [r.key_id, [r.counter, r.open]]));
}

const databases = testDatabases("races", ["server"]);
if (databases.length === 0) serverMissing("the real-server race test");

for (const { name, db, connect, schema } of databases) {
  it(`${name}: ${OPS} mixed concurrent ledger operations with skewed clocks keep exact books`, async () => {
    const schemaName = schema();
    const store = await createPostgresStore({ pool: db, schema: schemaName });
    const random = prng(20260101);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
    let seq = 0;
    const id = (prefix: string) => `${prefix}_${name}_${++seq}`;

    const keys: KeyRecord[] = [];
    for (let i = 0; i < 4; i++) {
      const key: KeyRecord = { keyId: id("key"), tokenHash: id("tok"), owner: OWNER, chainId: 8453, purpose: "api", budgetLimit: 400n, budgetUsed: 0n, budgetReserved: 0n, createdAt: T0, expiresAt: T0 + (i === 3 ? 2000 : 10_000) };
      await store.insertKey(key);
      keys.push(key);
    }
    const intentOf = (keyId: string, max: bigint, now: number, idem?: string) => ({
      intentId: id("pi"),
      keyId,
      maxAmount: max,
      fingerprint: "fp",
      request: {},
      createdAt: now,
      expiresAt: now + int(0, 18) * 250,
      ...(idem === undefined ? {} : { idempotencyKey: idem }),
    });
    const existing: string[] = [];
    const keyOf = new Map<string, string>();
    for (const key of keys) {
      for (let i = 0; i < 15; i++) {
        const r = await store.reserve({ intent: intentOf(key.keyId, BigInt(int(1, 20)), T0), now: T0 });
        if (r.ok) existing.push(r.intent.intentId);
        if (r.ok) keyOf.set(r.intent.intentId, key.keyId);
      }
    }

    const settled = new Map<string, bigint>();
    const direct = new Map<string, bigint>();
    const charged: bigint[] = [];
    const ops = Array.from({ length: OPS }, () => {
      const now = T0 + int(0, 4000);
      const key = pick(keys);
      const roll = random();
      if (roll < 0.3) {
        const idem = random() < 0.3 ? `idem-${int(0, 4)}` : undefined;
        const cap = random() < 0.5 ? { openLimit: int(5, 20) } : {};
        return () => store.reserve({ intent: intentOf(key.keyId, BigInt(int(1, 25)), now, idem), now, ...cap });
      }
      if (roll < 0.5) {
        const intentId = pick(existing);
        const final = BigInt(int(0, 20));
        const charge: ChargeRecord = { chargeId: id("ch"), intentId, keyId: keyOf.get(intentId)!, owner: OWNER, chainId: 8453, amount: final, status: "queued", createdAt: now };
        return async () => {
          const r = await store.settle({ intentId, finalAmount: final, result: { final: String(final) }, now, charge });
          if (r.ok) {
            expect(settled.has(intentId)).toBe(false);
            settled.set(intentId, final);
            if (final > 0n) charged.push(final);
          }
          return r;
        };
      }
      if (roll < 0.6) return () => store.abort({ intentId: pick(existing), reason: "race", result: {}, now });
      if (roll < 0.75) {
        const amount = BigInt(int(1, 10));
        const charge: ChargeRecord = { chargeId: id("ch"), keyId: key.keyId, owner: OWNER, chainId: 8453, amount, status: "queued", createdAt: now };
        return async () => {
          const r = await store.chargeDirect({ keyId: key.keyId, amount, now, charge });
          if (r.ok) {
            direct.set(key.keyId, (direct.get(key.keyId) ?? 0n) + amount);
            charged.push(amount);
          }
          return r;
        };
      }
      if (roll < 0.87) return () => store.expireIntents(now, int(1, 5));
      if (roll < 0.99) return () => store.getIntent(pick(existing), now);
      return () => store.revokeKey(key.keyId, now);
    });
    // Every operation must complete: a deadlock or a lost race would reject.
    await Promise.all(ops.map((op) => op()));
    // Every way in and out of `authorized` moved the open-intent counters exactly.
    const counts = await openCounts(db, schemaName);
    for (const [counter, open] of Object.values(counts)) expect(counter).toBe(open);
    expect(Object.values(counts).some(([, open]) => open !== "0")).toBe(true);
    await store.expireIntents(T0 + 1_000_000, 1_000_000);
    for (const [counter] of Object.values(await openCounts(db, schemaName))) expect(counter).toBe("0");

    const intents = await allIntents(store);
    // The mix did exercise every path.
    expect(settled.size).toBeGreaterThan(0);
    expect(direct.size).toBeGreaterThan(0);
    expect(intents.filter((i) => i.status === "expired").length).toBeGreaterThan(0);
    expect(intents.filter((i) => i.status === "aborted").length).toBeGreaterThan(0);
    for (const key of keys) {
      const read = (await store.getKeyById(key.keyId))!;
      const mine = intents.filter((i) => i.keyId === key.keyId);
      const fromIntents = mine.reduce((sum, i) => sum + (i.status === "settled" ? i.finalAmount! : 0n), 0n);
      expect(read.budgetReserved).toBe(0n);
      expect(read.budgetUsed).toBe(fromIntents + (direct.get(key.keyId) ?? 0n));
      expect(read.budgetUsed <= read.budgetLimit).toBe(true);
      // One intent per idempotency key.
      const idems = mine.flatMap((i) => (i.idempotencyKey ? [i.idempotencyKey] : []));
      expect(new Set(idems).size).toBe(idems.length);
    }
    for (const i of intents) {
      expect(i.status).not.toBe("authorized");
      if (i.status === "settled") expect([i.finalAmount, i.releasedAmount]).toEqual([settled.get(i.intentId), i.maxAmount - settled.get(i.intentId)!]);
      else expect(i.releasedAmount).toBe(i.maxAmount);
    }
    expect(await store.pendingChargeTotals(OWNER, 8453)).toEqual({ amount: charged.reduce((a, b) => a + b, 0n), count: charged.length });
    await store.close();
  });

  // An UPDATE checks CHECK constraints on the row computed from the version its snapshot saw,
  // before it moves to the newer one: a guarded step must not compute the key's counters from
  // that version (releases committed meanwhile made it fuller than the locked one).
  it(`${name}: reserves racing releases at the budget limit, with token rotations, never fail a constraint`, async () => {
    const store = await createPostgresStore({ pool: db, schema: schema() });
    const key: KeyRecord = { keyId: "key_edge", tokenHash: "tok_edge", owner: OWNER, chainId: 8453, purpose: "api", budgetLimit: 100n, budgetUsed: 0n, budgetReserved: 0n, createdAt: T0, expiresAt: T0 + 1e9 };
    await store.insertKey(key);
    let n = 0;
    let won = 0;
    const until = Date.now() + 1500;
    const worker = async () => {
      while (Date.now() < until) {
        const r = await store.reserve({ intent: { intentId: `pi_edge_${++n}`, keyId: key.keyId, maxAmount: 30n, fingerprint: "fp", request: {}, createdAt: T0, expiresAt: T0 + 1e8 }, now: T0 });
        if (!r.ok) continue;
        won++;
        if (n % 2 === 0) await store.settle({ intentId: r.intent.intentId, finalAmount: 0n, result: {}, now: T0 });
        else await store.abort({ intentId: r.intent.intentId, reason: "x", result: {}, now: T0 });
      }
    };
    const rotate = async () => {
      for (let i = 0; Date.now() < until; i++) {
        await store.rotateKey({ keyId: key.keyId, tokenHash: `tok_edge_${i}`, previousValidUntil: T0, event: { eventId: `kev_edge_${i}`, keyId: key.keyId, at: T0, type: "rotate", actor: "key:x", changes: {} } });
      }
    };
    await Promise.all([...Array.from({ length: 8 }, worker), rotate()]);
    expect(won).toBeGreaterThan(10);
    expect(await store.getKeyById(key.keyId)).toMatchObject({ budgetReserved: 0n, budgetUsed: 0n });
    await store.close();
  });

  it(`${name}: two instances (two pools, one with group commit) share a key's open-intent cap exactly`, async () => {
    const schemaName = schema();
    const stores = [await createPostgresStore({ pool: connect(), schema: schemaName }), await createPostgresStore({ pool: connect(), schema: schemaName, groupCommit: false })];
    const key: KeyRecord = { keyId: "key_cap", tokenHash: "tok_cap", owner: OWNER, chainId: 8453, purpose: "api", budgetLimit: 10n ** 9n, budgetUsed: 0n, budgetReserved: 0n, createdAt: T0, expiresAt: T0 + 1e9 };
    await stores[0]!.insertKey(key);
    let n = 0;
    const reserve = (i: number) => {
      const intentId = `pi_cap_${++n}`;
      return stores[i % 2]!.reserve({ intent: { intentId, keyId: key.keyId, maxAmount: 5n, fingerprint: "fp", request: {}, createdAt: T0, expiresAt: T0 + 1e8 }, now: T0, openLimit: 10 });
    };
    const first = await Promise.all(Array.from({ length: 40 }, (_, i) => reserve(i)));
    const winners = first.flatMap((r) => (r.ok ? [r.intent.intentId] : []));
    expect(winners).toHaveLength(10);
    expect(first.filter((r) => !r.ok && r.reason === "too_many_open_intents")).toHaveLength(30);

    // The ten finish (settled on one instance, aborted on the other) while forty more race for the freed slots.
    const second = await Promise.all([
      ...winners.map((intentId, i) =>
        i % 2 === 0 ? stores[1]!.settle({ intentId, finalAmount: 1n, result: {}, now: T0 }) : stores[0]!.abort({ intentId, reason: "race", result: {}, now: T0 }),
      ),
      ...Array.from({ length: 40 }, (_, i) => reserve(i)),
    ]);
    expect(second.slice(0, 10).every((r) => r.ok)).toBe(true);
    const won = second.slice(10).filter((r) => "intent" in r && r.ok).length;
    expect(won).toBeGreaterThan(0);
    expect(won).toBeLessThanOrEqual(10);
    expect(await openCounts(db, schemaName)).toEqual({ key_cap: [String(won), String(won)] });
    expect(await stores[0]!.getKeyById(key.keyId)).toMatchObject({ budgetReserved: BigInt(5 * won), budgetUsed: 5n });
    await Promise.all(stores.map((s) => s.close()));
  });
}
