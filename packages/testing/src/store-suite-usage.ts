/**
 * Conformance tests of {@link UsageStore}: a wallet's charges by UTC day and by model, and the
 * budget its open reservations hold. The day and model views are also checked through the core
 * usage service, so every store yields the same answer of `GET /api/usage`.
 */
import { expect } from "vitest";
import { createUsageService } from "@tollgate/core";
import type { KeyRecord, Store, UsageCell } from "@tollgate/core";
import { addKey, CHAIN, DAY, makeCharge, makeIntent, OTHER_OWNER, OWNER, T0, type StoreTest } from "./store-fixtures.js";

/** Keys of these tests live long and hold a lot, so any charge below fits. */
const LONG = { budgetLimit: 1n << 62n, expiresAt: T0 + 400 * DAY };

/**
 * Charges `amount` on `key` at `at`: through an intent whose request records `modelId` (reserve
 * and settle, as the ledger does), or, with `modelId` undefined, through the legacy direct charge
 * (no intent, so no model). A `request` overrides the intent's request.
 */
async function spend(store: Store, key: KeyRecord, amount: bigint, at: number, modelId?: string | null, request?: unknown): Promise<void> {
  const charge = makeCharge(key, amount, { createdAt: at });
  if (modelId === undefined && request === undefined) {
    const r = await store.chargeDirect({ keyId: key.keyId, amount, now: at, charge });
    if (!r.ok) throw new Error(`chargeDirect failed: ${r.reason}`);
    return;
  }
  const intent = makeIntent(key.keyId, amount, {
    createdAt: at,
    expiresAt: at + DAY,
    request: request ?? { service: "inference", action: "test", ...(modelId === null ? {} : { modelId }) },
  });
  const reserved = await store.reserve({ intent, now: at });
  if (!reserved.ok) throw new Error(`reserve failed: ${reserved.reason}`);
  const settled = await store.settle({
    intentId: intent.intentId,
    finalAmount: amount,
    result: undefined,
    now: at,
    charge: { ...charge, intentId: intent.intentId },
  });
  if (!settled.ok) throw new Error(`settle failed: ${settled.reason}`);
}

/** Cells in a fixed order (by day, then model with null last), for comparison. */
const sorted = (cells: UsageCell[]) =>
  [...cells].sort(
    (a, b) => a.dayStart - b.dayStart || (a.modelId === b.modelId ? 0 : a.modelId === null ? 1 : b.modelId === null ? -1 : a.modelId < b.modelId ? -1 : 1),
  );

/** The usage answer of `OWNER` at `now`, through the core service. */
const view = (store: Store, now: number, query: { from?: string; to?: string; chainId?: number } = {}) =>
  createUsageService({ store, clock: { now: () => now } }).forWallet(OWNER, query);

