/** The options of the client and of each call, and how a call's options override the client's. */
import type { BearerPolicy } from "./http/request.js";

/** A `fetch` implementation (the global one by default; pass another for tests, proxies or old runtimes). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Credentials and context headers; each can be set on the client and overridden per call (`null` removes it for the call). */
export interface Credentials {
  /**
   * A service key (`svc-…`), sent as `Authorization: Bearer <apiKey>` on the routes a key pays
   * or acts on; on the wallet routes only when no `sessionToken` applies (see {@link Credentials.sessionToken}).
   */
  apiKey?: string | null | undefined;
  /**
   * A wallet session (`sess_…`, from `auth.signIn` or `auth.verify`), sent as
   * `Authorization: Bearer <sessionToken>` on the wallet routes only — key create and list,
   * intents list, settlement status, usage, `auth.session`, `auth.signOut` — where it proves the wallet
   * and wins over `apiKey`, unless the call itself passes an `apiKey` (and no `sessionToken`);
   * `feedback.create` sends it when there is no `apiKey`. Never sent to the routes a key pays
   * for. `auth.signIn` sets it on the client.
   */
  sessionToken?: string | null | undefined;
  /**
   * The owner wallet, sent as `x-session-user-address` (key create/list, intents list,
   * settlement status, usage, feedback reviewer). The gateway needs a proof of it: a `sessionToken`, a
   * key of that wallet (reads), or `internalSecret`; with a session it may be left out.
   */
  sessionAddress?: string | null | undefined;
  /** The chain id, sent as `x-network-id` (prepare; settlement status and feedback read it too). */
  networkId?: number | string | null | undefined;
  /**
   * The gateway's internal secret, sent as `x-internal-secret`: a server-side host app acting for
   * the wallet it names in `sessionAddress`, and `POST /api/settlement/batch`. Never use it in a browser.
   */
  internalSecret?: string | null | undefined;
}

/** Options of {@link createTollgateClient}. */
export interface ClientOptions extends Credentials {
  /** The gateway's base URL, with its mount path if any (e.g. `https://api.example.com/gateway`). */
  baseUrl: string;
  /** The fetch to use. @default globalThis.fetch */
  fetch?: FetchLike | undefined;
  /** Deadline of one attempt in ms, until the whole body is read (for a stream: until its headers arrive). @default 120000 */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt (see the retry policy in the README). 0 turns retries off. @default 2 */
  maxRetries?: number | undefined;
  /** Extra headers sent with every call. */
  headers?: Readonly<Record<string, string>> | undefined;
}

/** Options every call takes, overriding the client's. */
export interface RequestOptions extends Credentials {
  /** Aborts the call (and any retry wait): the call rejects with `UserAbortError`. */
  signal?: AbortSignal | undefined;
  /** @see ClientOptions.timeoutMs */
  timeoutMs?: number | undefined;
  /** @see ClientOptions.maxRetries */
  maxRetries?: number | undefined;
  /** Extra headers for this call; a `null` value removes a header the client would send. */
  headers?: Readonly<Record<string, string | null>> | undefined;
}

/** Options of a paid media call: a service key (`apiKey`) or an x402 payment. */
export interface PaidRequestOptions extends RequestOptions {
  /**
   * An x402 v2 `PAYMENT-SIGNATURE` (base64 JSON) paying for this call. When given, the client's
   * `apiKey` is not sent, so the gateway bills the signature rather than the key.
   */
  paymentSignature?: string | undefined;
}

/** Options of `payments.prepare`. */
export interface PrepareOptions extends RequestOptions {
  /**
   * The idempotency key (`x-idempotency-key`), 1..255 characters. When neither this nor the body's
   * `idempotencyKey` is given, the client generates one (a random UUID) per call; it stays the same
   * across that call's retries, so the gateway reserves the budget once.
   */
  idempotencyKey?: string | undefined;
}

/** The effective settings of one call. */
export interface ResolvedRequest {
  readonly fetch: FetchLike;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly signal: AbortSignal | undefined;
  /** Lower-case header names. */
  readonly headers: Record<string, string>;
}

/** Default deadline of one attempt, in ms. */
export const DEFAULT_TIMEOUT_MS = 120_000;
/** Default number of retries after the first attempt. */
export const DEFAULT_MAX_RETRIES = 2;

const CREDENTIAL_HEADERS: Record<Exclude<keyof Credentials, "apiKey" | "sessionToken">, (value: string) => [string, string]> = {
  sessionAddress: (v) => ["x-session-user-address", v],
  networkId: (v) => ["x-network-id", v],
  internalSecret: (v) => ["x-internal-secret", v],
};

function pick<K extends keyof Credentials>(key: K, client: Credentials, call: Credentials): string | undefined {
  const value = call[key] !== undefined ? call[key] : client[key];
  return value === null || value === undefined ? undefined : String(value);
}

function check(name: string, value: number | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${value}`);
  return value;
}

/** Validates client options; returns the base URL without a trailing slash. */
export function checkClientOptions(options: ClientOptions): string {
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    throw new TypeError(`baseUrl must be an absolute http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`baseUrl must be an http(s) URL, got ${options.baseUrl}`);
  check("timeoutMs", options.timeoutMs, 1);
  check("maxRetries", options.maxRetries, 0);
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** The bearer of a call under `policy` (see {@link BearerPolicy}). */
function bearer(client: Credentials, call: Credentials, policy: BearerPolicy): string | undefined {
  const apiKey = pick("apiKey", client, call);
  if (policy === "key") return apiKey;
  const session = pick("sessionToken", client, call);
  if (policy === "key-first") return apiKey ?? session;
  if (call.apiKey !== undefined && call.apiKey !== null && call.sessionToken === undefined) return apiKey;
  return session ?? apiKey;
}

/**
 * Merges the client's options with a call's: credentials become headers, per-call values win.
 * `policy` chooses the `Authorization` credential of the route (see {@link BearerPolicy}).
 */
export function resolveRequest(client: ClientOptions, call: RequestOptions = {}, policy: BearerPolicy = "key"): ResolvedRequest {
  const headers: Record<string, string> = {};
  const token = bearer(client, call, policy);
  if (token !== undefined) headers["authorization"] = `Bearer ${token}`;
  for (const key of Object.keys(CREDENTIAL_HEADERS) as (keyof typeof CREDENTIAL_HEADERS)[]) {
    const value = pick(key, client, call);
    if (value !== undefined) {
      const [name, text] = CREDENTIAL_HEADERS[key](value);
      headers[name] = text;
    }
  }
  for (const source of [client.headers, call.headers]) {
    for (const [name, value] of Object.entries(source ?? {})) {
      if (value === null) delete headers[name.toLowerCase()];
      else headers[name.toLowerCase()] = value;
    }
  }
  return {
    fetch: client.fetch ?? ((input, init) => fetch(input, init)),
    timeoutMs: check("timeoutMs", call.timeoutMs, 1) ?? client.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxRetries: check("maxRetries", call.maxRetries, 0) ?? client.maxRetries ?? DEFAULT_MAX_RETRIES,
    signal: call.signal,
    headers,
  };
}
