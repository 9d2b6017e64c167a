/**
 * The paid-call pipeline of every media route (docs/payments.md "Media billing and x402"): after the
 * fields and the model are checked, pay (service key: reserve the quote; x402: verify the
 * signature and claim its nonce), call upstream, meter the real output, then settle. Any failure
 * between payment and settlement charges nothing (invariant 6): the reservation is aborted, and the
 * x402 nonce is released when the upstream refused the call ({@link upstreamRefused}); after a
 * timeout, a broken connection or a client that left, the upstream may have done the work, so the
 * claim is kept unsettled and the signature buys no second call.
 */
import type { ModelCard } from "../catalog/card.js";
import { GatewayError, toErrorEnvelope } from "../errors.js";
import { json } from "../http/respond.js";
import type { GatewayRequest, GatewayResponse } from "../http/types.js";
import type { IntentRecord, KeyRecord } from "../store/types.js";
import { budgetHeaders } from "../keys/view.js";
import { tokenPrefix } from "../keys/token.js";
import type { CapabilityDeps } from "../capability.js";
import type { Priced } from "../metering/pricing.js";
import type { VerifiedPayment, X402Service } from "../x402/service.js";
import type { PaidCredential } from "./credential.js";
import type { VideoJobRecord } from "../store/video-types.js";
import type { SettleResponse } from "../x402/types.js";
import { makeReceipt, receiptHeader, type Receipt } from "./receipt.js";
import type { Upstreams } from "./upstreams.js";
import { recordCharge, timeUpstream, type RequestTrace } from "../observability/telemetry.js";

/** One paid call. */
export interface PaidCall<T> {
  readonly card: ModelCard;
  /** Short action name, e.g. "images.generations". */
  readonly action: string;
  /** MIME type of the answer, for the x402 resource description. */
  readonly mimeType: string;
  /** The price from the request: the x402 price, and the key reservation (with a `bound`, the least a key reserves). */
  readonly quote: Priced;
  /**
   * The most the call can cost, when only the upstream learns the real quantity and it may exceed
   * the quote (audio coded below the bitrate its quote assumes): a key reserves this, or what it
   * has left down to the quote. x402 (`exact`) still pays the quote.
   */
  readonly bound?: Priced | undefined;
  /** The upstream call. `signal` aborts when the client goes away. */
  run(signal: AbortSignal | undefined): Promise<T>;
  /**
   * The price of the real output (usage reported by the upstream). `limit` is what the payment
   * holds (atomic units: the reservation, or the quote); a price above it is cut to the quote.
   */
  meter(result: T, limit: bigint): Priced;
  /** A row the call leaves behind (a video job), written in the same atomic store step as its charge. */
  persist?(result: T, receipt: Receipt): VideoJobRecord;
  /**
   * For x402: called once the signed payment of `paid` atomic units (the quote) has settled for
   * `result`, before the answer is built. A route whose price depends on the output (a
   * transcription's seconds) delivers only what `paid` covers.
   */
  paidWith?(result: T, paid: bigint): void | Promise<void>;
  /** `run` answers without calling the upstream (an answer kept from an earlier call): not timed as an upstream call. */
  readonly untimed?: boolean;
}

/** The request of a paid call, with its credential resolved before the body was read. */
export interface PaidRequest {
  readonly request: GatewayRequest;
  readonly requestId: string;
  readonly credential: PaidCredential;
  /** The request's trace: the model, the upstream time and the charge are recorded there. */
  readonly trace?: RequestTrace | undefined;
}

/** The outcome: a payment answer to send as is (402), or the result with its receipt (and its JSON text, serialized once) and headers. */
export type PaidOutcome<T> = { kind: "respond"; response: GatewayResponse } | { kind: "paid"; result: T; receipt: Receipt; receiptJson: string; headers: Record<string, string> };

/** What a payment is for: the card, the action and the price (the parts of a {@link PaidCall} the payment steps read). */
export type Offer = Pick<PaidCall<unknown>, "card" | "action" | "mimeType" | "quote" | "bound">;

/** A reservation made, or the answer to send instead (402). */
export type Reserved = { kind: "reserved"; intent: IntentRecord } | { kind: "respond"; response: GatewayResponse };

/** A verified x402 payment whose nonce is claimed, or the answer to send instead (402 challenge). */
export type Verified = { kind: "verified"; payment: VerifiedPayment } | { kind: "respond"; response: GatewayResponse };

/** Never charge more than was quoted (reserved or signed for). */
export function capped(metered: Priced, limit: Priced): Priced {
  return metered.finalAmount <= limit.finalAmount ? metered : limit;
}

/** The receipt subject of a card: `<provider>:<modelId>`. */
export const subjectOf = (card: ModelCard) => `${card.provider}:${card.modelId}`;

