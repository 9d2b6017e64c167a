/** The queue of charges that batch settlement moves on-chain. */

export type ChargeStatus = "queued" | "settled" | "failed";

/** A charge queued for a later on-chain batch transfer from `owner` on `chainId`. */
export interface ChargeRecord {
  chargeId: string;
  intentId?: string;
  keyId: string;
  owner: string;
  chainId: number;
  amount: bigint;
  /** `failed` is reserved for a future "give up" path; `failCharges` re-queues. */
  status: ChargeStatus;
  createdAt: number;
  txHash?: string;
  /** The last batch error, kept after re-queueing. */
  error?: string;
  /** The batch currently holding (or that settled) this charge. */
  batchId?: string;
  /** The claim of `batchId` lapses at this time; another batch may then claim the charge. */
  leaseUntil?: number;
  settledAt?: number;
  /**
   * The signed transfer (0x hex) a batch sent, or was about to send, for this charge and whose
   * outcome is not known yet; cleared when it settles the charge or surely moved nothing.
   */
  transferTx?: string;
}

/** Charges queued for on-chain batch settlement. */
export interface ChargeStore {
  /** Up to `limit` queued charges (leased or not), oldest first (createdAt, chargeId). */
  listQueuedCharges(options: { limit: number }): Promise<ChargeRecord[]>;
  /** The charge, or null if unknown. */
  getCharge(chargeId: string): Promise<ChargeRecord | null>;
  /**
   * Leases up to `limit` queued charges whose lease is absent or lapsed (`leaseUntil <= now`) to
   * `batchId` until `now + leaseMs`: charges that carry a signed transfer first (to be finished),
   * then charges that never failed, oldest first, then those a batch failed before (with an
   * `error`), the least recently failed first (by `leaseUntil`, which `failCharges` sets), so a
   * group that keeps failing keeps neither the others nor the other failed groups out of a batch;
   * with `chainIds`, only charges on those chains
   * (the chains a spender settles: others would fail every batch at the head of the queue). Single
   * native atomic operation; returns an empty list when none is free; two concurrent claims never
   * get the same charge.
   */
  claimCharges(input: { batchId: string; now: number; leaseMs: number; limit: number; chainIds?: readonly number[] }): Promise<ChargeRecord[]>;
  /**
   * Marks the given charges that are still queued and held by `batchId` as `settled` with
   * `txHash` and `settledAt = now`, clearing the lease and `transferTx`. Single native atomic operation; charges
   * held by another batch are left alone.
   * @returns how many it settled.
   */
  /**
   * Records `transferTx` (a signed transaction, 0x hex) on the given charges, before it is sent,
   * when every one of them is still queued and held by `batchId`, else on none: whatever happens to
   * the batch, a later batch finishes that very transaction rather than sending another, and a
   * transfer of a group's sum never sits on a part of the group. Single native atomic operation.
   * @returns how many it marked: all of them, or 0 (then send nothing).
   */
  recordChargeTransfer(input: { chargeIds: readonly string[]; batchId: string; transferTx: string }): Promise<number>;
  completeCharges(input: { chargeIds: readonly string[]; batchId: string; txHash: string; now: number }): Promise<number>;
  /**
   * Returns the given charges held by `batchId` to the queue (batch cleared) and records `error`;
   * with `retryAt`, no claim takes them before it (their `leaseUntil` is set to it, and orders
   * them among the failed charges: see {@link claimCharges}), else at once. Their `transferTx`
   * stays (its transaction may still land) unless `dropTransfer`: pass it only when that transaction
   * surely moved nothing and never can. Single native atomic operation; charges held by another
   * batch are left alone.
   * @returns how many it re-queued.
   */
  failCharges(input: { chargeIds: readonly string[]; batchId: string; error: string; dropTransfer?: boolean; retryAt?: number }): Promise<number>;
  /** Total amount and number of queued charges of (owner, chainId), leased or not. */
  pendingChargeTotals(owner: string, chainId: number): Promise<{ amount: bigint; count: number }>;
}
