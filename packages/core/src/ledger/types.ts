/**
 * The contract of the payment-intent service (ledger/service.ts): its inputs, its results and its
 * methods, apart from the implementation.
 */
import type { ModelRef } from "../keys/governance.js";
import type { RequestTrace } from "../observability/telemetry.js";
import type { IntentRecord, IntentStatus, KeyBudget, KeyRecord } from "../store/types.js";
import type { VideoJobRecord } from "../store/video-types.js";
import type { MeterInput } from "./meter.js";

/** Prepare parameters after HTTP validation. Exactly one of `maxAmount` / `meter`. */
export interface PrepareInput {
  readonly key: KeyRecord;
  readonly chainId: number;
  readonly service: string;
  readonly action: string;
  readonly resource: string;
  readonly method: string;
  readonly maxAmount?: bigint | undefined;
  readonly meter?: MeterInput | undefined;
  readonly runId?: string | undefined;
  readonly idempotencyKey?: string | undefined;
  /**
   * With `maxAmount` (and no idempotency key): when the key cannot afford `maxAmount`, reserve
   * everything it has left instead, as long as that is at least `minAmount`. The intent's
   * `maxAmount` is what was reserved. A guard miss is re-tried with the remaining budget the store
   * reported (each miss follows another caller's reservation), so 402 `budget_exhausted` means
   * less than `minAmount` was left at that moment.
   */
  readonly minAmount?: bigint | undefined;
  /**
   * The model the reservation pays for (a paid route's card). With it — or with a `meter`, whose
   * subject names one — a key's allow-list is enforced (403 `model_not_allowed`) and its per-model
   * cap for that model is reserved against in the same atomic step (402 `model_budget_exhausted`).
   */
  readonly model?: ModelRef | undefined;
  /** The intent's lifetime when it must outlive the default `intentTtlMs` (a long stream); never shorter than the default, never longer than MAX_INTENT_LIFETIME_MS. */
  readonly ttlMs?: number | undefined;
  /**
   * The gateway's own paid call holds this intent: only the gateway settles or releases it
   * ({@link LedgerService.settleOwn}, {@link LedgerService.abortOwn}). The public settle and abort
   * refuse it with 403 `forbidden`, so a caller who reads its id from a response header (a chat
   * stream sends it first) cannot release or zero the payment of a call still being served.
   */
  readonly managed?: boolean | undefined;
}

/** Settle parameters. Exactly one of `finalAmount` / `meter`. */
export interface SettleInput {
  readonly intentId: string;
  readonly finalAmount?: bigint | undefined;
  readonly meter?: MeterInput | undefined;
  /** The bearer's key when one was sent; it must belong to the intent's owner. */
  readonly bearer?: KeyRecord | null;
  /** A video job to insert in the same atomic step as the settlement, built from the settle answer. */
  readonly videoJob?: ((view: FinishView) => VideoJobRecord) | undefined;
  /** The request's trace: a settle that charges records its amount there (a replay does not). */
  readonly trace?: RequestTrace | undefined;
}

/** What a prepare returns. `replay` is true for an idempotent repeat. */
export interface PrepareResult {
  readonly intent: IntentRecord;
  /** The key's budget after the reservation (or, on a replay, the key as stored). */
  readonly key: KeyBudget;
  readonly replay: boolean;
}

/** The wire answer of settle/abort (stored with the intent so repeats replay it exactly). */
export type FinishView = Record<string, unknown>;

/** The payment-intent service. */
export interface LedgerService {
  prepare(input: PrepareInput): Promise<PrepareResult>;
  /** Settles an intent prepared by `POST /api/payments/prepare` (403 `forbidden` on a {@link PrepareInput.managed} one). */
  settle(input: SettleInput): Promise<{ view: FinishView; key?: KeyBudget; replay: boolean }>;
  /**
   * Settles an intent this process prepared and still holds (the paid-call pipeline): no read
   * before the guarded step, and no answer stored for replays (nobody else settles it; a second
   * settle of it is a 409 `invalid_state`). Errors as {@link settle}.
   */
  settleOwn(input: {
    intent: IntentRecord;
    finalAmount: bigint;
    videoJob?: SettleInput["videoJob"];
  }): Promise<{ view: FinishView; key?: KeyBudget; replay: boolean }>;
  /** Aborts an intent prepared by `POST /api/payments/prepare` (403 `forbidden` on a {@link PrepareInput.managed} one). */
  abort(input: { intentId: string; reason?: string | undefined; bearer?: KeyRecord | null }): Promise<{ view: FinishView; key?: KeyBudget; replay: boolean }>;
  /**
   * Releases an intent this process prepared for a paid call ({@link PrepareInput.managed}) and
   * still holds: upstream failure, a client gone. No read before the guarded step, as
   * {@link settleOwn}. Errors as {@link abort}.
   */
  abortOwn(input: { intent: IntentRecord; reason: string }): Promise<{ view: FinishView; key?: KeyBudget; replay: boolean }>;
  /**
   * Releases overdue reservations (the sweeper), oldest first, in up to `batches` batches of
   * `limit` (default 500 and 1): it stops at the first batch that comes back short, and yields to
   * the event loop between batches. Returns how many intents expired.
   */
  sweep(limit?: number, batches?: number): Promise<number>;
  /**
   * A page of `owner`'s intents, newest first. `cursor` is an opaque `nextCursor` of a previous page.
   * `status` filters by the status listed at `now` (default: the clock's), where an overdue
   * authorized intent is `expired`. With a filter a page examines at most
   * `INTENT_LIST_SCAN` (1,000) intents, so it may be short, even empty, with a `nextCursor`.
   * @throws GatewayError `invalid_request` on a cursor this API did not make.
   */
  list(
    owner: string,
    options: {
      limit: number;
      cursor?: string | undefined;
      keyId?: string | undefined;
      chainId?: number | undefined;
      status?: IntentStatus | undefined;
      now?: number;
    },
  ): Promise<{ intents: IntentRecord[]; nextCursor: string | null }>;
}

/** Options of the ledger. */
export interface LedgerOptions {
  /** Lifetime of an unsettled intent. @default 900000 (15 min) */
  readonly intentTtlMs: number;
  /** Platform fee in basis points. @default 100 */
  readonly feeBps: number;
  /** The most authorized intents one key may hold at once (429 `too_many_open_intents` beyond); absent: no cap. */
  readonly openIntentsPerKey?: number | undefined;
}