/** The receipt settlement of a key payment, from the settle answer. */
export const ledgerSettlement = (view: Record<string, unknown>) => (view.settlement ?? { status: "queued" }) as Receipt["settlement"];

/** The receipt settlement of an x402 payment, from the facilitator's settle response. */
export function x402Settlement(response: SettleResponse): Receipt["settlement"] {
  return {
    status: "settled",
    ...(response.transaction ? { txHash: response.transaction } : {}),
    ...(response.network ? { network: response.network } : {}),
    ...(response.payer ? { payer: response.payer } : {}),
  };
}

/**
 * Whether a failed upstream call surely did no work: the upstream answered it with a status outside
 * 2xx (`details.upstreamStatus`), or the call never reached it (`details.nothingDone`). A timeout, a
 * broken connection or an abort may follow work it bills.
 */
export function upstreamRefused(error: unknown): boolean {
  if (error instanceof GatewayError && error.details?.["nothingDone"] === true) return true;
  const status = error instanceof GatewayError ? error.details?.["upstreamStatus"] : undefined;
  // A 2xx whose body did not decode carries its status too: the upstream did that work.
  return typeof status === "number" && (status < 200 || status >= 300);
}

/** Creates the pipeline over the gateway's services; `upstreams` names the provider serving a card (the upstream latency label). */
export function createBilling(deps: CapabilityDeps, x402: X402Service, upstreams: Pick<Upstreams, "nameFor">) {
  const resourceOf = (req: GatewayRequest) => `${req.origin ?? ""}${req.path}`;

  /** Runs the upstream call of a paid request, timed for its trace and the upstream latency metric. */
  const upstream = <T>(from: PaidRequest, card: ModelCard, run: () => Promise<T>): Promise<T> => timeUpstream(deps.telemetry, from.trace, upstreams.nameFor(card), run);

  /** Runs a paid call: timed as an upstream call unless it answers without one ({@link PaidCall.untimed}). */
  const runCall = <T>(from: PaidRequest, call: PaidCall<T>): Promise<T> =>
    call.untimed ? call.run(from.request.signal) : upstream(from, call.card, () => call.run(from.request.signal));

  /** Records what a paid request was charged, for its trace and the charged-amount metric. */
  const charged = (from: PaidRequest, card: ModelCard, amount: bigint, payment: "key" | "x402") => recordCharge(deps.telemetry, from.trace, subjectOf(card), amount, payment);

  async function challenge(req: GatewayRequest, call: Offer, error: string, extra: { envelope?: unknown; headers?: Record<string, string> } = {}) {
    if (!x402.enabled) {
      if (extra.envelope) return json(extra.envelope, { status: 402, headers: extra.headers ?? {} });
      throw new GatewayError("payment_required", `Send a service key as Authorization: Bearer ${tokenPrefix(deps.compat)}… (x402 payments are not configured on this gateway).`);
    }
    const c = await x402.challenge({ amount: call.quote.finalAmount, resourceUrl: resourceOf(req), description: `${call.action} with ${call.card.modelId}`, mimeType: call.mimeType, error });
    // The envelope's error object wins over the challenge's error string; x402 clients read the header.
    const body = extra.envelope ? Object.assign({}, c.body, extra.envelope) : c.body;
    return json(body, { status: 402, headers: Object.assign({}, extra.headers, { "payment-required": c.header }) });
  }

  /**
   * Reserves the quote on `key` (or, with `minAmount`, as much of it as the key has left down to
   * that floor; an offer with a `bound` reserves the bound, down to the quote). A key whose budget
   * is too small gets the 402 `budget_exhausted` envelope, with the x402 offer beside it when x402
   * is configured.
   */
  async function reserve(req: GatewayRequest, requestId: string, call: Offer, key: KeyRecord, minAmount?: bigint, ttlMs?: number): Promise<Reserved> {
    const floor = minAmount ?? (call.bound ? call.quote.finalAmount : undefined);
    try {
      const prepared = await deps.ledger.prepare({
        key,
        chainId: key.chainId,
        service: "inference",
        action: call.action,
        resource: req.path,
        method: "POST",
        maxAmount: call.bound?.finalAmount ?? call.quote.finalAmount,
        model: call.card,
        managed: true,
        ...(floor === undefined ? {} : { minAmount: floor }),
        ...(ttlMs === undefined ? {} : { ttlMs }),
      });
      return { kind: "reserved", intent: prepared.intent };
    } catch (error) {
      if (!(error instanceof GatewayError) || error.code !== "budget_exhausted" || !x402.enabled) throw error;
      const envelope = toErrorEnvelope(error, requestId);
      return { kind: "respond", response: await challenge(req, call, error.message, { envelope: envelope.body, headers: envelope.headers }) };
    }
  }

  /** Verifies a PAYMENT-SIGNATURE for the quote and claims its nonce; a refused payment gets the 402 challenge. */
  async function verify(req: GatewayRequest, requestId: string, call: Offer, header: string): Promise<Verified> {
    const description = `${call.action} with ${call.card.modelId}`;
    const verified = await x402.verify({ header, amount: call.quote.finalAmount, resourceUrl: resourceOf(req), description, mimeType: call.mimeType, requestId });
    if (!verified.ok) return { kind: "respond", response: await challenge(req, call, verified.message) };
    return { kind: "verified", payment: verified.payment };
  }

  async function withKey<T>(from: PaidRequest, call: PaidCall<T>, key: KeyRecord): Promise<PaidOutcome<T>> {
    const { request: req, requestId } = from;
    const reserved = await reserve(req, requestId, call, key);
    if (reserved.kind === "respond") return reserved;
    const intentId = reserved.intent.intentId;
    let result: T;
    try {
      result = await runCall(from, call);
    } catch (error) {
      await deps.ledger.abortOwn({ intent: reserved.intent, reason: req.signal?.aborted ? "client_disconnected" : "upstream_failed" });
      throw error;
    }
    // Never above the reservation (at least the quote): a price past it falls back to the quote.
    const limit = reserved.intent.maxAmount;
    const metered = call.meter(result, limit);
    const priced = metered.finalAmount <= limit ? metered : call.quote;
    const receiptId = deps.ids.next("rcpt");
    const receiptOf = (view: Record<string, unknown>) => makeReceipt(receiptId, subjectOf(call.card), priced, ledgerSettlement(view), intentId);
    const persist = call.persist?.bind(call);
    const settled = await deps.ledger.settleOwn({ intent: reserved.intent, finalAmount: priced.finalAmount, ...(persist ? { videoJob: (view) => persist(result, receiptOf(view)) } : {}) });
    charged(from, call.card, priced.finalAmount, "key");
    const receipt = receiptOf(settled.view);
    const receiptJson = JSON.stringify(receipt);
    const headers = Object.assign(settled.key ? budgetHeaders(settled.key) : {}, { "x-payment-intent-id": intentId, "x-receipt": receiptHeader(receiptJson) });
    return { kind: "paid", result, receipt, receiptJson, headers };
  }

  async function withSignature<T>(from: PaidRequest, call: PaidCall<T>, header: string): Promise<PaidOutcome<T>> {
    const { request: req, requestId } = from;
    const verified = await verify(req, requestId, call, header);
    if (verified.kind === "respond") return verified;
    const payment = verified.payment;
    let result: T;
    try {
      result = await runCall(from, call);
    } catch (error) {
      if (upstreamRefused(error)) await x402.release(payment);
      throw error;
    }
    // The exact scheme moves the signed amount: the x402 price is the quote.
    const receiptId = deps.ids.next("rcpt");
    const receiptOf = (response: SettleResponse) => makeReceipt(receiptId, subjectOf(call.card), call.quote, x402Settlement(response));
    const persist = call.persist?.bind(call);
    const settled = await x402.settle(payment, persist ? { videoJob: (response) => persist(result, receiptOf(response)) } : {});
    charged(from, call.card, call.quote.finalAmount, "x402");
    await call.paidWith?.(result, payment.amount);
    const receipt = receiptOf(settled.response);
    const receiptJson = JSON.stringify(receipt);
    return { kind: "paid", result, receipt, receiptJson, headers: { "payment-response": settled.header, "x-receipt": receiptHeader(receiptJson) } };
  }

  return {
    reserve,
    verify,
    challenge,
    upstream,
    charged,
    /**
     * Pays for and runs one call. A key credential bills the key; a signature pays with x402;
     * without a credential the answer is the 402 challenge. Throws the upstream's GatewayError after
     * releasing the payment, and 400 `invalid_request` for a call whose quote is 0.
     */
    async run<T>(from: PaidRequest, call: PaidCall<T>): Promise<PaidOutcome<T>> {
      const { request, credential } = from;
      if (from.trace) from.trace.model = subjectOf(call.card);
      // Nothing to pay is nothing to serve: no reservation of 0, and no x402 offer or payment of 0.
      if (call.quote.finalAmount <= 0n) throw new GatewayError("invalid_request", `This ${call.action} request prices to 0 atomic units with ${subjectOf(call.card)}; there is nothing to bill, so it is not served (an empty input?).`);
      if (credential.kind === "key") return withKey(from, call, credential.key);
      if (credential.kind === "signature") return withSignature(from, call, credential.header);
      return { kind: "respond", response: await challenge(request, call, "Payment required: send PAYMENT-SIGNATURE (x402) or Authorization: Bearer <service key>.") };
    },
  };
}

/** The billing pipeline type. */
export type Billing = ReturnType<typeof createBilling>;
