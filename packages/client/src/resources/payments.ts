/** `client.payments`: payment intents and metering (docs/payments.md "Payment intents"). */
import type { APIPromise } from "../api-promise.js";
import type { Caller } from "../http/caller.js";
import type { PrepareOptions, RequestOptions } from "../options.js";
import type { Amount, LineItem, Paged, SettlementState } from "../types/common.js";
import type { PageParams } from "./keys.js";

/** Token usage, as OpenAI-style clients report it. */
export interface Usage {
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
  cachedInputTokens?: number;
  reasoningTokens?: number;
}

/** Media evidence; extra string fields (e.g. `resolution`) select price variants. */
export interface MediaEvidence {
  images?: number;
  size?: string;
  quality?: string;
  seconds?: number;
  characters?: number;
  requests?: number;
  [variant: string]: string | number | undefined;
}

/** What a model output used, priced from the catalog (as `payments.meter` takes it). */
export interface UsageMeter {
  modelId: string;
  provider?: string;
  modality: string;
  usage?: Usage;
  media?: MediaEvidence;
}

/**
 * Quantities per price key of one subject (`<provider>:<name>`). A catalog model is priced by the
 * catalog (`unit`/`unitPriceUsd` ignored); any other subject (e.g. `acme:web-search`) is priced by
 * each line's `unit` and `unitPriceUsd`, both then required. Quantities and prices are JSON numbers
 * or decimal strings, read exactly.
 */
export interface LineMeter {
  subject: string;
  lineItems: { key: string; quantity: number | string; unit?: string; unitPriceUsd?: number | string; when?: Record<string, string> }[];
}

/** A meter: usage evidence or line items (catalog models priced by the catalog, other subjects by their line items). */
export type Meter = UsageMeter | LineMeter;

/** A priced line, as the origin client types it: `quantity` and `unitPriceUsd` are numbers, `amountWei` an atomic amount. */
export type MeteredLineItem = LineItem;

/** The line-item meter a quote answers: pass it to `prepare`/`settle` to reserve or settle the same amount. */
export interface QuoteMeter {
  subject: string;
  /** `when` pins the price variant (variant-priced keys only). */
  lineItems: { key: string; unit: string; quantity: number; unitPriceUsd: number; when?: Record<string, string> }[];
}

/** The body of `payments.prepare`: exactly one of `maxAmountWei` and `meter` (or, with neither, `modelId` + `modality` + usage). */
export interface PrepareParams {
  /** Service namespace, e.g. `agent`, `workflow`, `inference`. */
  service: string;
  action: string;
  /** URL or identifier of what is paid for. */
  resource: string;
  /** HTTP method of what is paid for. */
  method: string;
  /** The cap to reserve (atomic units). */
  maxAmountWei?: Amount;
  /** A meter priced now; its total is the cap. */
  meter?: Meter;
  /** Without `maxAmountWei` and `meter`: `modelId`, `modality` and `usage`/`media` are priced as a usage meter. */
  modelId?: string;
  provider?: string;
  modality?: string;
  usage?: Usage;
  media?: MediaEvidence;
  runId?: string;
  /** Same as the `idempotencyKey` call option (send one of them). */
  idempotencyKey?: string;
}

/** A prepared (authorized) intent. */
export interface PreparedIntent {
  /** `pi_…`. */
  paymentIntentId: string;
  status: "authorized";
  maxAmountWei: string;
  /** Unix ms after which the reservation is released. */
  expiresAt: number;
}

/** The body of `payments.settle`: exactly one of `finalAmountWei` (0 allowed) and `meter`. */
export interface SettleParams {
  paymentIntentId: string;
  finalAmountWei?: Amount;
  meter?: Meter;
}

/** A settled intent (a repeat answers the first result, `meta.idempotentReplay` true). */
export interface SettledIntent {
  paymentIntentId: string;
  status: "settled";
  maxAmountWei: string;
  finalAmountWei: string;
  releasedWei: string;
  /** The subject of the meter it was settled with. */
  meterSubject?: string;
  lineItems?: MeteredLineItem[];
  providerAmountWei?: string;
  platformFeeWei?: string;
  settlement: SettlementState;
}

/** An aborted intent (a repeat answers the first result). */
export interface AbortedIntent {
  paymentIntentId: string;
  status: "aborted";
  reason: string;
  releasedWei: string;
}

