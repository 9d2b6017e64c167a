/** The dispenser part of the Store. */

/**
 * `pending`: the claim is taken and its transfer is under way (or its outcome is unknown after a
 * crash); `claimed`: the transfer succeeded. A failed transfer deletes the pending claim.
 */
export type DispenserClaimStatus = "pending" | "claimed";

/** One address's claim on one chain. At most one exists per (address, chainId). */
export interface DispenserClaimRecord {
  /** Lower-case address that receives the funds. */
  address: string;
  chainId: number;
  status: DispenserClaimStatus;
  /** Atomic USDC units sent (or being sent). */
  amount: bigint;
  /** When the claim was taken. */
  createdAt: number;
  /** When the transfer succeeded (status `claimed`). */
  claimedAt?: number;
  /** The transfer's transaction hash (status `claimed`). */
  txHash?: string;
  /** The signed transfer (0x hex) of a `pending` claim, recorded before it was sent. */
  transferTx?: string;
}

/** Outcome of {@link DispenserStore.beginDispenserClaim}. */
export type BeginDispenserClaimResult =
  | { ok: true; claim: DispenserClaimRecord }
  /** The (address, chainId) already has a claim, pending or claimed: it is returned unchanged. */
  | { ok: false; reason: "already_claimed"; claim: DispenserClaimRecord }
  /** The chain already holds `maxClaims` claims (pending ones count). */
  | { ok: false; reason: "limit_reached"; count: number };

/**
 * Dispenser claims: the store side of money invariant 5 of docs/architecture.md (one claim per
 * address and chain). `completeDispenserClaim`, `recordDispenserTransfer` and
 * `releaseDispenserClaim` act only on the claim taken at `createdAt`: a claim of the pair taken
 * again after a release is another claim, which a request still holding the first never touches.
 */
export interface DispenserStore {
  /**
   * Takes the one claim of (address, chainId): inserts it as `pending` (`claimedAt` and `txHash`
   * unset) when no claim of that pair exists and, if `maxClaims` is given, the chain holds fewer
   * than `maxClaims` claims (pending and claimed). Single native atomic operation; returns
   * `{ok:false, reason}` when the guard fails; of N concurrent calls for one pair exactly one
   * wins, and of N concurrent calls for distinct addresses at most `maxClaims - count` win.
   */
  beginDispenserClaim(input: { claim: Pick<DispenserClaimRecord, "address" | "chainId" | "amount" | "createdAt">; maxClaims?: number }): Promise<BeginDispenserClaimResult>;
  /**
   * Marks the pending claim of (address, chainId) whose recorded transfer is `transferTx` (null:
   * none) `claimed` with `txHash` and `claimedAt = now`. Single native atomic operation; returns the
   * claimed record, or null when no such pending claim exists (unknown, released, claimed, or a
   * later claim of the pair with another transfer).
   */
  completeDispenserClaim(input: { address: string; chainId: number; createdAt: number; transferTx: string | null; txHash: string; now: number }): Promise<DispenserClaimRecord | null>;
  /**
   * Records `transferTx` (a signed transaction, 0x hex) on the PENDING claim of (address, chainId)
   * whose recorded transfer is still `previous` (null: none), before it is sent, so a claim whose
   * transfer has an unknown outcome can be finished later with that very transaction. Single
   * native atomic operation.
   * @returns whether the claim was marked (false: it is no longer this request's; send nothing).
   */
  recordDispenserTransfer(input: { address: string; chainId: number; createdAt: number; transferTx: string; previous: string | null }): Promise<boolean>;
  /**
   * Deletes the PENDING claim of (address, chainId) whose recorded transfer is `transferTx` (null:
   * none) so the address can claim again (that transfer surely moved nothing). Single native atomic
   * operation; a claimed claim, or a later claim of the pair with another transfer, is never deleted.
   * @returns whether a pending claim was deleted.
   */
  releaseDispenserClaim(input: { address: string; chainId: number; createdAt: number; transferTx: string | null }): Promise<boolean>;
  /** Every claim of `address` (pending and claimed), by chainId ascending. */
  listDispenserClaims(address: string): Promise<DispenserClaimRecord[]>;
  /** How many claims (pending and claimed) the chain holds. */
  countDispenserClaims(chainId: number): Promise<number>;
}
