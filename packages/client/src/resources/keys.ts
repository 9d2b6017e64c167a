/** `client.keys`: budgeted service keys (CONTRACT.md "Service keys"). */
import type { APIPromise } from "../api-promise.js";
import { segment, type Caller } from "../http/caller.js";
import type { RequestOptions } from "../options.js";
import type { Amount, Paged } from "../types/common.js";

/** Derived key status. */
export type KeyStatus = "active" | "revoked" | "expired" | "exhausted";

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
  /** Revokes a key (same bearer rule as get); revoking again answers the first revocation. */
  revoke(keyId: string, options?: RequestOptions): APIPromise<RevokedKey>;
  /**
   * Legacy: charges `amount` to the bearer key at once (reserve and settle in one step); 402
   * `budget_exhausted` when it does not fit. Never retried after a connection error or timeout.
   */
  settle(params: { amount: Amount }, options?: RequestOptions): APIPromise<DirectCharge>;
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
    revoke: (keyId, options) => caller.call({ method: "DELETE", path: `/api/keys/${segment(keyId)}`, idempotent: true }, options),
    settle: (params, options) => caller.call({ method: "POST", path: "/api/keys/settle", body: { amount: params.amount }, idempotent: false }, options),
  };
}
