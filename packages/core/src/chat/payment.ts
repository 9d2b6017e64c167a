/**
 * How a chat completion is paid for: opened before the upstream call, finished after it (or when
 * the stream ends, however it ends). Built from the media pipeline's payment steps
 * (../media/billing.ts), so keys and x402 behave as on every paid route:
 *
 * - Service key: reserve the quote, or — when the key cannot afford it but affords the prompt and
 *   one output token per choice — everything the key has left, with the output cap lowered to what
 *   that buys. Settle the metered usage (never above the reservation); release on failure.
 * - x402 (`exact`): the client signs the quote. Not streamed, the signed amount moves once the
 *   upstream answered; a failure before that releases the payment. Streamed, it moves before the
 *   first event is relayed ({@link ChatPayment.commit}): a payment that cannot be collected then
 *   (an authorization that lapsed, a balance moved away, a cancelled authorization) gets no
 *   answer. A failure before the first event releases it; after, the signed amount stays paid
 *   (`exact` moves all or nothing).
 */
import type { CapabilityDeps } from "../capability.js";
import type { ModelCard } from "../catalog/card.js";
import type { GatewayResponse } from "../http/types.js";
import { budgetHeaders } from "../keys/view.js";
import type { Priced } from "../metering/pricing.js";
import { capped, ledgerSettlement, subjectOf, x402Settlement, type Billing, type Offer, type PaidRequest } from "../media/billing.js";
import { makeReceipt, type Receipt } from "../media/receipt.js";
import type { X402Service } from "../x402/service.js";
import { affordableCap, priceWithCap, type CapReason, type ChatQuote } from "./quote.js";

/** Lifetime of a streamed call's reservation (at least the ledger's `intentTtlMs`). */
export const STREAM_INTENT_TTL_MS = 3_600_000;

/**
 * Why a call ended before the upstream finished (`deadline`: its reservation was about to lapse;
 * `client_left_early`: the client left after the upstream took the request, before anything was relayed).
 */
export type CutCause = "client_disconnected" | "client_left_early" | "upstream_failed" | "deadline";

/** An open payment for one chat completion. */
export interface ChatPayment {
  /** Output cap per choice the upstream is sent. */
  readonly outputCap: number;
  readonly capReason: CapReason;
  /** Headers of the answer's start (intent id, budget, output cap). */
  readonly headers: Record<string, string>;
  /** Settles a finished call's metered price (capped at what was reserved or signed). */
  settle(metered: Priced): Promise<{ receipt: Receipt; headers: Record<string, string> }>;
  /**
   * Finishes a call cut short: a key pays `delivered` (after the first byte, what was relayed; a
   * client that left early, the prompt the upstream read); x402 as the module says (a client that
   * left early pays nothing: nothing moved yet).
   */
  settleCut(delivered: Priced, cause: CutCause): Promise<Receipt | undefined>;
  /**
   * Releases the payment; nothing is charged. A key's reservation is freed; an x402 claim only when
   * `refused` (the upstream answered an error: it did no work), else it is kept unsettled, so the
   * signature buys no second call.
   */
  release(cause: CutCause, refused?: boolean): Promise<void>;
  /** x402 streams: collects the payment before the first event is relayed (throws when it cannot be). */
  readonly commit?: (() => Promise<void>) | undefined;
  /** When the reservation lapses (a key's): a stream still running then must be billed before it. */
  readonly expiresAt?: number | undefined;
}

