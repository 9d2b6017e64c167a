/**
 * Conformance tests of key governance: calendar budget windows rolled forward inside the guarded
 * steps (table-driven boundaries in UTC under explicit `now`s, a race across midnight), per-model
 * caps enforced in the same step as the key's budget, key updates with their events, and token
 * rotation. The clock is the `now` each operation takes.
 */
import { expect } from "vitest";
import { windowStart } from "@tollgate/core";
import type { BudgetPeriod, KeyBudget, KeyEventRecord, KeyRecord, Store } from "@tollgate/core";
import { addKey, DAY, makeCharge, makeIntent, mustGetKey, T0, uniq, type StoreTest } from "./store-fixtures.js";

const utc = (iso: string) => Date.parse(iso);
const YEAR = 366 * 86_400_000;

/** A key with a period whose window started at the window of `at`. */
const periodKey = (store: Store, period: BudgetPeriod, at: number, limit = 1000n, extra: Partial<KeyRecord> = {}) =>
  addKey(store, { budgetLimit: limit, budgetPeriod: period, periodStart: windowStart(period, at), createdAt: at, expiresAt: at + YEAR, ...extra });

/** Reserves and settles `amount` at `now`; asserts it fits. */
async function spend(store: Store, keyId: string, amount: bigint, now: number, scope?: { scope: string; limit: bigint }): Promise<KeyBudget> {
  const r = await store.reserve({ intent: makeIntent(keyId, amount, { createdAt: now, expiresAt: now + 60_000, ...(scope ? { budgetScope: scope } : {}) }), now });
  expect(r.ok, JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? String(v) : v))).toBe(true);
  const s = await store.settle({ intentId: r.ok ? r.intent.intentId : "", finalAmount: amount, result: {}, now });
  if (!s.ok) throw new Error(`settle failed: ${s.reason}`);
  return s.key;
}

const event = (keyId: string, at: number, changes: KeyEventRecord["changes"] = {}, type: KeyEventRecord["type"] = "update"): KeyEventRecord => ({
  eventId: `kev_${uniq()}`,
  keyId,
  at,
  type,
  actor: "wallet:0x00000000000000000000000000000000000000aa",
  changes,
});

/** Boundaries: [period, when the 900 was spent, when the next 900 is tried, whether the window rolled]. */
const BOUNDARIES: [BudgetPeriod, string, string, boolean][] = [
  ["daily", "2026-03-10T23:59:59.999Z", "2026-03-11T00:00:00.000Z", true],
  ["daily", "2026-03-10T00:00:00.000Z", "2026-03-10T23:59:59.999Z", false],
  ["monthly", "2026-01-31T23:59:59.999Z", "2026-02-01T00:00:00.000Z", true],
  ["monthly", "2026-02-01T00:00:00.000Z", "2026-02-28T23:59:59.999Z", false],
  ["monthly", "2028-02-29T12:00:00.000Z", "2028-03-01T00:00:00.000Z", true], // leap day
  ["monthly", "2028-02-01T00:00:00.000Z", "2028-02-29T23:59:59.999Z", false],
  ["weekly", "2026-03-15T23:59:59.999Z", "2026-03-16T00:00:00.000Z", true], // Sunday → Monday
  ["weekly", "2026-03-16T00:00:00.000Z", "2026-03-22T23:59:59.999Z", false], // Monday → Sunday
  ["weekly", "2026-03-18T10:00:00.000Z", "2026-03-23T00:00:00.000Z", true], // created mid-week
];