export const usageTests = {
  "charges fall on the UTC day of createdAt: 23:59:59.999 and the next 00:00 are two days; the range is [fromMs, toMs)": async ({ store }) => {
    const key = await addKey(store, LONG);
    await spend(store, key, 1n, T0 - 1, "m"); // Dec 31, 23:59:59.999: before the range
    await spend(store, key, 2n, T0, "m"); // Jan 1, 00:00:00.000: the first instant in range
    await spend(store, key, 4n, T0 + DAY - 1, "m"); // Jan 1, 23:59:59.999
    await spend(store, key, 8n, T0 + DAY, "m"); // Jan 2, 00:00:00.000
    await spend(store, key, 16n, T0 + 2 * DAY, "m"); // Jan 3, 00:00: toMs itself is excluded
    const usage = await store.usageByWallet({ wallet: OWNER, fromMs: T0, toMs: T0 + 2 * DAY, now: T0 + 3 * DAY });
    expect(sorted(usage.cells)).toEqual([
      { dayStart: T0, modelId: "m", spent: 6n, calls: 2 },
      { dayStart: T0 + DAY, modelId: "m", spent: 8n, calls: 1 },
    ]);
    expect(usage.reserved).toBe(0n);
    // Through the service: inclusive days, the same buckets.
    const v = await view(store, T0 + 3 * DAY, { from: "2025-12-31", to: "2026-01-03" });
    expect(v.days).toEqual([
      { date: "2025-12-31", spent: "1", calls: 1 },
      { date: "2026-01-01", spent: "6", calls: 2 },
      { date: "2026-01-02", spent: "8", calls: 1 },
      { date: "2026-01-03", spent: "16", calls: 1 },
    ]);
    expect(v.totals).toEqual({ spent: "31", calls: 5, reserved: "0" });
  },

  "a range of any bounds is exact: whole days and the parts of a day at its ends, over several keys and models": async ({ store }) => {
    const [a, b] = [await addKey(store, LONG), await addKey(store, LONG)];
    const charges: Array<{ at: number; amount: bigint; modelId: string | null }> = [];
    const times = [T0 - 1, T0, T0 + 5, T0 + DAY / 2, T0 + DAY - 1, T0 + DAY, T0 + DAY + 7, T0 + 2 * DAY - 3, T0 + 2 * DAY, T0 + 3 * DAY + 1];
    for (const [n, at] of times.entries()) {
      const modelId = n % 3 === 0 ? null : n % 3 === 1 ? "m1" : "m2";
      const amount = BigInt(10 + n);
      await spend(store, n % 2 ? a : b, amount, at, modelId ?? undefined);
      charges.push({ at, amount, modelId });
    }
    // The cells a range must give, summed from the charges above.
    const expected = (fromMs: number, toMs: number) => {
      const cells = new Map<string, UsageCell>();
      for (const c of charges.filter((x) => x.at >= fromMs && x.at < toMs)) {
        const dayStart = Math.floor(c.at / DAY) * DAY;
        const slot = `${dayStart}/${c.modelId}`;
        const cell = cells.get(slot) ?? { dayStart, modelId: c.modelId, spent: 0n, calls: 0 };
        cells.set(slot, { ...cell, spent: cell.spent + c.amount, calls: cell.calls + 1 });
      }
      return sorted([...cells.values()]);
    };
    const ranges: Array<[number, number]> = [
      [T0, T0 + 3 * DAY], // whole days
      [T0 + 3, T0 + 2 * DAY - 2], // a part of a day at each end
      [T0 + 1, T0 + DAY / 2 + 1], // within one day
      [T0 - DAY, T0 + DAY + 8], // a whole day before, a part after
      [T0 + DAY, T0 + DAY], // empty
    ];
    for (const [fromMs, toMs] of ranges) {
      const usage = await store.usageByWallet({ wallet: OWNER, fromMs, toMs, now: T0 + 5 * DAY });
      expect(sorted(usage.cells), `[${fromMs - T0}, ${toMs - T0})`).toEqual(expected(fromMs, toMs));
    }
  },

  "every day of the range is listed, zero-filled; an empty wallet answers zeros": async ({ store }) => {
    const key = await addKey(store, LONG);
    const now = T0 + 9 * DAY + 5000; // Jan 10
    expect(await store.usageByWallet({ wallet: OWNER, fromMs: T0, toMs: T0 + 10 * DAY, now })).toEqual({ cells: [], reserved: 0n });
    const empty = await view(store, now);
    expect(empty).toMatchObject({ wallet: OWNER, from: "2025-12-12", to: "2026-01-10", models: [], totals: { spent: "0", calls: 0, reserved: "0" } });
    expect(empty.days).toHaveLength(30);
    expect(empty.days.every((d) => d.spent === "0" && d.calls === 0)).toBe(true);
    await spend(store, key, 5n, T0 + 2 * DAY + 7, "m");
    await spend(store, key, 7n, T0 + 6 * DAY, "m");
    const v = await view(store, now, { from: "2026-01-02", to: "2026-01-08" });
    expect(v.days.map((d) => [d.date, d.spent, d.calls])).toEqual([
      ["2026-01-02", "0", 0],
      ["2026-01-03", "5", 1],
      ["2026-01-04", "0", 0],
      ["2026-01-05", "0", 0],
      ["2026-01-06", "0", 0],
      ["2026-01-07", "7", 1],
      ["2026-01-08", "0", 0],
    ]);
  },

  "charges group by the model their intent recorded; models order by spent desc, then modelId, null last": async ({ store }) => {
    const key = await addKey(store, LONG);
    await spend(store, key, 300n, T0 + 1, "b-model");
    await spend(store, key, 200n, T0 + DAY, "b-model");
    await spend(store, key, 500n, T0 + 2, "a-model"); // ties b-model: modelId decides
    await spend(store, key, 900n, T0 + 3, "c-model");
    await spend(store, key, 250n, T0 + 4); // direct charge: no intent, no model
    await spend(store, key, 150n, T0 + DAY + 5, null); // an intent that recorded no model
    await spend(store, key, 100n, T0 + DAY + 6, null, { service: "inference", modelId: 42 }); // not a string: no model
    const usage = await store.usageByWallet({ wallet: OWNER, fromMs: T0, toMs: T0 + 2 * DAY, now: T0 + 2 * DAY });
    expect(sorted(usage.cells)).toEqual([
      { dayStart: T0, modelId: "a-model", spent: 500n, calls: 1 },
      { dayStart: T0, modelId: "b-model", spent: 300n, calls: 1 },
      { dayStart: T0, modelId: "c-model", spent: 900n, calls: 1 },
      { dayStart: T0, modelId: null, spent: 250n, calls: 1 },
      { dayStart: T0 + DAY, modelId: "b-model", spent: 200n, calls: 1 },
      { dayStart: T0 + DAY, modelId: null, spent: 250n, calls: 2 },
    ]);
    const v = await view(store, T0 + DAY, { from: "2026-01-01", to: "2026-01-02" });
    expect(v.models).toEqual([
      { modelId: "c-model", spent: "900", calls: 1 },
      { modelId: "a-model", spent: "500", calls: 1 },
      { modelId: "b-model", spent: "500", calls: 2 },
      { modelId: null, spent: "500", calls: 3 },
    ]);
    expect(v.totals).toEqual({ spent: "2400", calls: 7, reserved: "0" });
  },

  "chainId keeps only the charges and reservations of keys on that chain": async ({ store }) => {
    const base = await addKey(store, LONG);
    const mainnet = await addKey(store, { ...LONG, chainId: 1 });
    await spend(store, base, 10n, T0 + 1, "m");
    await spend(store, mainnet, 20n, T0 + 2, "m");
    await store.reserve({ intent: makeIntent(base.keyId, 3n, { expiresAt: T0 + DAY }), now: T0 + 3 });
    await store.reserve({ intent: makeIntent(mainnet.keyId, 4n, { expiresAt: T0 + DAY }), now: T0 + 3 });
    const range = { wallet: OWNER, fromMs: T0, toMs: T0 + DAY, now: T0 + 10 };
    expect(await store.usageByWallet({ ...range, chainId: CHAIN })).toEqual({ cells: [{ dayStart: T0, modelId: "m", spent: 10n, calls: 1 }], reserved: 3n });
    expect(await store.usageByWallet({ ...range, chainId: 1 })).toEqual({ cells: [{ dayStart: T0, modelId: "m", spent: 20n, calls: 1 }], reserved: 4n });
    expect(await store.usageByWallet({ ...range, chainId: 10 })).toEqual({ cells: [], reserved: 0n });
    expect(await store.usageByWallet(range)).toEqual({ cells: [{ dayStart: T0, modelId: "m", spent: 30n, calls: 2 }], reserved: 7n });
  },

  "another wallet's charges and reservations are never counted": async ({ store }) => {
    const mine = await addKey(store, LONG);
    const theirs = await addKey(store, { ...LONG, owner: OTHER_OWNER });
    await spend(store, theirs, 1000n, T0 + 1, "m");
    await spend(store, theirs, 1000n, T0 + 2);
    await store.reserve({ intent: makeIntent(theirs.keyId, 77n, { expiresAt: T0 + DAY }), now: T0 + 3 });
    const range = { fromMs: T0, toMs: T0 + DAY, now: T0 + 10 };
    expect(await store.usageByWallet({ wallet: OWNER, ...range })).toEqual({ cells: [], reserved: 0n });
    await spend(store, mine, 5n, T0 + 4, "m");
    expect(await store.usageByWallet({ wallet: OWNER, ...range })).toEqual({ cells: [{ dayStart: T0, modelId: "m", spent: 5n, calls: 1 }], reserved: 0n });
    expect(await store.usageByWallet({ wallet: OTHER_OWNER, ...range })).toMatchObject({ reserved: 77n });
  },

  "open reservations count in reserved (not in spent); settled, aborted, expired and overdue ones do not": async ({ store }) => {
    const key = await addKey(store, LONG);
    const open = makeIntent(key.keyId, 300n, { createdAt: T0, expiresAt: T0 + 10 * DAY });
    const settled = makeIntent(key.keyId, 200n, { createdAt: T0, expiresAt: T0 + 10 * DAY });
    const aborted = makeIntent(key.keyId, 100n, { createdAt: T0, expiresAt: T0 + 10 * DAY });
    const overdue = makeIntent(key.keyId, 50n, { createdAt: T0, expiresAt: T0 + DAY });
    const swept = makeIntent(key.keyId, 25n, { createdAt: T0, expiresAt: T0 + DAY / 2 });
    for (const intent of [open, settled, aborted, overdue, swept]) expect((await store.reserve({ intent, now: T0 })).ok).toBe(true);
    const at = (now: number) => store.usageByWallet({ wallet: OWNER, fromMs: T0 - 30 * DAY, toMs: T0 + 30 * DAY, now });
    expect(await at(T0 + 1)).toEqual({ cells: [], reserved: 675n });

    expect(
      (
        await store.settle({
          intentId: settled.intentId,
          finalAmount: 120n,
          result: undefined,
          now: T0 + 2,
          charge: makeCharge(key, 120n, { intentId: settled.intentId, createdAt: T0 + 2 }),
        })
      ).ok,
    ).toBe(true);
    expect((await store.abort({ intentId: aborted.intentId, reason: "test", result: undefined, now: T0 + 3 })).ok).toBe(true);
    expect(await at(T0 + 4)).toEqual({ cells: [{ dayStart: T0, modelId: null, spent: 120n, calls: 1 }], reserved: 375n });
    // The sweeper expires one; the other is only past its expiry (still stored as authorized).
    expect(await store.expireIntents(T0 + DAY / 2, 10)).toBe(1);
    expect(await at(T0 + DAY / 2)).toMatchObject({ reserved: 350n });
    expect(await at(T0 + DAY)).toMatchObject({ reserved: 300n });
    expect((await store.getIntent(overdue.intentId))?.status).toBe("authorized");
    // A reservation counts whenever it was made: `reserved` is now, not in the range.
    expect(await store.usageByWallet({ wallet: OWNER, fromMs: T0 + 5 * DAY, toMs: T0 + 6 * DAY, now: T0 + DAY })).toEqual({ cells: [], reserved: 300n });
  },

  "a revoked or expired key's reservation counts until its intent is overdue; keys revoked or expired long ago hold none": async ({ store }) => {
    // An intent outlives its key's revocation or expiry by up to MAX_INTENT_LIFETIME_MS (7 days).
    const now = T0 + 40 * DAY;
    const hold = async (key: KeyRecord, amount: bigint, at: number, lifetime: number) =>
      expect((await store.reserve({ intent: makeIntent(key.keyId, amount, { createdAt: at, expiresAt: at + lifetime }), now: at })).ok).toBe(true);
    const revokedLately = await addKey(store, LONG);
    await hold(revokedLately, 11n, now - 7 * DAY + 3_600_000 - 1, 7 * DAY); // open until an hour after now
    await store.revokeKey(revokedLately.keyId, now - 7 * DAY + 3_600_000);
    const expiredLately = await addKey(store, { ...LONG, expiresAt: now - 6 * DAY });
    await hold(expiredLately, 13n, now - 6 * DAY - 1, 7 * DAY); // open until a day after now
    const revokedLongAgo = await addKey(store, LONG);
    await hold(revokedLongAgo, 100n, now - 30 * DAY, DAY); // overdue, never swept
    await store.revokeKey(revokedLongAgo.keyId, now - 30 * DAY + 1);
    const expiredLongAgo = await addKey(store, { ...LONG, expiresAt: now - 20 * DAY });
    await hold(expiredLongAgo, 200n, now - 20 * DAY - 1, DAY); // overdue, never swept
    const live = await addKey(store, LONG);
    await hold(live, 17n, now - 1, 2 * DAY);
    const at = (t: number) => store.usageByWallet({ wallet: OWNER, fromMs: T0, toMs: T0 + DAY, now: t });
    expect(await at(now)).toEqual({ cells: [], reserved: 41n });
    expect((await view(store, now)).totals.reserved).toBe("41");
    expect(await at(now + DAY)).toEqual({ cells: [], reserved: 17n });
  },

  "charges count whatever their on-chain settlement status": async ({ store }) => {
    const key = await addKey(store, LONG);
    await spend(store, key, 11n, T0 + 1, "m");
    await spend(store, key, 22n, T0 + 2, "m");
    const claimed = await store.claimCharges({ batchId: "run_u", now: T0 + 3, leaseMs: 60_000, limit: 1 });
    expect(await store.completeCharges({ chargeIds: claimed.map((c) => c.chargeId), batchId: "run_u", txHash: "0xabc", now: T0 + 4 })).toBe(1);
    expect(await store.usageByWallet({ wallet: OWNER, fromMs: T0, toMs: T0 + DAY, now: T0 + 5 })).toEqual({
      cells: [{ dayStart: T0, modelId: "m", spent: 33n, calls: 2 }],
      reserved: 0n,
    });
  },

  "amounts beyond 2^53 and sums beyond 2^63 are exact": async ({ store }) => {
    const big = (1n << 62n) + (1n << 32n) - 1n; // low 32 bits all set: the halves of a sum carry
    const keys = await Promise.all([0, 1, 2].map(() => addKey(store, { budgetLimit: big, expiresAt: T0 + 400 * DAY })));
    for (const [i, key] of keys.entries()) await spend(store, key, big, T0 + i, "m");
    const odd = await addKey(store, { budgetLimit: 1n << 60n, expiresAt: T0 + 400 * DAY });
    await spend(store, odd, (1n << 53n) + 1n, T0 + 5, "m"); // not a double
    await spend(store, odd, (1n << 53n) + 1n, T0 + DAY, "m");
    const holders = await Promise.all([0, 1, 2].map(() => addKey(store, { budgetLimit: big, expiresAt: T0 + 400 * DAY })));
    for (const key of holders) expect((await store.reserve({ intent: makeIntent(key.keyId, big, { expiresAt: T0 + 10 * DAY }), now: T0 })).ok).toBe(true);
    const usage = await store.usageByWallet({ wallet: OWNER, fromMs: T0, toMs: T0 + 2 * DAY, now: T0 + 1 });
    expect(sorted(usage.cells)).toEqual([
      { dayStart: T0, modelId: "m", spent: 3n * big + (1n << 53n) + 1n, calls: 4 },
      { dayStart: T0 + DAY, modelId: "m", spent: (1n << 53n) + 1n, calls: 1 },
    ]);
    expect(usage.reserved).toBe(3n * big);
    const v = await view(store, T0 + DAY, { from: "2026-01-01", to: "2026-01-02" });
    expect(v.totals).toEqual({ spent: (3n * big + (1n << 54n) + 2n).toString(), calls: 5, reserved: (3n * big).toString() });
    expect(v.totals.spent).toBe("13853072466676547583"); // above 2^63
  },
} satisfies Record<string, StoreTest>;
