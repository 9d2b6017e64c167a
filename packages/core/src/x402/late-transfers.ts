/**
 * Transfers that land after their call was answered 502. A settle whose answer was lost (or whose
 * transaction did not confirm within `settleCheckSeconds`) is answered "payment failed", but the
 * transfer may still land until the authorization's `validBefore`. The claim records that in the
 * store (`markPaymentNonceUnsure`), so the watch below survives a restart and runs on every
 * instance: whichever marks the claim settled first reports it, once.
 */
import type { Chain } from "../chain/types.js";
import type { CapabilityDeps } from "../capability.js";
import type { UnsurePaymentNonce } from "../store/x402-types.js";
import { landedTransfer } from "./settle-check.js";

/** How often, by default, the store's unsure claims are looked for on-chain (`x402.lateTransferCheckSeconds`). */
export const DEFAULT_LATE_TRANSFER_CHECK_SECONDS = 15;
/** The most unsure claims one check looks at (soonest `checkUntil` first). */
const CHECK_BATCH = 200;
/** How long after `validBefore` a transfer is still looked for (a block mined with a later timestamp, clocks). */
export const LATE_TRANSFER_MARGIN_MS = 60_000;

/**
 * Looks once on-chain for the transfer of every claim whose settlement failed unsure and whose
 * window is still open; marks each that landed settled with its hash, counts it
 * (`tollgate_x402_late_transfers_total`) and logs it as an error naming the payer, amount and
 * transaction: the payer paid for a call it was not served and is owed a refund. A claim on a
 * network this instance does not serve is left to one that does. Never throws for one claim; stops
 * between two claims once `signal` aborts.
 * @returns how many late transfers this check recorded.
 */
export async function checkLateTransfers(deps: CapabilityDeps, chains: ReadonlyMap<string, Chain>, signal?: AbortSignal): Promise<number> {
  const claims = await deps.store.listUnsurePaymentNonces({ now: deps.clock.now(), limit: CHECK_BATCH });
  let recorded = 0;
  for (const claim of claims) {
    if (signal?.aborted) break;
    const chain = chains.get(claim.network);
    if (!chain) continue;
    try {
      if (await recordIfLanded(deps, chain, claim)) recorded++;
    } catch (err) {
      deps.logger.error({ err, network: claim.network, payer: claim.payer, nonce: claim.nonce }, "x402: could not record a late transfer");
    }
  }
  return recorded;
}

async function recordIfLanded(deps: CapabilityDeps, chain: Chain, claim: UnsurePaymentNonce): Promise<boolean> {
  const txHash = await landedTransfer(
    chain,
    { payer: claim.payer as `0x${string}`, nonce: claim.nonce as `0x${string}`, payTo: claim.payTo as `0x${string}`, value: claim.amount },
    0,
  );
  if (!txHash) return false;
  const marked = await deps.store.markPaymentNonceSettled({
    network: claim.network,
    payer: claim.payer,
    nonce: claim.nonce,
    requestId: claim.requestId,
    txHash,
    now: deps.clock.now(),
  });
  // Not marked: another instance (or a settle that succeeded after all) recorded it first.
  if (!marked) return false;
  deps.telemetry.x402LateTransfer(claim.network);
  deps.logger.error(
    { payer: claim.payer, amount: claim.amount.toString(), txHash, network: claim.network, requestId: claim.requestId },
    "x402: a payment landed on-chain after its call was answered 502 (not served): refund it to the payer",
  );
  return true;
}

/**
 * Runs {@link checkLateTransfers} every `intervalMs` (0: never; the method stays callable) until
 * the gateway closes, which stops a check under way after its current claim and waits for it (the
 * store closes after). A check still running when the next is due is not doubled; the timer does
 * not hold the process open.
 */
export function scheduleLateTransferChecks(deps: CapabilityDeps, check: (signal: AbortSignal) => Promise<number>, intervalMs: number): void {
  if (intervalMs <= 0) return;
  const closing = new AbortController();
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= check(closing.signal)
      .catch((err: unknown) => deps.logger.error({ err }, "x402: the late-transfer check failed"))
      .finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  deps.onClose(async () => {
    clearInterval(timer);
    closing.abort();
    await running;
  });
}
