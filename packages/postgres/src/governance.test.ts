/**
 * PostgreSQL specifics of key governance beyond the conformance suite: the hot statements handing
 * over to the full ones when a key has overdue scoped intents, per-model counters released in
 * the same statement as their intents (reserve on the same scope, sweeper, release on read), the
 * first use of a scope raced, free text in scopes and events, and a mixed concurrent workload.
 */
import { prng } from "@tollgate/testing";
import { windowStart, type KeyRecord, type NewIntent, type Store } from "@tollgate/core";
import { describe, expect, it } from "vitest";
import { createPostgresStore } from "./store.js";
import { testDatabases } from "./test-databases.js";

const T0 = Date.UTC(2026, 2, 10, 9);
const DAY = 86_400_000;
const OWNER = "0x00000000000000000000000000000000000000dd";
let ids = 0;
const key = (overrides: Partial<KeyRecord> = {}): KeyRecord => ({
  keyId: `key_${++ids}`,
  tokenHash: `gov${ids}`.padStart(64, "0"),
  owner: OWNER,
  chainId: 8453,
  purpose: "api",
  budgetLimit: 1000n,
  budgetUsed: 0n,
  budgetReserved: 0n,
  createdAt: T0,
  expiresAt: T0 + 365 * DAY,
  ...overrides,
});
const intent = (keyId: string, maxAmount: bigint, at: number, extra: Partial<NewIntent> = {}): NewIntent => ({
  intentId: `pi_${++ids}`,
  keyId,
  maxAmount,
  fingerprint: "fp",
  request: {},
  createdAt: at,
  expiresAt: at + 1000,
  ...extra,
});
const event = (keyId: string, at: number, changes = {}) => ({ eventId: `kev_${++ids}`, keyId, at, type: "update" as const, actor: "wallet:x", changes });
const spendOf = async (store: Store, keyId: string) => (await store.getModelSpend(keyId)).map((s) => [s.scope, s.budgetUsed, s.budgetReserved]);

