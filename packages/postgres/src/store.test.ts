import { MAX_AMOUNT, type KeyRecord, type Store } from "@tollgate/core";
import { describe, expect, it } from "vitest";
import { quoteIdent } from "./rows.js";
import { createPostgresStore } from "./store.js";
import { testDatabases } from "./test-databases.js";

const T0 = Date.UTC(2026, 0, 1);
const OWNER = "0x00000000000000000000000000000000000000aa";
let ids = 0;
const key = (overrides: Partial<KeyRecord> = {}): KeyRecord => ({
  keyId: `key_${++ids}`,
  tokenHash: String(ids).padStart(64, "0"),
  owner: OWNER,
  chainId: 8453,
  purpose: "api",
  budgetLimit: 1000n,
  budgetUsed: 0n,
  budgetReserved: 0n,
  createdAt: T0,
  expiresAt: T0 + 86_400_000,
  ...overrides,
});
const intent = (keyId: string, maxAmount: bigint, idempotencyKey?: string) => ({
  intentId: `pi_${++ids}`,
  keyId,
  maxAmount,
  fingerprint: "fp",
  request: { service: "s" },
  createdAt: T0,
  expiresAt: T0 + 60_000,
  ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
});

for (const { name, db, schema: newSchema } of testDatabases("store")) {
  const open = async (): Promise<[Store, string]> => {
    const schema = newSchema();
    return [await createPostgresStore({ pool: db, schema }), schema];
  };

  describe(`postgres store specifics (${name})`, () => {
    it("a 2^256-1 budget round-trips exactly, and totals beyond 2^256 stay exact", async () => {
      const [store, schema] = await open();
      expect(store.maxAmount).toBe(MAX_AMOUNT);
      const a = key({ budgetLimit: MAX_AMOUNT });
      const b = key({ budgetLimit: MAX_AMOUNT });
      await store.insertKey(a);
      await store.insertKey(b);
      const { rows } = await db.query<{ v: string }>(`SELECT budget_limit::text AS v FROM ${quoteIdent(schema)}.keys WHERE key_id = $1::text`, [a.keyId]);
      expect(rows[0]?.v).toBe("115792089237316195423570985008687907853269984665640564039457584007913129639935");

      const r = await store.reserve({ intent: intent(a.keyId, MAX_AMOUNT), now: T0 });
      expect(r).toMatchObject({ ok: true, intent: { maxAmount: MAX_AMOUNT }, key: { budgetReserved: MAX_AMOUNT } });
      const intentId = r.ok ? r.intent.intentId : "";
      const charge = { chargeId: `ch_${++ids}`, intentId, keyId: a.keyId, owner: OWNER, chainId: 8453, amount: MAX_AMOUNT - 1n, status: "queued" as const, createdAt: T0 };
      expect(await store.settle({ intentId, finalAmount: MAX_AMOUNT - 1n, result: {}, now: T0 + 1, charge })).toMatchObject({
        ok: true,
        key: { budgetUsed: MAX_AMOUNT - 1n, budgetReserved: 0n },
      });
      expect(await store.getIntent(intentId)).toMatchObject({ finalAmount: MAX_AMOUNT - 1n, releasedAmount: 1n });
      const direct = { ...charge, chargeId: `ch_${++ids}`, keyId: b.keyId, amount: MAX_AMOUNT };
      delete (direct as { intentId?: string }).intentId;
      expect(await store.chargeDirect({ keyId: b.keyId, amount: MAX_AMOUNT, now: T0, charge: direct })).toMatchObject({ ok: true, key: { budgetUsed: MAX_AMOUNT } });
      expect(await store.pendingChargeTotals(OWNER, 8453)).toEqual({ amount: 2n * MAX_AMOUNT - 1n, count: 2 });
      expect((await store.getCharge(direct.chargeId))?.amount).toBe(MAX_AMOUNT);
      expect((await store.getKeyById(b.keyId))?.budgetLimit).toBe(MAX_AMOUNT);
      await store.close();
    });

    it("text with NUL and backslashes round-trips and compares exactly (names, idempotency keys, feedback, reasons)", async () => {
      const [store] = await open();
      const odd = ["a\0b", "a\\0b", "a\\\\0b", "\\", "\0", "plain"];
      const k = key({ name: "n\0a\\me\\", budgetLimit: 100n });
      await store.insertKey(k);
      expect((await store.getKeyById(k.keyId))?.name).toBe("n\0a\\me\\");

      // Distinct strings are distinct idempotency keys; equal ones replay.
      const first = new Map<string, string>();
      for (const idem of odd) {
        const r = await store.reserve({ intent: intent(k.keyId, 1n, idem), now: T0 });
        expect(r.ok).toBe(true);
        if (r.ok) first.set(idem, r.intent.intentId);
        expect(r.ok && r.intent.idempotencyKey).toBe(idem);
      }
      for (const idem of odd) {
        const again = await store.reserve({ intent: intent(k.keyId, 1n, idem), now: T0 });
        expect(again).toMatchObject({ ok: false, reason: "idempotent_replay", intent: { intentId: first.get(idem), idempotencyKey: idem } });
      }
      const aborted = await store.abort({ intentId: first.get("plain")!, reason: "up\0stream\\", result: { message: "x\0y" }, now: T0 + 1 });
      expect(aborted).toMatchObject({ ok: true });
      expect(await store.getIntent(first.get("plain")!)).toMatchObject({ reason: "up\0stream\\", result: { message: "x\0y" } });

      for (const id of odd) {
        await store.insertFeedback({ feedbackId: `fb_${++ids}`, targetType: "model", targetId: id, category: "general", comment: `c${id}`, labels: [id], verification: "anonymous", createdAt: T0 });
      }
      for (const id of odd) {
        const list = await store.listFeedback({ type: "model", id }, { limit: 10 });
        expect(list.map((f) => [f.targetId, f.comment, f.labels])).toEqual([[id, `c${id}`, [id]]]);
      }
      await store.close();
    });

    it("a stored result replays exactly: key order and escapes are kept (json, not jsonb)", async () => {
      const [store] = await open();
      const k = key();
      await store.insertKey(k);
      const r = await store.reserve({ intent: { ...intent(k.keyId, 5n), request: { z: 1, a: [true, null], m: { y: "\u0000", b: 2 } } }, now: T0 });
      const intentId = r.ok ? r.intent.intentId : "";
      const result = { status: "settled", amount: "5", b: { d: 1, c: 2 }, a: "é\u2028" };
      await store.settle({ intentId, finalAmount: 5n, result, now: T0 + 1 });
      const read = await store.getIntent(intentId);
      expect(JSON.stringify(read?.result)).toBe(JSON.stringify(result));
      // U+0000 in a request is stored as U+FFFD (rows.ts requestJson: the charge trigger reads the request).
      expect(JSON.stringify(read?.request)).toBe(JSON.stringify({ z: 1, a: [true, null], m: { y: "\ufffd", b: 2 } }));
      await store.close();
    });

    it("the open-intent counter: intents of amount 0 expired by a refused reserve or charge free their slots; any number is a cap", async () => {
      const [store, schema] = await open();
      const counter = async (keyId: string) =>
        (await db.query<{ n: string }>(`SELECT open_intents::text AS n FROM ${quoteIdent(schema)}.keys WHERE key_id = $1::text`, [keyId])).rows[0]?.n;
      const later = T0 + 120_000;
      // A reserve refused for a revoked key, and a charge refused for its budget, still expire (and count out) zero-amount intents.
      const [revoked, poor] = [key(), key({ budgetLimit: 5n })];
      for (const k of [revoked, poor]) {
        await store.insertKey(k);
        expect((await store.reserve({ intent: intent(k.keyId, 0n), now: T0, openLimit: 1 })).ok).toBe(true);
        expect(await counter(k.keyId)).toBe("1");
      }
      await store.revokeKey(revoked.keyId, T0 + 1);
      expect(await store.reserve({ intent: intent(revoked.keyId, 1n), now: later, openLimit: 1 })).toMatchObject({ ok: false, reason: "key_revoked" });
      expect(await store.chargeDirect({ keyId: poor.keyId, amount: 6n, now: later })).toMatchObject({ ok: false, reason: "budget_exhausted" });
      expect([await counter(revoked.keyId), await counter(poor.keyId)]).toEqual(["0", "0"]);

      // "Fewer than openLimit" for any number: 1.5 lets two in, Infinity and NaN cap nothing, 0 and below refuse all.
      const k = key();
      await store.insertKey(k);
      const reserve = (openLimit: number) => store.reserve({ intent: intent(k.keyId, 1n), now: T0, openLimit });
      expect((await reserve(0)).ok ? "reserved" : "refused").toBe("refused");
      expect((await reserve(-3)).ok ? "reserved" : "refused").toBe("refused");
      for (const limit of [1.5, 1.5, Infinity, NaN, 2 ** 40]) expect((await reserve(limit)).ok).toBe(true);
      expect(await reserve(1.5)).toMatchObject({ ok: false, reason: "too_many_open_intents" });
      expect(await counter(k.keyId)).toBe("5");
      await store.close();
    });

    it("two schemas on one database are separate stores", async () => {
      const [one] = await open();
      const [two] = await open();
      const k = key();
      await one.insertKey(k);
      await two.insertKey(k);
      await one.chargeDirect({ keyId: k.keyId, amount: 7n, now: T0 });
      expect((await one.getKeyById(k.keyId))?.budgetUsed).toBe(7n);
      expect((await two.getKeyById(k.keyId))?.budgetUsed).toBe(0n);
      await Promise.all([one.close(), two.close()]);
    });
  });
}
