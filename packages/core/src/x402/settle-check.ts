/**
 * A settle answer lost is not a transfer lost: a facilitator may submit `transferWithAuthorization`
 * and then time out, drop the connection, or fail waiting for the receipt. Answering "payment
 * failed" then would keep the payer's money without serving the call. Before the gateway says so,
 * it asks the chain.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Address, Chain, Hex } from "../chain/types.js";

/** How long, by default, the gateway watches the chain after a settle answer was lost (`x402.settleCheckSeconds`). */
export const DEFAULT_SETTLE_CHECK_SECONDS = 30;
const POLL_MS = 1_000;

/** The signed transfer a settle was to make: `value` from `payer` to `payTo` under `nonce`. */
export interface SignedTransfer {
  readonly payer: Address;
  readonly nonce: Hex;
  readonly payTo: Address;
  readonly value: bigint;
}

/** One look on the chain for `transfer`; a read that fails (the RPC is an upstream too) is "not yet". */
const lookFor = (chain: Chain, t: SignedTransfer): Promise<Hex | null> => chain.authorizedTransfer(t.payer, t.nonce, t.payTo, t.value).catch(() => null);

/**
 * The hash of the transaction that made `transfer` (its nonce used and exactly its value moved to
 * its payee, in one transaction: a payer burning its own nonce on a transfer to itself is not a
 * payment), looked for on `chain` now and then every second until `waitMs` has passed; null when
 * none landed by then. Never throws.
 */
export async function landedTransfer(chain: Chain, transfer: SignedTransfer, waitMs: number): Promise<Hex | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const hash = await lookFor(chain, transfer);
    if (hash) return hash;
    if (Date.now() + POLL_MS > deadline) return null;
    await sleep(POLL_MS);
  }
}