export const governanceTests = {
  "budget windows roll on the UTC calendar: the last millisecond of a month, a leap day, Monday weeks": async ({ store }) => {
    for (const [period, first, second, rolls] of BOUNDARIES) {
      const key = await periodKey(store, period, utc(first));
      expect((await spend(store, key.keyId, 900n, utc(first))).budgetUsed).toBe(900n);
      const r = await store.reserve({ intent: makeIntent(key.keyId, 900n, { createdAt: utc(second), expiresAt: utc(second) + 60_000 }), now: utc(second) });
      expect(r.ok, `${period} ${first} → ${second}`).toBe(rolls);
      if (r.ok) expect([r.key.budgetUsed, r.key.budgetReserved, r.key.periodStart]).toEqual([0n, 900n, windowStart(period, utc(second))]);
      else expect(r).toMatchObject({ reason: "budget_exhausted", key: { budgetUsed: 900n, periodStart: windowStart(period, utc(first)) } });
    }
  },

  "an idle key across several periods resets on its next use; reservations carry over; settle lands in the window it happens in": async ({ store }) => {
    const start = utc("2026-05-04T09:00:00Z");
    const key = await periodKey(store, "daily", start);
    await spend(store, key.keyId, 700n, start);
    const open = await store.reserve({ intent: makeIntent(key.keyId, 200n, { createdAt: start, expiresAt: start + 10 * 86_400_000 }), now: start });
    expect(open.ok).toBe(true);
    const later = utc("2026-05-09T08:00:00Z");
    // Five days idle: the window rolls at the next guarded step; the open 200 is still reserved.
    const settled = await store.settle({ intentId: open.ok ? open.intent.intentId : "", finalAmount: 150n, result: {}, now: later });
    expect(settled.ok && [settled.key.budgetUsed, settled.key.budgetReserved, settled.key.periodStart]).toEqual([150n, 0n, windowStart("daily", later)]);
    const charged = await store.chargeDirect({ keyId: key.keyId, amount: 850n, now: later });
    expect(charged.ok && charged.key.budgetUsed).toBe(1000n);
    expect((await store.chargeDirect({ keyId: key.keyId, amount: 1n, now: later })).ok).toBe(false);
  },

  "a key without a period never rolls": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 1000n, expiresAt: utc("2027-01-01T00:00:00Z") });
    await spend(store, key.keyId, 900n, utc("2026-01-01T10:00:00Z"));
    const r = await store.reserve({ intent: makeIntent(key.keyId, 200n), now: utc("2026-06-01T00:00:00Z") });
    expect(r).toMatchObject({ ok: false, reason: "budget_exhausted" });
    expect((await mustGetKey(store, key.keyId)).periodStart).toBeUndefined();
  },

  "concurrent reservations straddling midnight never exceed the limit in either window and lose no charge": async ({ store }) => {
    const before = utc("2026-07-01T23:59:59.990Z");
    const key = await periodKey(store, "daily", before, 1000n);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const now = before + (i % 2) * 20; // half before midnight, half after
        return store.reserve({ intent: makeIntent(key.keyId, 100n, { createdAt: now, expiresAt: now + 60_000 }), now }).then(async (r) => {
          if (!r.ok) return { now, ok: false };
          const s = await store.settle({ intentId: r.intent.intentId, finalAmount: 100n, result: {}, now, charge: makeCharge(key, 100n, { intentId: r.intent.intentId }) });
          return { now, ok: s.ok };
        });
      }),
    );
    const won = (at: number) => results.filter((r) => r.ok && r.now === at).length;
    expect(won(before)).toBeLessThanOrEqual(10);
    expect(won(before + 20)).toBeLessThanOrEqual(10);
    const after = await mustGetKey(store, key.keyId);
    expect(after.budgetReserved).toBe(0n);
    expect(after.periodStart).toBe(windowStart("daily", before + 20));
    // Every call after midnight landed in the new window (so may a late-running call from before it,
    // as with skewed clocks); the new window holds at most the limit, the old one the rest.
    expect(after.budgetUsed).toBeGreaterThanOrEqual(BigInt(won(before + 20)) * 100n);
    expect(after.budgetUsed).toBeLessThanOrEqual(1000n);
    expect(BigInt(won(before) + won(before + 20)) * 100n - after.budgetUsed).toBeLessThanOrEqual(1000n);
    const queued = await store.listQueuedCharges({ limit: 1000 });
    expect(queued.filter((c) => c.keyId === key.keyId)).toHaveLength(results.filter((r) => r.ok).length);
  },

  "a per-model cap is checked in the same step as the key budget and counts only its own scope": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 1000n, modelBudgets: { "openai/*": 300n } });
    const scope = { scope: "openai/*", limit: 300n };
    await spend(store, key.keyId, 200n, key.createdAt, scope);
    const refused = await store.reserve({ intent: makeIntent(key.keyId, 150n, { budgetScope: scope }), now: key.createdAt });
    expect(refused).toMatchObject({ ok: false, reason: "model_budget_exhausted", key: { budgetReserved: 0n, budgetUsed: 200n } });
    const open = await store.reserve({ intent: makeIntent(key.keyId, 100n, { budgetScope: scope }), now: key.createdAt });
    expect(open.ok && open.intent.budgetScope).toBe("openai/*");
    expect(await store.getModelSpend(key.keyId)).toEqual([{ keyId: key.keyId, scope: "openai/*", budgetUsed: 200n, budgetReserved: 100n }]);
    await store.abort({ intentId: open.ok ? open.intent.intentId : "", reason: "x", result: {}, now: key.createdAt });
    // Unscoped spend uses the rest of the key's budget.
    await spend(store, key.keyId, 800n, key.createdAt);
    expect(await store.getModelSpend(key.keyId)).toEqual([{ keyId: key.keyId, scope: "openai/*", budgetUsed: 200n, budgetReserved: 0n }]);
  },

  "per-model counters expire with their intents and roll with the key's window": async ({ store }) => {
    const start = utc("2026-09-01T10:00:00Z");
    const key = await periodKey(store, "daily", start, 1000n, { modelBudgets: { "gpt-4o": 100n } });
    const scope = { scope: "gpt-4o", limit: 100n };
    await store.reserve({ intent: makeIntent(key.keyId, 100n, { budgetScope: scope, createdAt: start, expiresAt: start + 1000 }), now: start });
    expect(await store.expireIntents(start + 1000, 10)).toBe(1);
    expect((await store.getModelSpend(key.keyId))[0]).toMatchObject({ budgetReserved: 0n, budgetUsed: 0n });
    await spend(store, key.keyId, 100n, start + 2000, scope);
    expect((await store.reserve({ intent: makeIntent(key.keyId, 1n, { budgetScope: scope }), now: start + 3000 })).ok).toBe(false);
    const tomorrow = start + 86_400_000;
    await spend(store, key.keyId, 100n, tomorrow, scope);
    expect((await store.getModelSpend(key.keyId))[0]).toMatchObject({ budgetUsed: 100n, periodStart: windowStart("daily", tomorrow) });
  },

  "updateKey applies a patch and records its event atomically; never below the window's used + reserved": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 1000n, name: "old", expiresAt: key0Expiry });
    await spend(store, key.keyId, 300n, key.createdAt);
    await store.reserve({ intent: makeIntent(key.keyId, 200n), now: key.createdAt });
    const low = await store.updateKey({ keyId: key.keyId, patch: { budgetLimit: 499n }, now: key.createdAt, event: event(key.keyId, key.createdAt) });
    expect(low).toMatchObject({ ok: false, reason: "below_committed", key: { budgetLimit: 1000n } });
    expect((await store.listKeyEvents(key.keyId, { limit: 10 })).events).toEqual([]);
    const ev = event(key.keyId, key.createdAt + 1, { budgetLimit: { from: "1000", to: "500" }, name: { from: "old", to: null } });
    const ok = await store.updateKey({
      keyId: key.keyId,
      patch: { budgetLimit: 500n, name: null, models: ["openai/*", "claude-sonnet-4-5"], modelBudgets: { "openai/*": 50n }, rateLimit: { requestsPerMinute: 9 } },
      now: key.createdAt + 1,
      event: ev,
    });
    expect(ok.ok).toBe(true);
    const read = await mustGetKey(store, key.keyId);
    expect(read).toMatchObject({ budgetLimit: 500n, budgetUsed: 300n, budgetReserved: 200n, models: ["openai/*", "claude-sonnet-4-5"], modelBudgets: { "openai/*": 50n }, rateLimit: { requestsPerMinute: 9 } });
    expect(read.name).toBeUndefined();
    expect(await store.getKeyByTokenHash(key.tokenHash)).toEqual(read);
    expect((await store.listKeyEvents(key.keyId, { limit: 10 })).events).toEqual([ev]);
    const cleared = await store.updateKey({ keyId: key.keyId, patch: { models: null, modelBudgets: null, rateLimit: null }, now: key.createdAt + 2, event: event(key.keyId, key.createdAt + 2) });
    expect(cleared.ok && [cleared.key.models, cleared.key.modelBudgets, cleared.key.rateLimit]).toEqual([undefined, undefined, undefined]);
    expect(await store.updateKey({ keyId: "key_unknown", patch: { name: "x" }, now: 0, event: event("key_unknown", 0) })).toEqual({ ok: false, reason: "not_found" });
  },

  "updateKey with liveLimit: a revival past the owner's live keys is too_many_keys and changes nothing; concurrent revivals never pass the cap": async ({ store }) => {
    const owner = `0x${uniq().padStart(40, "0")}`;
    const now = T0 + 2 * DAY;
    const expired = await Promise.all(Array.from({ length: 7 }, () => addKey(store, { owner, expiresAt: T0 + 1_000 })));
    const live = await addKey(store, { owner, expiresAt: now + DAY });
    const revive = (key: KeyRecord, liveLimit: number) =>
      store.updateKey({ keyId: key.keyId, patch: { expiresAt: now + DAY }, now, event: event(key.keyId, now), liveLimit });
    expect(await revive(expired[0]!, 2)).toMatchObject({ ok: true, key: { expiresAt: now + DAY } });
    await expect(revive(expired[1]!, 2)).rejects.toMatchObject({ code: "too_many_keys", details: { limit: 2 } });
    expect((await mustGetKey(store, expired[1]!.keyId)).expiresAt).toBe(T0 + 1_000);
    expect((await store.listKeyEvents(expired[1]!.keyId, { limit: 10 })).events).toEqual([]);
    // A key that is live already is not revived: the cap does not apply to its patch.
    expect((await store.updateKey({ keyId: live.keyId, patch: { expiresAt: now + 2 * DAY }, now, event: event(live.keyId, now), liveLimit: 1 })).ok).toBe(true);
    // Five revivals at once with room for two more: exactly two pass.
    const results = await Promise.allSettled(expired.slice(2).map((key) => revive(key, 4)));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
    expect(results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(["too_many_keys", "too_many_keys", "too_many_keys"]);
  },

  "adding a period to a key with spend starts a fresh window: no instant refusal": async ({ store }) => {
    const now = utc("2026-04-15T12:00:00Z");
    const key = await addKey(store, { budgetLimit: 1000n, createdAt: now, expiresAt: now + YEAR });
    await spend(store, key.keyId, 950n, now);
    const open = await store.reserve({ intent: makeIntent(key.keyId, 40n, { createdAt: now, expiresAt: now + 60_000 }), now });
    const r = await store.updateKey({ keyId: key.keyId, patch: { budgetPeriod: "monthly" }, now, event: event(key.keyId, now) });
    expect(r.ok && [r.key.budgetPeriod, r.key.periodStart, r.key.budgetUsed, r.key.budgetReserved]).toEqual(["monthly", utc("2026-04-01T00:00:00Z"), 0n, 40n]);
    expect(open.ok && (await store.reserve({ intent: makeIntent(key.keyId, 900n, { createdAt: now, expiresAt: now + 60_000 }), now })).ok).toBe(true);
    const dropped = await store.updateKey({ keyId: key.keyId, patch: { budgetPeriod: null }, now, event: event(key.keyId, now) });
    expect(dropped.ok && [dropped.key.budgetPeriod, dropped.key.periodStart, dropped.key.budgetUsed]).toEqual([undefined, undefined, 0n]);
  },

  "rotateKey swaps the token, keeps the old one findable with its grace, and keeps budget and intents": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 1000n });
    const intent = await store.reserve({ intent: makeIntent(key.keyId, 100n), now: key.createdAt });
    const fresh = "a".repeat(64);
    const ev = event(key.keyId, key.createdAt + 5, {}, "rotate");
    const rotated = await store.rotateKey({ keyId: key.keyId, tokenHash: fresh, previousValidUntil: key.createdAt + 1000, event: ev });
    expect(rotated).toMatchObject({ keyId: key.keyId, tokenHash: fresh, previousTokenHash: key.tokenHash, previousTokenValidUntil: key.createdAt + 1000, budgetReserved: 100n });
    expect((await store.getKeyByTokenHash(fresh))?.keyId).toBe(key.keyId);
    expect((await store.getKeyByTokenHash(key.tokenHash))?.keyId).toBe(key.keyId);
    expect((await store.getIntent(intent.ok ? intent.intent.intentId : ""))?.keyId).toBe(key.keyId);
    // A second rotation drops the oldest token.
    await store.rotateKey({ keyId: key.keyId, tokenHash: "b".repeat(64), previousValidUntil: key.createdAt + 2000, event: event(key.keyId, key.createdAt + 6, {}, "rotate") });
    expect(await store.getKeyByTokenHash(key.tokenHash)).toBeNull();
    expect((await store.getKeyByTokenHash(fresh))?.previousTokenValidUntil).toBe(key.createdAt + 2000);
    expect(await store.rotateKey({ keyId: "key_unknown", tokenHash: "c".repeat(64), previousValidUntil: 0, event: ev })).toBeNull();
    const page = await store.listKeyEvents(key.keyId, { limit: 1 });
    expect(page.events.map((e) => e.type)).toEqual(["rotate"]);
    expect((await store.listKeyEvents(key.keyId, { limit: 1, cursor: page.nextCursor! })).events[0]).toEqual(ev);
  },
} satisfies Record<string, StoreTest>;

const key0Expiry = Date.UTC(2027, 0, 1);
