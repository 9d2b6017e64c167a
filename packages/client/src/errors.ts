/**
 * The errors the client throws: {@link TollgateError} and one subclass per HTTP status the gateway
 * answers, plus the client-side {@link ConnectionError}, {@link TimeoutError} and
 * {@link UserAbortError}. Each status error carries the gateway's error envelope
 * `{error:{code, message, type, param?, details?, requestId}}` as fields.
 */
import type { PaymentRequired } from "./types/x402.js";
import type { RateLimitInfo } from "./types/common.js";
import { decodeBase64Json } from "./http/encoding.js";
import { rateLimitOf } from "./http/meta.js";

/** What a {@link TollgateError} is built from. */
export interface TollgateErrorInit {
  /** HTTP status; undefined for client-side failures (connection, timeout, abort). */
  status?: number | undefined;
  /** The envelope's snake_case `code` (e.g. `budget_exhausted`). */
  code?: string | undefined;
  /** The envelope's OpenAI-style `type` (e.g. `insufficient_quota`). */
  type?: string | undefined;
  /** The request field at fault. */
  param?: string | undefined;
  /** The gateway's request id (envelope `requestId`, else the `x-request-id` header). */
  requestId?: string | undefined;
  /** Machine-readable extra detail of the envelope. */
  details?: Record<string, unknown> | undefined;
  /** The response headers. */
  headers?: Headers | undefined;
  /** The parsed response body (JSON value, or text when it was not JSON). */
  body?: unknown;
  cause?: unknown;
}

/**
 * The base of every error the client throws. For an HTTP error answer, `status` is set and the
 * other fields come from the gateway's error envelope; for client-side failures `status` is
 * undefined. `instanceof` works across all subclasses.
 */
export class TollgateError extends Error {
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly type: string | undefined;
  readonly param: string | undefined;
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Headers | undefined;
  readonly body: unknown;

  constructor(message: string, init: TollgateErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.type = init.type;
    this.param = init.param;
    this.requestId = init.requestId;
    this.details = init.details;
    this.headers = init.headers;
    this.body = init.body;
  }
}

/** 400: a malformed or invalid request (`invalid_request`, with `param`). */
export class BadRequestError extends TollgateError {}
/**
 * 401: no, unknown, revoked or expired credential (`authentication_required`, `invalid_key`,
 * `key_revoked`, `key_expired`, `unauthorized`), a token replaced by `keys.rotate` whose grace is
 * over (`key_rotated`: use the new token), or a wallet that is named but not proven, or a sign-in
 * that failed (`wallet_unverified`: sign in with the wallet, see `auth.signIn`).
 */
export class AuthenticationError extends TollgateError {}
/**
 * 402: the key's budget is too small (`budget_exhausted`), its cap for the model is
 * (`model_budget_exhausted`, `details.scope` names the cap), or a paid route wants a payment
 * (`payment_required`), or a key's budget is beyond what the wallet has approved and holds for the
 * gateway's settlement spender (`insufficient_funds`, from `keys.create` and `keys.update`). When the gateway offers x402, {@link paymentRequired} holds the decoded
 * `PAYMENT-REQUIRED` challenge to sign and send back as `paymentSignature`.
 */
export class PaymentRequiredError extends TollgateError {
  /** The decoded x402 challenge (`PAYMENT-REQUIRED` header, else an x402 body), if any. */
  readonly paymentRequired: PaymentRequired | undefined;
  constructor(message: string, init: TollgateErrorInit = {}) {
    super(message, init);
    this.paymentRequired = challengeOf(init.headers, init.body);
  }
}
/**
 * 403 `forbidden`: the key belongs to another wallet, `x-session-user-address` names another
 * wallet than the proven one, a service key tried to create or rotate a key or to change more
 * than its own name. 403 `model_not_allowed`: the key's `models` allow-list does not cover the
 * model of the call (`details.allowed` lists it); nothing was reserved.
 */
export class PermissionDeniedError extends TollgateError {}
/** 404: unknown route, key, intent, model, agent or video job (`not_found`, `key_not_found`, …). */
export class NotFoundError extends TollgateError {}
/** 405: wrong method on a known path (`method_not_allowed`); `allow` lists the accepted methods. */
export class MethodNotAllowedError extends TollgateError {
  /** The methods of the `Allow` header. */
  readonly allow: string[];
  constructor(message: string, init: TollgateErrorInit = {}) {
    super(message, init);
    this.allow = (init.headers?.get("allow") ?? "").split(",").map((m) => m.trim()).filter(Boolean);
  }
}
/** 408: the server gave up waiting for the request (retried). */
export class RequestTimeoutError extends TollgateError {}
/**
 * 409: a definitive conflict (`chain_mismatch`, `amount_exceeds_reservation`, `invalid_state`,
 * `idempotency_conflict`, `already_claimed`, `limit_below_committed`: a `keys.update` budget
 * limit below what the current window has used and reserved; `too_many_keys`: a `keys.create`
 * past the wallet's cap of live keys, `details.limit`).
 */