/** Opens the payment of a chat call, or returns the answer to send instead (402). */
export async function openChatPayment(
  deps: Pick<CapabilityDeps, "ledger" | "ids" | "feeBps">,
  billing: Billing,
  x402: X402Service,
  from: PaidRequest,
  card: ModelCard,
  quote: ChatQuote,
  stream = false,
): Promise<{ kind: "open"; payment: ChatPayment } | { kind: "respond"; response: GatewayResponse }> {
  const offer: Offer = { card, action: "chat.completions", mimeType: from.request.headers.accept?.includes("text/event-stream") ? "text/event-stream" : "application/json", quote: quote.quote };
  const { request, requestId, credential } = from;
  if (from.trace) from.trace.model = subjectOf(card);
  const capHeaders = (cap: number, reason: CapReason) => ({ "x-output-cap": String(cap), "x-output-cap-reason": reason });

  if (credential.kind === "key") {
    // A stream holds its reservation while it runs: give it an hour (the relay settles or releases it at the end).
    const reserved = await billing.reserve(request, requestId, offer, credential.key, quote.floor.finalAmount, stream ? STREAM_INTENT_TTL_MS : undefined);
    if (reserved.kind === "respond") return reserved;
    const intent = reserved.intent;
    const limit = intent.maxAmount;
    const lowered = limit < quote.quote.finalAmount;
    const outputCap = lowered ? affordableCap(card, quote, limit, deps.feeBps) : quote.outputCap;
    const capReason: CapReason = lowered ? "budget" : quote.capReason;
    // The most this call may cost: the prompt bound and the (maybe lowered) cap, which fits the reservation.
    const most = lowered ? priceWithCap(card, quote, outputCap, deps.feeBps) : quote.quote;
    const finish = async (metered: Priced) => {
      const priced = capped(metered, most);
      const settled = await deps.ledger.settleOwn({ intent, finalAmount: priced.finalAmount });
      billing.charged(from, card, priced.finalAmount, "key");
      const receipt = makeReceipt(deps.ids.next("rcpt"), subjectOf(card), priced, ledgerSettlement(settled.view), intent.intentId);
      return { receipt, key: settled.key };
    };
    return {
      kind: "open",
      payment: {
        outputCap,
        capReason,
        headers: { "x-payment-intent-id": intent.intentId, ...capHeaders(outputCap, capReason) },
        expiresAt: intent.expiresAt,
        async settle(metered) {
          const { receipt, key } = await finish(metered);
          return { receipt, headers: Object.assign(key ? budgetHeaders(key) : {}, { "x-payment-intent-id": intent.intentId }) };
        },
        settleCut: async (delivered) => (await finish(delivered)).receipt,
        async release(cause) {
          await deps.ledger.abortOwn({ intent, reason: cause });
        },
      },
    };
  }

  if (credential.kind === "signature") {
    const verified = await billing.verify(request, requestId, offer, credential.header);
    if (verified.kind === "respond") return verified;
    const payment = verified.payment;
    let paid: { receipt: Receipt; header: string } | undefined;
    // Once a settle was tried, the claim stays (x402.settle's contract): its transfer may still land.
    let tried = false;
    const finish = async () => {
      if (paid) return paid;
      tried = true;
      const settled = await x402.settle(payment);
      billing.charged(from, card, quote.quote.finalAmount, "x402");
      paid = { receipt: makeReceipt(deps.ids.next("rcpt"), subjectOf(card), quote.quote, x402Settlement(settled.response)), header: settled.header };
      return paid;
    };
    return {
      kind: "open",
      payment: {
        outputCap: quote.outputCap,
        capReason: quote.capReason,
        headers: capHeaders(quote.outputCap, quote.capReason),
        async settle() {
          const { receipt, header } = await finish();
          return { receipt, headers: { "payment-response": header } };
        },
        async settleCut(_delivered, cause) {
          if (paid || cause === "client_disconnected") return (await finish()).receipt;
          // Before the first byte: nothing has moved, but the upstream read the prompt; the claim is kept.
          return undefined;
        },
        release: async (_cause, refused) => {
          if (!paid && !tried && refused === true) await x402.release(payment);
        },
        ...(stream ? { commit: async () => void (await finish()) } : {}),
      },
    };
  }

  return { kind: "respond", response: await billing.challenge(request, offer, "Payment required: send PAYMENT-SIGNATURE (x402) or Authorization: Bearer <service key>.") };
}
