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
/** Unsure claims read per page: a check pages through them all. */
const CHECK_PAGE = 200;
/** How long after `validBefore` a transfer is still looked for (a block mined with a later timestamp, clocks). */
export const LATE_TRANSFER_MARGIN_MS = 60_000;

/**
 * Looks once on-chain for the transfer of every claim whose settlement failed unsure and whose
 * window is still open (all of them, page by page); marks each that landed settled with its hash,
 * counts it (`tollgate_x402_late_transfers_total`) and logs it as an error naming the payer, amount
 * and transaction: the payer paid for a call it was not served and is owed a refund. A claim whose
 * nonce is used on-chain without its transfer, at two checks in a row of this `watch`, can never
 * land: it is no longer watched (a payer that spent its own nonce elsewhere, to make its claims cost
 * look-ups until they expire). A claim on a network this instance does not serve is left to one that
 * does. Never throws for one claim; stops between two claims once `signal` aborts.
 * @returns how many late transfers this check recorded.
 */
export async function checkLateTransfers(
  deps: CapabilityDeps,
  chains: ReadonlyMap<string, Chain>,
  watch: LateTransferWatch,
  signal?: AbortSignal,
): Promise<number> {
  const now = deps.clock.now();
  const burned = new Set<string>();
  let recorded = 0;
  for (let after: UnsurePaymentNonce | undefined; ;) {
    const claims = await deps.store.listUnsurePaymentNonces(Object.assign({ now, limit: CHECK_PAGE }, after ? { after } : {}));
    for (const claim of claims) {
      if (signal?.aborted) return recorded;
      const chain = chains.get(claim.network);
      if (!chain) continue;
      try {
        const outcome = await lookFor(deps, chain, claim);
        if (outcome === "recorded") recorded++;
        if (outcome !== "burned") continue;
        const id = `${claim.network}|${claim.payer}|${claim.nonce}`;
        burned.add(id);
        // A window that ends now: the claim stays claimed (its signature buys nothing), unwatched.
        if (watch.burned.has(id)) await deps.store.markPaymentNonceUnsure(Object.assign({}, claim, { checkUntil: deps.clock.now() }));
      } catch (err) {
        deps.logger.error({ err, network: claim.network, payer: claim.payer, nonce: claim.nonce }, "x402: could not record a late transfer");
      }
    }
    if (claims.length < CHECK_PAGE) break;
    after = claims[claims.length - 1];
  }
  watch.burned = burned;
  return recorded;
}

/** What one check remembers for the next: the claims whose nonce it found used without their transfer. */
export interface LateTransferWatch {
  burned: ReadonlySet<string>;
}

/** A fresh watch (nothing seen yet). */
export const newLateTransferWatch = (): LateTransferWatch => ({ burned: new Set() });

async function lookFor(deps: CapabilityDeps, chain: Chain, claim: UnsurePaymentNonce): Promise<"recorded" | "burned" | "none"> {
  const payer = claim.payer as `0x${string}`;
  const nonce = claim.nonce as `0x${string}`;
  const txHash = await landedTransfer(chain, { payer, nonce, payTo: claim.payTo as `0x${string}`, value: claim.amount }, 0);
  if (!txHash) return (await chain.authorizationUsed(payer, nonce).catch(() => false)) ? "burned" : "none";
  const marked = await deps.store.markPaymentNonceSettled({
    network: claim.network,
    payer: claim.payer,
    nonce: claim.nonce,
    requestId: claim.requestId,
    txHash,
    now: deps.clock.now(),
  });
  // Not marked: another instance (or a settle that succeeded after all) recorded it first.
  if (!marked) return "none";
  deps.telemetry.x402LateTransfer(claim.network);
  deps.logger.error(
    { payer: claim.payer, amount: claim.amount.toString(), txHash, network: claim.network, requestId: claim.requestId },
    "x402: a payment landed on-chain after its call was answered 502 (not served): refund it to the payer",
  );
  return "recorded";
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
