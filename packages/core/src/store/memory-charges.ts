/** The charge queue of the memory store. */
import type { ChargeRecord, ChargeStore } from "./charge-types.js";

/** A copy of a charge, so callers never hold the store's own object. */
export const copyCharge = (c: ChargeRecord): ChargeRecord => ({ ...c });

const byCreatedAsc = (a: ChargeRecord, b: ChargeRecord): number =>
  a.createdAt - b.createdAt || (a.chargeId < b.chargeId ? -1 : a.chargeId > b.chargeId ? 1 : 0);

/** Among charges a batch failed: the one failed (or held back) least recently first; 0 for charges that never failed. */
const failedOrder = (a: ChargeRecord, b: ChargeRecord): number => (a.error === undefined ? 0 : (a.leaseUntil ?? 0) - (b.leaseUntil ?? 0));

/**
 * In-memory {@link ChargeStore} over `charges` (the map the ledger inserts into; synchronous inside
 * each method: that is their atomicity).
 */
export function createMemoryChargeStore(charges: Map<string, ChargeRecord>): ChargeStore {
  /** The given charges still queued and held by `batchId`, each once. */
  const held = (chargeIds: readonly string[], batchId: string): ChargeRecord[] =>
    [...new Set(chargeIds)].map((id) => charges.get(id)).filter((c): c is ChargeRecord => c !== undefined && c.status === "queued" && c.batchId === batchId);
  return {
    async listQueuedCharges({ limit }) {
      return [...charges.values()]
        .filter((c) => c.status === "queued")
        .sort(byCreatedAsc)
        .slice(0, Math.max(0, limit))
        .map(copyCharge);
    },

    async getCharge(chargeId) {
      const charge = charges.get(chargeId);
      return charge ? copyCharge(charge) : null;
    },

    async claimCharges({ batchId, now, leaseMs, limit, chainIds }) {
      const free = [...charges.values()]
        .filter((c) => c.status === "queued" && (c.leaseUntil === undefined || c.leaseUntil <= now) && (chainIds === undefined || chainIds.includes(c.chainId)))
        .sort(
          (a, b) =>
            Number(a.transferTx === undefined) - Number(b.transferTx === undefined) ||
            Number(a.error !== undefined) - Number(b.error !== undefined) ||
            failedOrder(a, b) ||
            byCreatedAsc(a, b),
        )
        .slice(0, Math.max(0, limit));
      for (const c of free) {
        c.batchId = batchId;
        c.leaseUntil = now + leaseMs;
      }
      return free.map(copyCharge);
    },

    async recordChargeTransfer({ chargeIds, batchId, transferTx }) {
      // All or none: a transfer for a group's sum must never sit on a part of the group.
      const marked = held(chargeIds, batchId);
      if (marked.length !== new Set(chargeIds).size) return 0;
      for (const c of marked) c.transferTx = transferTx;
      return marked.length;
    },

    async completeCharges({ chargeIds, batchId, txHash, now }) {
      const done = held(chargeIds, batchId);
      for (const c of done) {
        c.status = "settled";
        c.txHash = txHash;
        c.settledAt = now;
        delete c.leaseUntil;
        delete c.transferTx;
      }
      return done.length;
    },

    async failCharges({ chargeIds, batchId, error, dropTransfer, retryAt }) {
      const failed = held(chargeIds, batchId);
      for (const c of failed) {
        delete c.batchId;
        if (retryAt === undefined) delete c.leaseUntil;
        else c.leaseUntil = retryAt;
        if (dropTransfer) delete c.transferTx;
        c.error = error;
      }
      return failed.length;
    },

    async pendingChargeTotals(owner, chainId) {
      let amount = 0n;
      let count = 0;
      for (const c of charges.values()) {
        if (c.status === "queued" && c.owner === owner && c.chainId === chainId) {
          amount += c.amount;
          count++;
        }
      }
      return { amount, count };
    },
  };
}
