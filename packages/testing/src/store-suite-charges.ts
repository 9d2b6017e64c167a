/** Conformance tests of {@link ChargeStore}: the queue that batch settlement drains. */
import { expect } from "vitest";
import type { ChargeRecord, KeyRecord, Store } from "@tollgate/core";
import { addKey, makeCharge, OTHER_OWNER, T0, type StoreTest } from "./store-fixtures.js";

/** Queues `n` direct charges of 1..n on `key`, created one millisecond apart. */
async function queueCharges(store: Store, key: KeyRecord, n: number, amount = (i: number) => BigInt(i + 1)): Promise<ChargeRecord[]> {
  const out: ChargeRecord[] = [];
  for (let i = 0; i < n; i++) {
    const charge = makeCharge(key, amount(i), { createdAt: T0 + i });
    const r = await store.chargeDirect({ keyId: key.keyId, amount: charge.amount, now: T0 + i, charge });
    if (!r.ok) throw new Error(`chargeDirect failed: ${r.reason}`);
    out.push(charge);
  }
  return out;
}

const ids = (charges: readonly ChargeRecord[]) => charges.map((c) => c.chargeId);

export const chargeTests = {
  "listQueuedCharges returns queued charges oldest first, up to limit": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 10_000n });
    const queued = await queueCharges(store, key, 6);
    expect(await store.listQueuedCharges({ limit: 4 })).toEqual(queued.slice(0, 4));
    expect(ids(await store.listQueuedCharges({ limit: 100 }))).toEqual(ids(queued));
  },

  "two concurrent claims partition the queue": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 10_000n });
    const queued = await queueCharges(store, key, 30);
    const [a, b] = await Promise.all([
      store.claimCharges({ batchId: "run_a", now: T0 + 100, leaseMs: 60_000, limit: 20 }),
      store.claimCharges({ batchId: "run_b", now: T0 + 100, leaseMs: 60_000, limit: 20 }),
    ]);
    expect(a.length + b.length).toBe(30);
    expect(new Set([...ids(a), ...ids(b)])).toEqual(new Set(ids(queued)));
    for (const [batch, batchId] of [[a, "run_a"], [b, "run_b"]] as const) {
      for (const c of batch) expect(c).toMatchObject({ status: "queued", batchId, leaseUntil: T0 + 100 + 60_000 });
      // Each claim takes the oldest free charges, in order.
      expect(batch.map((c) => c.createdAt)).toEqual([...batch.map((c) => c.createdAt)].sort((x, y) => x - y));
    }
    expect(await store.claimCharges({ batchId: "run_c", now: T0 + 200, leaseMs: 60_000, limit: 20 })).toEqual([]);
    // Leased charges are still pending and still listed as queued.
    expect(await store.pendingChargeTotals(key.owner, key.chainId)).toEqual({ amount: 465n, count: 30 });
  },

  "completeCharges settles only the charges its batch holds": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 10_000n });
    const queued = await queueCharges(store, key, 5);
    const claimed = await store.claimCharges({ batchId: "run_a", now: T0 + 10, leaseMs: 1000, limit: 3 });
    expect(ids(claimed)).toEqual(ids(queued.slice(0, 3)));
    const [first, second, third, fourth] = ids(queued) as [string, string, string, string];
    // A charge of another batch (or none) is left alone.
    expect(await store.completeCharges({ chargeIds: [first, second, fourth], batchId: "run_b", txHash: "0xbad", now: T0 + 20 })).toBe(0);
    expect(await store.completeCharges({ chargeIds: [first, second, fourth], batchId: "run_a", txHash: "0xabc", now: T0 + 20 })).toBe(2);
    expect(await store.getCharge(first)).toEqual({ ...queued[0], status: "settled", txHash: "0xabc", batchId: "run_a", settledAt: T0 + 20 });
    expect(await store.getCharge(fourth)).toEqual(queued[3]);
    expect(ids(await store.listQueuedCharges({ limit: 10 }))).toEqual([third, fourth, ids(queued)[4]]);
    expect(await store.pendingChargeTotals(key.owner, key.chainId)).toEqual({ amount: 12n, count: 3 });
    // Settled charges are final.
    expect(await store.completeCharges({ chargeIds: [first], batchId: "run_a", txHash: "0xdef", now: T0 + 30 })).toBe(0);
    expect(await store.failCharges({ chargeIds: [first], batchId: "run_a", error: "late" })).toBe(0);
    expect((await store.getCharge(first))?.txHash).toBe("0xabc");
  },

  "failCharges returns the batch's charges to the free queue with the error": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 10_000n });
    const queued = await queueCharges(store, key, 3);
    await store.claimCharges({ batchId: "run_a", now: T0 + 10, leaseMs: 60_000, limit: 10 });
    expect(await store.failCharges({ chargeIds: ids(queued), batchId: "run_b", error: "not mine" })).toBe(0);
    expect(await store.failCharges({ chargeIds: ids(queued).slice(0, 2), batchId: "run_a", error: "insufficient allowance" })).toBe(2);
    expect(await store.getCharge(ids(queued)[0] as string)).toEqual({ ...queued[0], error: "insufficient allowance" });
    const again = await store.claimCharges({ batchId: "run_b", now: T0 + 20, leaseMs: 60_000, limit: 10 });
    expect(ids(again)).toEqual(ids(queued).slice(0, 2));
    expect(again[0]).toMatchObject({ batchId: "run_b", error: "insufficient allowance" });
  },

  "failCharges with retryAt: no claim takes the charges before it, and other charges go first": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 10_000n });
    const queued = await queueCharges(store, key, 4);
    await store.claimCharges({ batchId: "run_a", now: T0 + 10, leaseMs: 60_000, limit: 2 });
    expect(await store.failCharges({ chargeIds: ids(queued).slice(0, 2), batchId: "run_a", error: "reverted", retryAt: T0 + 5_000 })).toBe(2);
    // The two oldest wait: a batch before retryAt takes the younger ones.
    expect(ids(await store.claimCharges({ batchId: "run_b", now: T0 + 20, leaseMs: 60_000, limit: 10 }))).toEqual(ids(queued).slice(2));
    expect(await store.claimCharges({ batchId: "run_c", now: T0 + 4_999, leaseMs: 1_000, limit: 10 })).toEqual([]);
    const later = await store.claimCharges({ batchId: "run_d", now: T0 + 5_000, leaseMs: 1_000, limit: 10 });
    expect(ids(later)).toEqual(ids(queued).slice(0, 2));
    expect(later[0]).toMatchObject({ batchId: "run_d", error: "reverted" });
    expect(await store.pendingChargeTotals(key.owner, key.chainId)).toEqual({ amount: 10n, count: 4 });
  },

  "a claim takes charges that never failed before those a batch failed, each oldest first": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 10_000n });
    const queued = await queueCharges(store, key, 5);
    await store.claimCharges({ batchId: "run_a", now: T0 + 10, leaseMs: 60_000, limit: 2 });
    expect(await store.failCharges({ chargeIds: ids(queued).slice(0, 2), batchId: "run_a", error: "reverted" })).toBe(2);
    const next = await store.claimCharges({ batchId: "run_b", now: T0 + 20, leaseMs: 60_000, limit: 4 });
    expect(new Set(ids(next))).toEqual(new Set([...ids(queued).slice(2), ids(queued)[0]]));
  },

  "among charges a batch failed, the least recently failed go first (the oldest do not keep the others out)": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 10_000n });
    const [oldest, younger] = ids(await queueCharges(store, key, 2)) as [string, string];
    await store.claimCharges({ batchId: "run_a", now: T0 + 10, leaseMs: 60_000, limit: 2 });
    // The younger charge failed first, the oldest later (each `retryAt` is when it failed).
    expect(await store.failCharges({ chargeIds: [younger], batchId: "run_a", error: "rpc down", retryAt: T0 + 20 })).toBe(1);
    expect(await store.failCharges({ chargeIds: [oldest], batchId: "run_a", error: "reverted", retryAt: T0 + 30 })).toBe(1);
    expect(ids(await store.claimCharges({ batchId: "run_b", now: T0 + 40, leaseMs: 60_000, limit: 1 }))).toEqual([younger]);
  },

  "claimCharges with chainIds takes only charges on those chains": async ({ store }) => {
    const onBase = await addKey(store, { budgetLimit: 10_000n, chainId: 8453 });
    const onOther = await addKey(store, { budgetLimit: 10_000n, chainId: 31337, owner: OTHER_OWNER });
    const other = await queueCharges(store, onOther, 3);
    const base = await queueCharges(store, onBase, 2);
    expect(ids(await store.claimCharges({ batchId: "run_a", now: T0 + 10, leaseMs: 60_000, limit: 10, chainIds: [8453] }))).toEqual(ids(base));
    expect(await store.claimCharges({ batchId: "run_b", now: T0 + 10, leaseMs: 60_000, limit: 10, chainIds: [1] })).toEqual([]);
    expect(ids(await store.claimCharges({ batchId: "run_c", now: T0 + 10, leaseMs: 60_000, limit: 10 }))).toEqual(ids(other));
  },

  "a lapsed lease can be claimed by another batch; the old batch can no longer complete": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 10_000n });
    const queued = await queueCharges(store, key, 2);
    await store.claimCharges({ batchId: "run_a", now: T0 + 10, leaseMs: 1000, limit: 10 });
    expect(await store.claimCharges({ batchId: "run_b", now: T0 + 1009, leaseMs: 1000, limit: 10 })).toEqual([]);
    const taken = await store.claimCharges({ batchId: "run_b", now: T0 + 1010, leaseMs: 1000, limit: 10 });
    expect(ids(taken)).toEqual(ids(queued));
    expect(await store.completeCharges({ chargeIds: ids(queued), batchId: "run_a", txHash: "0x1", now: T0 + 1011 })).toBe(0);
    expect(await store.completeCharges({ chargeIds: ids(queued), batchId: "run_b", txHash: "0x2", now: T0 + 1011 })).toBe(2);
  },

  "a recorded transfer stays on its charges until it settles them or surely moved nothing": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 10_000n });
    const queued = await queueCharges(store, key, 4);
    const [a, b, c, d] = ids(queued) as [string, string, string, string];
    await store.claimCharges({ batchId: "run_a", now: T0 + 10, leaseMs: 1000, limit: 3 });
    // All or none: d is free, so a group with it marks nothing; another batch holds none.
    expect(await store.recordChargeTransfer({ chargeIds: [a, b, c, d], batchId: "run_a", transferTx: "0xbad" })).toBe(0);
    expect(await store.recordChargeTransfer({ chargeIds: [a, b, c], batchId: "run_b", transferTx: "0xbad" })).toBe(0);
    expect((await store.getCharge(a))?.transferTx).toBeUndefined();
    expect(await store.recordChargeTransfer({ chargeIds: [a, b, c, a], batchId: "run_a", transferTx: "0x01" })).toBe(3);
    expect((await store.getCharge(d))?.transferTx).toBeUndefined();
    expect(await store.getCharge(a)).toEqual({ ...queued[0], batchId: "run_a", leaseUntil: T0 + 1010, transferTx: "0x01" });
    // Re-queued with its outcome open, a charge keeps the transaction; the next claim sees it.
    expect(await store.failCharges({ chargeIds: [a, b], batchId: "run_a", error: "lease ran out" })).toBe(2);
    expect(await store.getCharge(a)).toEqual({ ...queued[0], error: "lease ran out", transferTx: "0x01" });
    const again = await store.claimCharges({ batchId: "run_b", now: T0 + 20, leaseMs: 1000, limit: 2 });
    expect(again.map((x) => [x.chargeId, x.transferTx])).toEqual([
      [a, "0x01"],
      [b, "0x01"],
    ]);
    // Surely moved nothing: dropped. Settled: cleared, the hash kept.
    expect(await store.failCharges({ chargeIds: [a], batchId: "run_b", error: "replaced", dropTransfer: true })).toBe(1);
    expect((await store.getCharge(a))?.transferTx).toBeUndefined();
    expect(await store.completeCharges({ chargeIds: [b], batchId: "run_b", txHash: "0xabc", now: T0 + 30 })).toBe(1);
    expect(await store.getCharge(b)).toEqual({ ...queued[1], status: "settled", txHash: "0xabc", batchId: "run_b", settledAt: T0 + 30, error: "lease ran out" });
    expect((await store.getCharge(c))?.transferTx).toBe("0x01");
  },

  "pendingChargeTotals sums queued charges per owner and chain exactly": async ({ store }) => {
    // Two keys of one owner whose charges together exceed 2^63 - 1: the total must still be exact.
    const int64 = (1n << 63n) - 1n;
    const each = store.maxAmount < int64 ? store.maxAmount : int64;
    const k1 = await addKey(store, { budgetLimit: each });
    const k2 = await addKey(store, { budgetLimit: each });
    const other = await addKey(store, { owner: OTHER_OWNER, budgetLimit: 100n });
    const otherChain = await addKey(store, { chainId: 1, budgetLimit: 100n });
    await queueCharges(store, k1, 1, () => each);
    await queueCharges(store, k2, 1, () => each);
    await queueCharges(store, other, 1);
    await queueCharges(store, otherChain, 1);
    expect(await store.pendingChargeTotals(k1.owner, k1.chainId)).toEqual({ amount: 2n * each, count: 2 });
    expect(await store.pendingChargeTotals(OTHER_OWNER, k1.chainId)).toEqual({ amount: 1n, count: 1 });
    expect(await store.pendingChargeTotals(k1.owner, 1)).toEqual({ amount: 1n, count: 1 });
    expect(await store.pendingChargeTotals(k1.owner, 999)).toEqual({ amount: 0n, count: 0 });
  },
} satisfies Record<string, StoreTest>;
