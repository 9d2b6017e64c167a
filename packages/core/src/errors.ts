/**
 * The one error class and the one code -> status table of the gateway.
 * Services throw {@link GatewayError} with a stable code; the HTTP layer turns it into the
 * error envelope `{error:{code,message,type,param?,details?,requestId}}` (docs/api.md "Errors").
 */

/** One row of the error table: HTTP status, OpenAI-style `type`, and the default message. */
export interface ErrorSpec {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

/** Every error code the gateway emits, with its status. docs/errors are generated from this table. */
export const ERROR_TABLE = {
  invalid_request: { status: 400, type: "invalid_request_error", message: "The request is invalid." },
  payload_too_large: { status: 413, type: "invalid_request_error", message: "The request body is too large." },
  authentication_required: { status: 401, type: "authentication_error", message: "A credential is required." },
  invalid_key: { status: 401, type: "authentication_error", message: "The service key is unknown or malformed." },
  key_revoked: { status: 401, type: "authentication_error", message: "The service key has been revoked." },
  key_expired: { status: 401, type: "authentication_error", message: "The service key has expired." },
  key_rotated: { status: 401, type: "authentication_error", message: "The service key's token was rotated and its grace period is over; use the new token." },
  unauthorized: { status: 401, type: "authentication_error", message: "The internal secret is wrong." },
  wallet_unverified: { status: 401, type: "authentication_error", message: "The wallet is not proven: sign in with the wallet (SIWE) or send a key of that wallet." },
  forbidden: { status: 403, type: "permission_error", message: "The key belongs to another wallet." },
  model_not_allowed: { status: 403, type: "permission_error", message: "The key may not pay for this model." },
  budget_exhausted: { status: 402, type: "insufficient_quota", message: "The key's remaining budget is too small." },
  model_budget_exhausted: { status: 402, type: "insufficient_quota", message: "The key's budget for this model is too small." },
  payment_required: { status: 402, type: "payment_required", message: "Payment is required." },
  insufficient_funds: {
    status: 402,
    type: "insufficient_quota",
    message: "The wallet's USDC allowance or balance for the settlement spender does not cover its keys' budgets and queued charges.",
  },
  not_found: { status: 404, type: "not_found_error", message: "No route matches this path." },
  key_not_found: { status: 404, type: "not_found_error", message: "The key does not exist." },
  intent_not_found: { status: 404, type: "not_found_error", message: "The payment intent does not exist." },
  model_not_found: { status: 404, type: "not_found_error", message: "The model does not exist." },
  agent_not_found: { status: 404, type: "not_found_error", message: "The agent does not exist." },
  job_not_found: { status: 404, type: "not_found_error", message: "The video job does not exist." },
  method_not_allowed: { status: 405, type: "invalid_request_error", message: "The method is not allowed on this path." },
  request_timeout: { status: 408, type: "invalid_request_error", message: "The request body arrived too slowly." },
  unsupported_media_type: { status: 415, type: "invalid_request_error", message: "The body must be JSON (Content-Type: application/json)." },
  chain_mismatch: { status: 409, type: "conflict_error", message: "The key's chain differs from the request chain." },
  amount_exceeds_reservation: { status: 409, type: "conflict_error", message: "The amount exceeds the reservation." },
  limit_below_committed: { status: 409, type: "conflict_error", message: "The budget limit would be below what the key has used and reserved in its current window." },
  invalid_state: { status: 409, type: "conflict_error", message: "The object is not in a state that allows this." },
  idempotency_conflict: { status: 409, type: "conflict_error", message: "The idempotency key was used with different parameters." },
  too_many_keys: { status: 409, type: "conflict_error", message: "The wallet has too many live service keys; revoke one, or wait for one to expire." },
  already_claimed: { status: 409, type: "conflict_error", message: "The address has already claimed on this chain." },
  rate_limited: { status: 429, type: "rate_limit_error", message: "Too many requests." },
  too_many_open_intents: {
    status: 429,
    type: "rate_limit_error",
    message: "The key holds too many open payment intents; settle or abort some, or wait for them to finish or expire.",
  },
  internal_error: { status: 500, type: "api_error", message: "Internal error." },
  upstream_error: { status: 502, type: "api_error", message: "The upstream service failed." },
  not_configured: { status: 503, type: "api_error", message: "This feature is not configured." },
  overloaded: { status: 503, type: "api_error", message: "The gateway is reading too many request bodies at once; retry shortly." },
  chain_unavailable: { status: 503, type: "api_error", message: "The chain's RPC did not answer; retry shortly." },
  not_ready: { status: 503, type: "api_error", message: "The gateway is not ready: a store, chain or upstream check failed." },
  upstream_timeout: { status: 504, type: "api_error", message: "The upstream service timed out." },
} as const satisfies Record<string, ErrorSpec>;

/** A stable, snake_case error code. */
export type ErrorCode = keyof typeof ERROR_TABLE;

/** Optional parts of an error beyond its code and message. */
export interface GatewayErrorOptions {
  /** The request field at fault (OpenAI's `param`). */
  param?: string;
  /** Machine-readable extra detail, returned as `details`. */
  details?: Record<string, unknown>;
  /** Extra response headers (e.g. `Allow`, `Retry-After`). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * An expected failure with a stable code. Its HTTP status comes from {@link ERROR_TABLE};
 * throw it only at the API boundary (services return values for expected guard misses).
 */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly param?: string;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message?: string, options: GatewayErrorOptions = {}) {
    const spec = ERROR_TABLE[code];
    super(message ?? spec.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "GatewayError";
    this.code = code;
    this.status = spec.status;
    this.type = spec.type;
    if (options.param !== undefined) this.param = options.param;
    if (options.details !== undefined) this.details = options.details;
    if (options.headers !== undefined) this.headers = options.headers;
  }
}

/** Shorthand for a 400 `invalid_request` naming the offending field. */
export function invalidRequest(message: string, param?: string, details?: Record<string, unknown>): GatewayError {
  return new GatewayError("invalid_request", message, { ...(param === undefined ? {} : { param }), ...(details ? { details } : {}) });
}

/** 413 `payload_too_large` for a request body over `limit` bytes (`details.limitBytes`), as every adapter answers it. */
export function bodyTooLarge(limit: number): GatewayError {
  return new GatewayError("payload_too_large", `The request body is larger than ${limit} bytes.`, { details: { limitBytes: limit } });
}

/** The error envelope (docs/api.md "Errors") for one error. */
export interface ErrorEnvelope {
  error: { code: string; message: string; type: string; param?: string; details?: Record<string, unknown>; requestId: string };
}

/** Builds the wire envelope of an error; unknown errors become a 500 without leaking internals. */
export function toErrorEnvelope(error: unknown, requestId: string): { status: number; body: ErrorEnvelope; headers: Record<string, string> } {
  const e = error instanceof GatewayError ? error : new GatewayError("internal_error");
  const body: ErrorEnvelope = { error: { code: e.code, message: e.message, type: e.type, requestId } };
  if (e.param !== undefined) body.error.param = e.param;
  if (e.details !== undefined) body.error.details = e.details;
  return { status: e.status, body, headers: e.headers ?? {} };
}