export class ConflictError extends TollgateError {}
/** 413: the body is over the gateway's limit (`payload_too_large`). */
export class PayloadTooLargeError extends TollgateError {}
/** 415: a body sent without `Content-Type: application/json` (`unsupported_media_type`; the client always sends it). */
export class UnsupportedMediaTypeError extends TollgateError {}
/** 422: the server understood the request but cannot process it (not sent by the gateway itself). */
export class UnprocessableEntityError extends TollgateError {}
/** 429: rate limited (`rate_limited`), or a key at its cap of open payment intents (`too_many_open_intents`); retried after `Retry-After`. */
export class RateLimitError extends TollgateError {
  /** The limit that was hit (`x-ratelimit-*` headers), when the gateway sent it. */
  readonly rateLimit: RateLimitInfo | undefined;
  constructor(message: string, init: TollgateErrorInit = {}) {
    super(message, init);
    this.rateLimit = init.headers ? rateLimitOf(init.headers) : undefined;
  }
}
/** 500: an unexpected gateway error (`internal_error`). */
export class InternalServerError extends TollgateError {}
/** 502: an upstream provider or external service failed (`upstream_error`). */
export class BadGatewayError extends TollgateError {}
/** 503: a feature is not configured (`not_configured`, message says what to configure) or the service is unavailable. */
export class ServiceUnavailableError extends TollgateError {}
/** 504: an upstream provider or external service timed out (`upstream_timeout`). */
export class GatewayTimeoutError extends TollgateError {}

/** The request never got an answer: DNS, refused or reset connection, or a body cut short. `cause` holds the fetch error. */
export class ConnectionError extends TollgateError {}
/** An attempt took longer than `timeoutMs` (a {@link ConnectionError}: retried like one). */
export class TimeoutError extends ConnectionError {}
/** The caller's `AbortSignal` aborted the call; `cause` is the signal's reason. Never retried. */
export class UserAbortError extends TollgateError {}

type ErrorClass = new (message: string, init?: TollgateErrorInit) => TollgateError;

/** The error class of each HTTP status; other statuses throw a plain {@link TollgateError}. */
export const ERROR_CLASSES: Readonly<Record<number, ErrorClass>> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: PaymentRequiredError,
  403: PermissionDeniedError,
  404: NotFoundError,
  405: MethodNotAllowedError,
  408: RequestTimeoutError,
  409: ConflictError,
  413: PayloadTooLargeError,
  415: UnsupportedMediaTypeError,
  422: UnprocessableEntityError,
  429: RateLimitError,
  500: InternalServerError,
  502: BadGatewayError,
  503: ServiceUnavailableError,
  504: GatewayTimeoutError,
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

function challengeOf(headers: Headers | undefined, body: unknown): PaymentRequired | undefined {
  const header = headers?.get("payment-required");
  const decoded = header ? decodeBase64Json(header) : undefined;
  if (isObject(decoded) && Array.isArray(decoded["accepts"])) return decoded as unknown as PaymentRequired;
  if (isObject(body) && typeof body["x402Version"] === "number" && Array.isArray(body["accepts"])) return body as unknown as PaymentRequired;
  return undefined;
}

/**
 * The error for an HTTP error answer. Reads the envelope `{error:{…}}`; an x402 challenge body
 * (whose `error` is a string) becomes `payment_required`; any other body keeps its text as the
 * message. The request id falls back to the `x-request-id` header.
 */
export function errorFromResponse(status: number, body: unknown, headers: Headers): TollgateError {
  const envelope = isObject(body) && isObject(body["error"]) ? body["error"] : undefined;
  const x402Message = isObject(body) && typeof body["x402Version"] === "number" ? str(body["error"]) : undefined;
  const code = str(envelope?.["code"]) ?? (x402Message !== undefined ? "payment_required" : undefined);
  const text = typeof body === "string" && body.trim() !== "" ? body.trim().slice(0, 500) : undefined;
  const message = str(envelope?.["message"]) ?? x402Message ?? text ?? `HTTP ${status}`;
  const Class = ERROR_CLASSES[status] ?? TollgateError;
  return new Class(`${status}${code ? ` ${code}` : ""}: ${message}`, {
    status,
    code,
    type: str(envelope?.["type"]),
    param: str(envelope?.["param"]),
    requestId: str(envelope?.["requestId"]) ?? headers.get("x-request-id") ?? undefined,
    details: isObject(envelope?.["details"]) ? envelope["details"] : undefined,
    headers,
    body,
  });
}
