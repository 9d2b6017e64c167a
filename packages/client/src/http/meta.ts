/** What a response says beside its body: request id, key budget, receipt, payment headers. */
import type { Budget, OutputCap, OutputCapReason, RateLimitInfo, Receipt } from "../types/common.js";
import type { PaymentResponse } from "../types/x402.js";
import { decodeBase64Json, parseAmount } from "./encoding.js";

/** The metadata of one answer, from its headers. */
export interface ResponseMeta {
  /** HTTP status of the answer. */
  readonly status: number;
  /** The gateway's `x-request-id` (quote it when reporting a problem). */
  readonly requestId: string | undefined;
  /** The key's budget after the call (`x-key-budget-*`), on key-billed answers. */
  readonly budget: Budget | undefined;
  /** The decoded `X-Receipt` of a paid media call. */
  readonly receipt: Receipt | undefined;
  /** `x-payment-intent-id`: the intent a prepare created or a key-billed media call used. */
  readonly paymentIntentId: string | undefined;
  /** True when the gateway replayed an earlier result (`x-idempotent-replay`): nothing happened twice. */
  readonly idempotentReplay: boolean;
  /** The decoded `PAYMENT-RESPONSE` (x402 settlement) of a call paid with `paymentSignature`. */
  readonly paymentResponse: PaymentResponse | undefined;
  /** The rate limit the call counted against (`x-ratelimit-*`), when the gateway sent one. */
  readonly rateLimit: RateLimitInfo | undefined;
  /** The output cap a chat completion's upstream was sent and why (`x-output-cap`, `x-output-cap-reason`). */
  readonly outputCap: OutputCap | undefined;
  /** The idempotency key the call sent (prepare), whether given or generated. */
  readonly idempotencyKey: string | undefined;
  /** How many retries the call needed (0 = first attempt). */
  readonly retries: number;
  /** Every response header. */
  readonly headers: Headers;
}

/** The body of an answer together with its metadata (what `.withResponse()` resolves to). */
export interface WithMeta<T> {
  readonly data: T;
  readonly meta: ResponseMeta;
}

function budgetOf(headers: Headers): Budget | undefined {
  const [limit, used, reserved, remaining] = ["limit", "used", "reserved", "remaining"].map((n) => parseAmount(headers.get(`x-key-budget-${n}`)));
  if (limit === undefined || used === undefined || reserved === undefined || remaining === undefined) return undefined;
  return { limit, used, reserved, remaining };
}

/** The `x-ratelimit-*` headers as numbers; undefined unless all three are non-negative integers. */
export function rateLimitOf(headers: Headers): RateLimitInfo | undefined {
  const [limit, remaining, resetSeconds] = ["limit", "remaining", "reset"].map((n) => {
    const text = headers.get(`x-ratelimit-${n}`)?.trim();
    return text !== undefined && /^\d{1,15}$/.test(text) ? Number(text) : undefined;
  });
  if (limit === undefined || remaining === undefined || resetSeconds === undefined) return undefined;
  return { limit, remaining, resetSeconds };
}

/** `x-output-cap` (a positive integer) with its `x-output-cap-reason`; undefined when either is missing or malformed. */
export function outputCapOf(headers: Headers): OutputCap | undefined {
  const tokens = headers.get("x-output-cap")?.trim();
  const reason = headers.get("x-output-cap-reason")?.trim();
  if (tokens === undefined || !/^[1-9]\d{0,14}$/.test(tokens) || !reason) return undefined;
  return { tokens: Number(tokens), reason: reason as OutputCapReason };
}

const objectOrUndefined = <T>(v: unknown): T | undefined => (typeof v === "object" && v !== null ? (v as T) : undefined);

/** Reads the metadata headers of `response`; malformed ones are left out, never thrown. */
export function metaOf(response: Response, extra: { idempotencyKey?: string | undefined; retries: number }): ResponseMeta {
  const h = response.headers;
  const receipt = h.get("x-receipt");
  const payment = h.get("payment-response");
  return {
    status: response.status,
    requestId: h.get("x-request-id") ?? undefined,
    budget: budgetOf(h),
    receipt: receipt ? objectOrUndefined<Receipt>(decodeBase64Json(receipt)) : undefined,
    paymentIntentId: h.get("x-payment-intent-id") ?? undefined,
    idempotentReplay: h.get("x-idempotent-replay") === "true",
    paymentResponse: payment ? objectOrUndefined<PaymentResponse>(decodeBase64Json(payment)) : undefined,
    rateLimit: rateLimitOf(h),
    outputCap: outputCapOf(h),
    idempotencyKey: extra.idempotencyKey,
    retries: extra.retries,
    headers: h,
  };
}
