/** The dispenser part of the memory store. */
import { invalidRequest } from "../errors.js";
import type { DispenserClaimRecord, DispenserStore } from "./dispenser-types.js";

const slot = (address: string, chainId: number) => `${chainId}\u0000${address}`;
const copy = (c: DispenserClaimRecord): DispenserClaimRecord => ({ ...c });
/** Whether `record` is the pending claim taken at `createdAt` whose recorded transfer is `transferTx` (null: none). */
const mine = (record: DispenserClaimRecord | undefined, createdAt: number, transferTx: string | null): record is DispenserClaimRecord =>
  record?.status === "pending" && record.createdAt === createdAt && (record.transferTx ?? null) === transferTx;

/** In-memory dispenser operations (synchronous inside each method: that is their atomicity). */
export function createMemoryDispenserStore(): DispenserStore {
  const claims = new Map<string, DispenserClaimRecord>();
  const perChain = new Map<number, number>();

  return {
    async beginDispenserClaim({ claim, maxClaims }) {
      if (claim.amount < 0n) throw invalidRequest("amount must not be negative", "amount");
      const key = slot(claim.address, claim.chainId);
      const existing = claims.get(key);
      if (existing) return { ok: false, reason: "already_claimed", claim: copy(existing) };
      const count = perChain.get(claim.chainId) ?? 0;
      if (maxClaims !== undefined && count >= maxClaims) return { ok: false, reason: "limit_reached", count };
      const record: DispenserClaimRecord = { address: claim.address, chainId: claim.chainId, amount: claim.amount, createdAt: claim.createdAt, status: "pending" };
      claims.set(key, record);
      perChain.set(claim.chainId, count + 1);
      return { ok: true, claim: copy(record) };
    },

    async completeDispenserClaim({ address, chainId, createdAt, transferTx, txHash, now }) {
      const record = claims.get(slot(address, chainId));
      if (!mine(record, createdAt, transferTx)) return null;
      record.status = "claimed";
      record.txHash = txHash;
      record.claimedAt = now;
      delete record.transferTx;
      return copy(record);
    },

    async recordDispenserTransfer({ address, chainId, createdAt, transferTx, previous }) {
      const record = claims.get(slot(address, chainId));
      if (!mine(record, createdAt, previous)) return false;
      record.transferTx = transferTx;
      return true;
    },

    async releaseDispenserClaim({ address, chainId, createdAt, transferTx }) {
      const key = slot(address, chainId);
      const record = claims.get(key);
      if (!mine(record, createdAt, transferTx)) return false;
      claims.delete(key);
      perChain.set(chainId, (perChain.get(chainId) ?? 1) - 1);
      return true;
    },

    async listDispenserClaims(address) {
      return [...claims.values()].filter((c) => c.address === address).sort((a, b) => a.chainId - b.chainId).map(copy);
    },

    async countDispenserClaims(chainId) {
      return perChain.get(chainId) ?? 0;
    },
  };
}