/** One intent of a wallet's listing (an overdue authorized intent shows as `expired`). */
export interface IntentListItem {
  paymentIntentId: string;
  keyId: string;
  chainId: number;
  status: "authorized" | "settled" | "aborted" | "expired";
  service: string | null;
  action: string | null;
  resource: string | null;
  maxAmountWei: string;
  finalAmountWei: string | null;
  releasedWei: string | null;
  createdAt: number;
  expiresAt: number;
  finishedAt: number | null;
  reason: string | null;
  /** The intent of a paid call the gateway serves (media, embeddings, chat): only the gateway settles or aborts it. */
  managed: boolean;
}

/**
 * A page of intents, newest first. With a filter (`keyId`, `chainId`, `status`) a page examines at
 * most 1,000 of the wallet's intents, so it may hold fewer than `limit`, even none, while
 * `next_cursor` is set: keep paging until `next_cursor` is null.
 */
export interface IntentList extends Paged {
  intents: IntentListItem[];
}

/** Filters of `payments.list`. */
export interface ListIntentsParams extends PageParams {
  keyId?: string;
  chainId?: number;
  /**
   * Only intents listed with this status now (an overdue authorized intent is `expired`).
   * `authorized` finds a key's open holds, to settle or abort them at `too_many_open_intents`.
   */
  status?: IntentListItem["status"];
}

/** The price of a model output (the origin client's `ModelMeterQuote`). */
export interface MeterResult {
  modelId: string;
  provider: string;
  /** `<provider>:<modelId>`. */
  subject: string;
  /** Whether the model is in the catalog (always true: an unknown model is a 404). */
  known: boolean;
  /** The same usage as line items, to settle with. */
  meter: QuoteMeter;
  lineItems: MeteredLineItem[];
  providerAmountWei: string;
  platformFeeWei: string;
  finalAmountWei: string;
}

/** The `client.payments` group. */
export interface PaymentsResource {
  /**
   * Authorizes an intent from the bearer key (`apiKey`) on `networkId` and reserves its cap.
   * Always sends an idempotency key (given or generated, in `meta.idempotencyKey`), the same on
   * every retry: a retried prepare reserves once. Budget after the reservation in `meta.budget`.
   */
  prepare(params: PrepareParams, options?: PrepareOptions): APIPromise<PreparedIntent>;
  /** Settles an intent (at most its reservation; 409 above it). No credential needed; a bearer, if sent, must be of the same owner. */
  settle(params: SettleParams, options?: RequestOptions): APIPromise<SettledIntent>;
  /** Aborts an intent, releasing its reservation (409 on a settled intent). */
  abort(params: { paymentIntentId: string; reason?: string }, options?: RequestOptions): APIPromise<AbortedIntent>;
  /** The intents of the proven wallet (as for `keys.list`), newest first. */
  list(params?: ListIntentsParams, options?: RequestOptions): APIPromise<IntentList>;
  /** Prices a model output with the catalog's list prices plus the platform fee (no credential). */
  meter(params: UsageMeter, options?: RequestOptions): APIPromise<MeterResult>;
}

/** A random UUID v4 (Web Crypto; `getRandomValues` where `randomUUID` is missing, e.g. insecure browser contexts). */
export function randomIdempotencyKey(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Builds `client.payments`. */
export function paymentsResource(caller: Caller): PaymentsResource {
  return {
    prepare: (params, options = {}) => {
      const idempotencyKey = options.idempotencyKey ?? params.idempotencyKey ?? randomIdempotencyKey();
      // The key travels in x-idempotency-key; a different body key stays in so the gateway answers its 400.
      const { idempotencyKey: inBody, ...rest } = params;
      const body = inBody !== undefined && inBody !== idempotencyKey ? params : rest;
      return caller.call({ method: "POST", path: "/api/payments/prepare", body, idempotencyKey, idempotent: true }, options);
    },
    settle: (params, options) => caller.call({ method: "POST", path: "/api/payments/settle", body: params, idempotent: true }, options),
    abort: (params, options) => caller.call({ method: "POST", path: "/api/payments/abort", body: params, idempotent: true }, options),
    list: (params = {}, options) =>
      caller.call({ method: "GET", path: "/api/payments/intents", query: { ...params }, idempotent: true, bearer: "wallet" }, options),
    meter: (params, options) => caller.call({ method: "POST", path: "/api/payments/meter/model", body: params, idempotent: true }, options),
  };
}
