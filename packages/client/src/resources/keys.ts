/** `client.keys`: budgeted service keys and their governance (docs/payments.md "Service keys"). */
import type { APIPromise } from "../api-promise.js";
import { segment, type Caller } from "../http/caller.js";
import type { RequestOptions } from "../options.js";
import type { Amount, Paged } from "../types/common.js";

/** Derived key status. */
export type KeyStatus = "active" | "revoked" | "expired" | "exhausted";

/**
 * A key's budget window, on the UTC calendar: `daily` from 00:00, `weekly` from Monday 00:00,
 * `monthly` from the 1st at 00:00. The key's `budgetLimit` (and each per-model cap) applies per
 * window; a new window starts with nothing used, open reservations carried over.
 */
export type BudgetPeriod = "daily" | "weekly" | "monthly";

/** One per-model cap of a key with its counters in the current window. Decimal strings of atomic units. */
export interface ModelBudget {
  limit: string;
  used: string;
  reserved: string;
  /** `limit - used - reserved`. */
  remaining: string;
}

/** A key as list and get return it: no token material. Amounts are decimal strings. */
export interface ServiceKey {
  /** `key_…`. */
  keyId: string;
  name?: string;
  purpose: "session" | "api";
  chainId: number;
  budgetLimit: string;
  budgetUsed: string;
  budgetReserved: string;
  budgetRemaining: string;
  status: KeyStatus;
  /** Unix ms. */
  createdAt: number;
  /** Unix ms. */
  expiresAt: number;
  revokedAt?: number;
  lastUsedAt?: number;
  /** The key's own request rate limit, when it was created with one. */
  rateLimit?: KeyRateLimit;
  /** The budget window, when the key has one: the budget fields above are the current window's. */
  budgetPeriod?: BudgetPeriod;
  /** Start of the current window (Unix ms, UTC), with `budgetPeriod`. */
  periodStartsAt?: number;
  /** End of the current window (Unix ms, exclusive), with `budgetPeriod`. */
  periodEndsAt?: number;
  /** The models the key may pay for (exact catalog ids and `<provider>/*`); absent: every model. */
  models?: string[];
  /** The per-model caps by model id or `<provider>/*`, with their counters in the current window. */
  modelBudgets?: Record<string, ModelBudget>;
  /** Unix ms until which the token before the last rotation still works; only while that grace lasts. */
  previousTokenValidUntil?: number;
}

/** A per-key request rate limit; over it the gateway answers 429 `rate_limited` (`RateLimitError`). */
export interface KeyRateLimit {
  /** Requests per minute (a positive integer). */
  requestsPerMinute: number;
}

/** A created key: the view plus its `token` (`svc-…`), returned this once only. */
export interface CreatedServiceKey extends ServiceKey {
  token: string;
}

/** The body of `keys.create`. */
export interface CreateKeyParams {
  /** Positive, atomic units. */
  budgetLimit: Amount;
  /** Unix ms, in the future. */
  expiresAt: number;
  /** Chain id of the key. @default the client's `networkId` */
  networkId?: number | string;
  /** A `session` key supersedes the wallet's active session key on the chain. */
  purpose: "session" | "api";
  name?: string;
  /** A request rate limit of this key (else the gateway's default for keys, if any). */
  rateLimit?: KeyRateLimit;
  /** A budget window: `budgetLimit` applies per UTC calendar day, week or month. @default none (a lifetime budget) */
  budgetPeriod?: BudgetPeriod;
  /**
   * The models the key may pay for: exact catalog ids (`gpt-4o`) and `<provider>/*` patterns
   * (`openai/*`), at least one; a call on another model is 403 `model_not_allowed`. Unknown ids
   * or providers are 400. @default every model
   */
  models?: string[];
  /**
   * Per-model caps inside `budgetLimit`, by model id or `<provider>/*` (the exact id's entry wins
   * over its provider's); counted per window like the key. Past a cap, 402 `model_budget_exhausted`.
   */
  modelBudgets?: Record<string, Amount>;
}

/**
 * The body of `keys.update`: only the fields to change; `null` clears an optional one. A key
 * acting on itself may change only `name`; everything else needs the owner's wallet proof.
 */
export interface UpdateKeyParams {
  name?: string | null;
  /** Positive, atomic units; never below what the current window has used and reserved (409 `limit_below_committed`). */
  budgetLimit?: Amount;
  /** Unix ms, in the future. */
  expiresAt?: number;
  /** Setting or changing the period starts a fresh window (nothing used; reservations carry over); `null` makes the budget a lifetime one again. */
  budgetPeriod?: BudgetPeriod | null;
  /** Replaces the allow-list; `null` allows every model. */
  models?: string[] | null;
  /** Replaces the per-model caps; `null` removes them. */
  modelBudgets?: Record<string, Amount> | null;
  /** Replaces the key's rate limit; `null` removes it. */
  rateLimit?: KeyRateLimit | null;
}