for (const { name, db, schema } of testDatabases("governance")) {
  const open = () => createPostgresStore({ pool: db, schema: schema() });

  describe(`postgres key governance (${name})`, () => {
    it("an unscoped reserve or charge on a key with overdue scoped intents releases them and their counters first", async () => {
      const store = await open();
      const k = key({ budgetLimit: 100n });
      await store.insertKey(k);
      const scope = { scope: "openai/*", limit: 100n };
      const a = await store.reserve({ intent: intent(k.keyId, 80n, T0, { budgetScope: scope }), now: T0 });
      expect(a.ok).toBe(true);
      // 100 fits only once the overdue 80 is released.
      const b = await store.reserve({ intent: intent(k.keyId, 100n, T0 + 2000), now: T0 + 2000 });
      expect(b).toMatchObject({ ok: true, key: { budgetReserved: 100n } });
      expect((await store.getIntent(a.ok ? a.intent.intentId : ""))?.status).toBe("expired");
      expect(await spendOf(store, k.keyId)).toEqual([["openai/*", 0n, 0n]]);
      await store.abort({ intentId: b.ok ? b.intent.intentId : "", reason: "x", result: {}, now: T0 + 2000 });

      await store.reserve({ intent: intent(k.keyId, 70n, T0 + 3000, { budgetScope: scope }), now: T0 + 3000 });
      expect(await store.chargeDirect({ keyId: k.keyId, amount: 100n, now: T0 + 5000 })).toMatchObject({
        ok: true,
        key: { budgetUsed: 100n, budgetReserved: 0n },
      });
      expect(await spendOf(store, k.keyId)).toEqual([["openai/*", 0n, 0n]]);
      await store.close();
    });

    it("a scoped reserve releases an overdue intent of its own scope and of others in the same statement, also when it is refused", async () => {
      const store = await open();
      const k = key();
      await store.insertKey(k);
      const gpt = { scope: "gpt-4o", limit: 100n };
      const claude = { scope: "anthropic/*", limit: 50n };
      await store.reserve({ intent: intent(k.keyId, 60n, T0, { budgetScope: gpt }), now: T0 });
      await store.reserve({ intent: intent(k.keyId, 50n, T0, { budgetScope: claude }), now: T0 });
      const refused = await store.reserve({ intent: intent(k.keyId, 101n, T0 + 2000, { budgetScope: gpt }), now: T0 + 2000 });
      expect(refused).toMatchObject({ ok: false, reason: "model_budget_exhausted", key: { budgetReserved: 0n } });
      expect(await spendOf(store, k.keyId)).toEqual([
        ["anthropic/*", 0n, 0n],
        ["gpt-4o", 0n, 0n],
      ]);

      await store.reserve({ intent: intent(k.keyId, 60n, T0 + 3000, { budgetScope: gpt }), now: T0 + 3000 });
      await store.reserve({ intent: intent(k.keyId, 50n, T0 + 3000, { budgetScope: claude }), now: T0 + 3000 });
      const ok = await store.reserve({ intent: intent(k.keyId, 100n, T0 + 5000, { budgetScope: gpt }), now: T0 + 5000 });
      expect(ok).toMatchObject({ ok: true, key: { budgetReserved: 100n } });
      expect(await spendOf(store, k.keyId)).toEqual([
        ["anthropic/*", 0n, 0n],
        ["gpt-4o", 0n, 100n],
      ]);
      // The key's own guard is reported before the scope's.
      expect(await store.reserve({ intent: intent(k.keyId, 901n, T0 + 5000, { budgetScope: claude }), now: T0 + 5000 })).toMatchObject({
        reason: "budget_exhausted",
      });
      await store.close();
    });

    it("the sweeper and release on read move the counters and roll their window", async () => {
      const store = await open();
      const k = key({ budgetPeriod: "daily", periodStart: windowStart("daily", T0) });
      await store.insertKey(k);
      const scope = { scope: "gpt-4o", limit: 100n };
      const spent = await store.reserve({ intent: intent(k.keyId, 40n, T0, { budgetScope: scope }), now: T0 });
      await store.settle({ intentId: spent.ok ? spent.intent.intentId : "", finalAmount: 40n, result: {}, now: T0 });
      await store.reserve({ intent: intent(k.keyId, 30n, T0, { budgetScope: scope }), now: T0 });
      await store.reserve({ intent: intent(k.keyId, 20n, T0, { budgetScope: scope, expiresAt: T0 + 3 * DAY }), now: T0 });
      expect(await store.expireIntents(T0 + 2 * DAY, 10)).toBe(1);
      const later = await store.getModelSpend(k.keyId);
      expect(later).toEqual([{ keyId: k.keyId, scope: "gpt-4o", budgetUsed: 0n, budgetReserved: 20n, periodStart: windowStart("daily", T0 + 2 * DAY) }]);
      expect(await store.getKeyById(k.keyId)).toMatchObject({ budgetUsed: 0n, budgetReserved: 20n, periodStart: windowStart("daily", T0 + 2 * DAY) });
      expect(await store.releaseOverdueIntents([k.keyId], T0 + 4 * DAY)).toBe(1);
      expect(await spendOf(store, k.keyId)).toEqual([["gpt-4o", 0n, 0n]]);
      await store.close();
    });

    it("concurrent first uses of a scope: exactly the cap is reserved", async () => {
      const store = await open();
      const k = key();
      await store.insertKey(k);
      const scope = { scope: "openai/*", limit: 100n };
      const results = await Promise.all(Array.from({ length: 20 }, () => store.reserve({ intent: intent(k.keyId, 10n, T0, { budgetScope: scope }), now: T0 })));
      expect(results.filter((r) => r.ok)).toHaveLength(10);
      expect(results.filter((r) => !r.ok).every((r) => r.reason === "model_budget_exhausted")).toBe(true);
      expect(await spendOf(store, k.keyId)).toEqual([["openai/*", 0n, 100n]]);
      expect((await store.getKeyById(k.keyId))?.budgetReserved).toBe(100n);
      await store.close();
    });

    it("scopes, models, names and event changes with NUL and backslashes round-trip", async () => {
      const store = await open();
      const odd = "m\0o\\del";
      const k = key({ models: [odd, "openai/*"], modelBudgets: { [odd]: 5n, "\\": 7n } });
      await store.insertKey(k);
      expect(await store.getKeyById(k.keyId)).toMatchObject({ models: [odd, "openai/*"], modelBudgets: { [odd]: 5n, "\\": 7n } });
      const r = await store.reserve({ intent: intent(k.keyId, 5n, T0, { budgetScope: { scope: odd, limit: 5n } }), now: T0 });
      expect(r.ok && r.intent.budgetScope).toBe(odd);
      expect((await store.getIntent(r.ok ? r.intent.intentId : ""))?.budgetScope).toBe(odd);
      expect(await spendOf(store, k.keyId)).toEqual([[odd, 0n, 5n]]);
      const ev = event(k.keyId, T0, { name: { from: null, to: "a\0b\\" } });
      expect(await store.updateKey({ keyId: k.keyId, patch: { name: "a\0b\\" }, now: T0, event: ev })).toMatchObject({ ok: true, key: { name: "a\0b\\" } });
      expect((await store.listKeyEvents(k.keyId, { limit: 5 })).events).toEqual([ev]);
      await store.close();
    });

    it("updateKey counts a lapsed window as used 0 and restarts the counters when the period changes", async () => {
      const store = await open();
      const k = key({ budgetPeriod: "daily", periodStart: windowStart("daily", T0) });
      await store.insertKey(k);
      const scope = { scope: "gpt-4o", limit: 900n };
      const r = await store.reserve({ intent: intent(k.keyId, 900n, T0, { budgetScope: scope }), now: T0 });
      await store.settle({ intentId: r.ok ? r.intent.intentId : "", finalAmount: 900n, result: {}, now: T0 });
      expect(await store.updateKey({ keyId: k.keyId, patch: { budgetLimit: 100n }, now: T0, event: event(k.keyId, T0) })).toMatchObject({
        ok: false,
        reason: "below_committed",
      });
      const next = T0 + DAY;
      expect(await store.updateKey({ keyId: k.keyId, patch: { budgetLimit: 100n }, now: next, event: event(k.keyId, next) })).toMatchObject({
        ok: true,
        key: { budgetLimit: 100n, budgetUsed: 0n, periodStart: windowStart("daily", next) },
      });
      // The counters roll lazily; a period change restarts them at once.
      expect(await spendOf(store, k.keyId)).toEqual([["gpt-4o", 900n, 0n]]);
      await store.updateKey({ keyId: k.keyId, patch: { budgetPeriod: "monthly" }, now: next, event: event(k.keyId, next) });
      expect(await store.getModelSpend(k.keyId)).toEqual([
        { keyId: k.keyId, scope: "gpt-4o", budgetUsed: 0n, budgetReserved: 0n, periodStart: windowStart("monthly", next) },
      ]);
      await store.close();
    });

    it("a token that is current for one key wins over the same token kept as another key's previous", async () => {
      const store = await open();
      const a = key();
      await store.insertKey(a);
      await store.rotateKey({ keyId: a.keyId, tokenHash: "f".repeat(64), previousValidUntil: T0 + 1000, event: { ...event(a.keyId, T0), type: "rotate" } });
      expect((await store.getKeyByTokenHash(a.tokenHash))?.keyId).toBe(a.keyId);
      const b = key({ tokenHash: a.tokenHash });
      await store.insertKey(b);
      expect((await store.getKeyByTokenHash(a.tokenHash))?.keyId).toBe(b.keyId);
      await store.close();
    });

    it("mixed concurrent scoped and unscoped operations keep every counter exact and never deadlock", async () => {
      const store = await open();
      const random = prng(20260310);
      const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
      const scopes = [
        { scope: "gpt-4o", limit: 150n },
        { scope: "anthropic/*", limit: 100n },
      ];
      const keys = [key({ budgetLimit: 300n }), key({ budgetLimit: 200n })];
      for (const k of keys) await store.insertKey(k);
      const direct = new Map<string, bigint>();
      const ops = Array.from({ length: 240 }, () => {
        const k = keys[int(0, 1)]!;
        const now = T0 + int(0, 3000);
        const roll = random();
        if (roll < 0.45) {
          const scope = random() < 0.75 ? scopes[int(0, 1)] : undefined;
          const final = BigInt(int(0, 10));
          return async () => {
            const r = await store.reserve({
              intent: intent(k.keyId, BigInt(int(5, 20)), now, { expiresAt: now + int(0, 8) * 250, ...(scope ? { budgetScope: scope } : {}) }),
              now,
            });
            if (!r.ok) return;
            if (random() < 0.6) await store.settle({ intentId: r.intent.intentId, finalAmount: final, result: {}, now: now + int(0, 1500) });
            else if (random() < 0.5) await store.abort({ intentId: r.intent.intentId, reason: "x", result: {}, now: now + int(0, 1500) });
          };
        }
        if (roll < 0.6)
          return async () => {
            const amount = BigInt(int(1, 5));
            const r = await store.chargeDirect({ keyId: k.keyId, amount, now });
            if (r.ok) direct.set(k.keyId, (direct.get(k.keyId) ?? 0n) + amount);
          };
        if (roll < 0.75) return () => store.expireIntents(now, int(1, 4));
        if (roll < 0.85) return () => store.releaseOverdueIntents([k.keyId], now);
        if (roll < 0.95)
          return () =>
            store.updateKey({
              keyId: k.keyId,
              patch: { budgetLimit: k.budgetLimit + BigInt(int(0, 50)), name: `n${int(0, 9)}` },
              now,
              event: event(k.keyId, now),
            });
        return () =>
          store.rotateKey({
            keyId: k.keyId,
            tokenHash: `rot${++ids}`.padStart(64, "0"),
            previousValidUntil: now + 1000,
            event: { ...event(k.keyId, now), type: "rotate" as const },
          });
      });
      await Promise.all(ops.map((op) => op()));
      await store.expireIntents(T0 + 1_000_000, 1_000_000);
      const intents = (await store.listIntents(OWNER, { limit: 10_000 })).intents;
      for (const k of keys) {
        const mine = intents.filter((i) => i.keyId === k.keyId);
        const settledIn = (scope?: string) =>
          mine.filter((i) => i.status === "settled" && (scope === undefined || i.budgetScope === scope)).reduce((s, i) => s + i.finalAmount!, 0n);
        expect(await store.getKeyById(k.keyId)).toMatchObject({ budgetReserved: 0n, budgetUsed: settledIn() + (direct.get(k.keyId) ?? 0n) });
        for (const s of await store.getModelSpend(k.keyId)) {
          expect([s.budgetReserved, s.budgetUsed]).toEqual([0n, settledIn(s.scope)]);
          expect(s.budgetUsed <= scopes.find((x) => x.scope === s.scope)!.limit).toBe(true);
        }
      }
      expect(intents.some((i) => i.budgetScope && i.status === "expired")).toBe(true);
      await store.close();
    });
  });
}
