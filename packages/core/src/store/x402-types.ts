/**
 * The x402 part of the Store: the claims that make money invariant 5 (docs/architecture.md) hold ("an x402
 * authorization nonce pays at most once").
 *
 * Life of a claim, keyed by (network, payer, nonce) — EIP-3009 nonces are per authorizer and per
 * token, and the gateway accepts one token (USDC) per network:
 *
 * - `claimPaymentNonce` when a PAYMENT-SIGNATURE has been verified, BEFORE the upstream call. Of N
 *   concurrent claims of one key exactly one wins; the others are refused (the replay loses).
 * - `releasePaymentNonce` when the upstream call failed before settlement: nothing moved, so the
 *   claim is deleted and the same signature may be presented again (the client does not have to
 *   sign anew to retry). Only the claim's own request can release it, and never once settled.
 * - `markPaymentNonceSettled` once the facilitator moved the funds on-chain.
 * - A claim whose settlement failed is left `claimed` on purpose: the transfer may or may not have
 *   landed, and the caller already returned the result, so the signature must never buy a second
 *   result here. It stays until the operator inspects it; `expiresAt` (the authorization's
 *   `validBefore`) says when the signature becomes worthless on-chain anyway.
 * - `markPaymentNonceUnsure` when that failure may still have moved the funds (a lost answer, a
 *   transaction that did not confirm): the claim records where to (`payTo`) and until when to look
 *   (`checkUntil`). Any instance, also after a restart, finds it with `listUnsurePaymentNonces`
 *   and marks it settled if the transfer shows up on-chain.
 *
 * Payers and nonces are compared case-insensitively (stored lower-case).
 */

import type { VideoJobRecord } from "./video-types.js";

/** One claimed x402 authorization nonce. */
export interface PaymentNonceRecord {
  /** CAIP-2 network, e.g. `eip155:8453`. */
  network: string;
  /** Lower-case payer address (the authorization's `from`). */
  payer: string;
  /** Lower-case 0x-prefixed 32-byte nonce. */
  nonce: string;
  /** The request that holds the claim. */
  requestId: string;
  status: "claimed" | "settled";
  claimedAt: number;
  /** The authorization's `validBefore`, in ms: after it the signature cannot move funds. */
  expiresAt: number;
  /** Set when settled. */
  txHash?: string;
  settledAt?: number;
  /** Set when its settlement failed unsure ({@link PaymentNonceStore.markPaymentNonceUnsure}): look for the transfer until then (ms). */
  checkUntil?: number;
}

/** A claim whose settlement failed unsure: the transfer it authorized may still land. */
export interface UnsurePaymentNonce extends PaymentNonceKey {
  /** The request that holds the claim (the one {@link PaymentNonceStore.markPaymentNonceSettled} needs). */
  requestId: string;
  /** The authorized value, atomic units. */
  amount: bigint;
  /** Lower-case address the transfer pays. */
  payTo: string;
  /** Until when (ms) the transfer may land: after it nobody looks. */
  checkUntil: number;
}

/** The key of a claim. */
export interface PaymentNonceKey {
  network: string;
  payer: string;
  nonce: string;
}

/** x402 persistence. Every guarded method is a single native atomic operation. */
export interface PaymentNonceStore {
  /**
   * Claims a nonce for `requestId`, recording the authorization's `amount` (default 0). Atomic;
   * returns false (and changes nothing) when the (network, payer, nonce) is already claimed or
   * settled, whatever its `expiresAt`. Of N concurrent claims of one key exactly one returns true.
   *
   * With `maxOpen`: also false (nothing changes) when the `amount`s of the payer's open claims on
   * the network (`claimed`, `expiresAt` after `now`, claimed at or after `openSince`; and `settled`
   * at or after `settledSince`, whose transfer a balance read may not show yet) plus this `amount`
   * exceed `maxOpen` — so that authorizations signed against one balance cannot all be served.
   * Of concurrent claims of one payer, exactly those that fit win.
   */
  claimPaymentNonce(
    input: PaymentNonceKey & {
      requestId: string;
      now: number;
      expiresAt: number;
      amount?: bigint;
      maxOpen?: bigint;
      openSince?: number;
      settledSince?: number;
    },
  ): Promise<boolean>;
  /**
   * Deletes the claim if it is still `claimed` and held by `requestId` (after an upstream failure,
   * so the signature can be presented again). Single native atomic operation.
   * @returns whether a claim was released.
   */
  releasePaymentNonce(input: PaymentNonceKey & { requestId: string }): Promise<boolean>;
  /**
   * Marks the claim `settled` with `txHash` and `settledAt = now` if it is still `claimed` and held
   * by `requestId`. Single native atomic operation. `videoJob`, when given, is inserted in the
   * same step (and only when the claim was marked).
   * @returns whether it was marked.
   */
  markPaymentNonceSettled(input: PaymentNonceKey & { requestId: string; txHash: string; now: number; videoJob?: VideoJobRecord }): Promise<boolean>;
  /**
   * Records on the claim (if it is still `claimed` and held by `requestId`) that its settlement
   * failed unsure: the transfer to `payTo` may land until `checkUntil` (ms). Single native atomic
   * operation; marking again moves `checkUntil`.
   * @returns whether the claim was marked.
   */
  markPaymentNonceUnsure(input: PaymentNonceKey & { requestId: string; payTo: string; checkUntil: number }): Promise<boolean>;
  /**
   * Up to `limit` claims marked unsure that are still `claimed` and whose `checkUntil` is after
   * `now`, ordered by (`checkUntil`, network, payer, nonce); with `after` (the last claim of the
   * previous page), only those after it in that order.
   */
  listUnsurePaymentNonces(input: { now: number; limit: number; after?: UnsurePaymentNonce }): Promise<UnsurePaymentNonce[]>;
  /** The claim, or null if the nonce is not claimed. */
  getPaymentNonce(key: PaymentNonceKey): Promise<PaymentNonceRecord | null>;
}