/** The body of `keys.rotate`. */
export interface RotateKeyParams {
  /**
   * How long the old token keeps working, in seconds (0..604800, 7 days); from that millisecond on
   * it answers 401 `key_rotated`. @default 3600
   */
  graceSeconds?: number;
}

/** The answer of `keys.rotate`: the key view, its new `token` (returned this once only), and the old token's end. */
export interface RotatedServiceKey extends ServiceKey {
  token: string;
  /** Unix ms at which the old token stops working (the rotation's time when `graceSeconds` was 0). */
  previousTokenValidUntil: number;
}

/** One recorded change of a key. */
export interface KeyEvent {
  /** `kev_…`. */
  eventId: string;
  keyId: string;
  /** Unix ms. */
  at: number;
  /** `update` (`keys.update`) or `rotate` (`keys.rotate`). */
  type: "update" | "rotate";
  /** Who made the change: `wallet:<address>` (the owner) or `key:<keyId>` (the key renaming itself). */
  actor: string;
  /**
   * Each changed field with its old and new value as the wire shows it (amounts as decimal
   * strings, `null` for unset); a rotation records `previousTokenValidUntil`.
   */
  changes: Record<string, { from: unknown; to: unknown }>;
}

/** A page of a key's events, newest first. */
export interface KeyEventList extends Paged {
  events: KeyEvent[];
}

/** A page of keys, newest first. */
export interface KeyList extends Paged {
  keys: ServiceKey[];
}

/** The answer of `keys.revoke`. */
export interface RevokedKey {
  success: true;
  keyId: string;
  /** Unix ms of the (first) revocation. */
  revokedAt: number;
}

/** The answer of the legacy `keys.settle`. */
export interface DirectCharge {
  success: true;
  keyId: string;
  amount: string;
  budgetRemaining: string;
}

/**
 * The answer of `keys.getActive` (`GET /api/session`): the wallet's active session key on a chain,
 * never its token. Amounts are decimal strings of atomic units.
 */
export type ActiveSession =
  | { hasSession: false; reason: string }
  | {
      hasSession: true;
      keyId: string;
      budgetLimit: string;
      budgetUsed: string;
      /** Reserved by authorized payment intents. */
      budgetLocked: string;
      budgetRemaining: string;
      /** Unix ms. */
      expiresAt: number;
      chainId: number;
      name?: string;
      status: {
        isActive: boolean;
        isExpired: boolean;
        expiresInSeconds: number;
        /** remaining / limit × 100, floored to hundredths. */
        budgetPercentRemaining: number;
        warnings: { budgetDepleted: boolean; budgetLow: boolean; expiringSoon: boolean; expired: boolean };
      };
    };

/** Paging of a list. */
export interface PageParams {
  /** 1..200. @default 50 */
  limit?: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

/** The `client.keys` group. */
export interface KeysResource {
  /**
   * Creates a key for the proven wallet: a `sessionToken` (its wallet; `sessionAddress` may be
   * left out) or `internalSecret` with `sessionAddress`. A service key cannot create keys (403
   * `forbidden`); no proof is 401 (`wallet_unverified` when only `sessionAddress` is sent).
   * 201 with the token. Not retried after a connection error (it would create a second key).
   * Past the wallet's cap of live keys: `ConflictError` `too_many_keys` (revoke one first). On a
   * chain where the gateway settles, the wallet's USDC allowance to the settlement spender and its
   * balance must cover the new budget beside its other keys' and queued charges:
   * `PaymentRequiredError` `insufficient_funds` (`details`: spender, allowance, balance, required).
   */
  create(params: CreateKeyParams, options?: RequestOptions): APIPromise<CreatedServiceKey>;
  /** The keys of the proven wallet (a `sessionToken`, a live key of the wallet as `apiKey`, or `internalSecret` with `sessionAddress`), newest first. */
  list(params?: PageParams, options?: RequestOptions): APIPromise<KeyList>;
  /**
   * The active session key of the proven wallet (as for `list`) on `chainId` (else the client's
   * `networkId`, else the gateway's default chain); `{hasSession:false, reason}` when there is none.
   */
  getActive(params?: { chainId?: number }, options?: RequestOptions): APIPromise<ActiveSession>;
  /**
   * One key; the bearer (`apiKey`) is a live key: the key itself or another key of its owner (403
   * otherwise, 404 unknown; a revoked or expired bearer is 401). Budget in `meta.budget`.
   */
  get(keyId: string, options?: RequestOptions): APIPromise<ServiceKey>;
  /**
   * Revokes a key: the bearer is a live key of its owner (`apiKey`, as for get) or, without one,
   * the owner's wallet session (`sessionToken`, or the browser's session cookie); revoking again
   * answers the first revocation.
   */
  revoke(keyId: string, options?: RequestOptions): APIPromise<RevokedKey>;
  /**
   * Legacy: charges `amount` to the bearer key at once (reserve and settle in one step); 402
   * `budget_exhausted` when it does not fit. Never retried after a connection error or timeout.
   */
  settle(params: { amount: Amount }, options?: RequestOptions): APIPromise<DirectCharge>;
  /**
   * Changes a key (`PATCH /api/keys/{keyId}`) and answers its view, budget in `meta.budget`. The
   * owner's wallet proof — a `sessionToken`, or `internalSecret` with `sessionAddress` — may change
   * every field; the key itself (as the call's `apiKey`) may change only its `name` (anything else,
   * or another key, is 403 `forbidden`). A `budgetLimit` below the current window's used + reserved
   * is 409 `limit_below_committed` (`ConflictError`, `details: {budgetUsed, budgetReserved}`); a
   * change that lets the key spend more on a settled chain needs the wallet's funds to cover it
   * (`PaymentRequiredError` `insufficient_funds`, as `create`). Every change is recorded (see `events`); a patch that changes nothing records nothing. Retried
   * like the other idempotent calls: it sets values, so repeating it changes nothing more.
   */
  update(keyId: string, patch: UpdateKeyParams, options?: RequestOptions): APIPromise<ServiceKey>;
  /**
   * Issues a new token for a key (`POST /api/keys/{keyId}/rotate`; owner's wallet proof as for
   * `update`, a service key is 403): budget, intents and history stay. The old token keeps working
   * for `graceSeconds` (default 3600), then answers 401 `key_rotated`; only one old token is kept,
   * so rotating again ends the older one at once. Not retried after a connection error (a second
   * rotation would end the token you still use).
   */
  rotate(keyId: string, params?: RotateKeyParams, options?: RequestOptions): APIPromise<RotatedServiceKey>;
  /**
   * The recorded changes of a key, newest first (`GET /api/keys/{keyId}/events`): the owner's
   * wallet proof, or a live key of the same owner as `apiKey`. Page with `next_cursor`.
   */
  events(keyId: string, params?: PageParams, options?: RequestOptions): APIPromise<KeyEventList>;
}

/** Builds `client.keys`; `networkId` is the client's default chain. */
export function keysResource(caller: Caller, networkId: number | string | null | undefined): KeysResource {
  return {
    create: (params, options) => {
      const chain = params.networkId ?? options?.networkId ?? networkId;
      const body = { ...params, ...(chain === undefined || chain === null ? {} : { networkId: chain }) };
      return caller.call({ method: "POST", path: "/api/keys", body, idempotent: false, bearer: "wallet" }, options);
    },
    list: (params = {}, options) => caller.call({ method: "GET", path: "/api/keys", query: { ...params }, idempotent: true, bearer: "wallet" }, options),
    getActive: (params = {}, options) =>
      caller.call({ method: "GET", path: "/api/session", idempotent: true, bearer: "wallet" }, params.chainId === undefined ? options : { ...options, networkId: params.chainId }),
    get: (keyId, options) => caller.call({ method: "GET", path: `/api/keys/${segment(keyId)}`, idempotent: true }, options),
    revoke: (keyId, options) => caller.call({ method: "DELETE", path: `/api/keys/${segment(keyId)}`, idempotent: true, bearer: "key-first" }, options),
    settle: (params, options) => caller.call({ method: "POST", path: "/api/keys/settle", body: { amount: params.amount }, idempotent: false }, options),
    update: (keyId, patch, options) =>
      caller.call({ method: "PATCH", path: `/api/keys/${segment(keyId)}`, body: patch, idempotent: true, bearer: "wallet" }, options),
    rotate: (keyId, params = {}, options) =>
      caller.call({ method: "POST", path: `/api/keys/${segment(keyId)}/rotate`, body: params, idempotent: false, bearer: "wallet" }, options),
    events: (keyId, params = {}, options) =>
      caller.call({ method: "GET", path: `/api/keys/${segment(keyId)}/events`, query: { ...params }, idempotent: true, bearer: "wallet" }, options),
  };
}
