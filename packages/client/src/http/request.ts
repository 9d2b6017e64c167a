/**
 * The one request loop: build the URL and headers, run attempts under a timeout and the caller's
 * signal, read the body, turn error answers into typed errors, and retry what the policy in
 * ./retry.ts allows, waiting as the server asks.
 */
import { TollgateError, UserAbortError, errorFromResponse } from "../errors.js";
import type { ResolvedRequest } from "../options.js";
import { startAttempt, userAbort, type Attempt } from "./attempt.js";
import { queryString, stringifyJson, type QueryValue } from "./encoding.js";
import { metaOf, type ResponseMeta, type WithMeta } from "./meta.js";
import { isRetryableAnswer, retryDelayMs, sleep } from "./retry.js";

/** HTTP methods the client sends. */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS";

/**
 * Which credential a route takes as `Authorization: Bearer …`:
 * - `"key"`: the `apiKey` only (routes a key pays for or acts on);
 * - `"wallet"`: a wallet route — the `sessionToken`, else the `apiKey`; a call's own `apiKey`
 *   (without a call `sessionToken`) wins over the client's session token;
 * - `"key-first"`: the `apiKey`, else the `sessionToken` (feedback attribution).
 */
export type BearerPolicy = "key" | "wallet" | "key-first";

/** How a successful body is read: JSON (text when the answer is not JSON), raw bytes, or left unread as a stream. */
/**
 * What a 2xx answer must be: `json` (anything else is a `TollgateError` `invalid_response`: a wrong
 * base URL answering an HTML page must not pass for a result), `jsonOrText` (JSON, or the text as
 * it is), `bytes`, or `stream` (SSE).
 */
export type BodyKind = "json" | "jsonOrText" | "bytes" | "stream";

/** One call as a resource method describes it. */
export interface RequestSpec {
  readonly method: HttpMethod;
  /** Path below the base URL, starting with "/", path parameters already encoded. */
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>> | undefined;
  /** A JSON body (bigints are sent as decimal strings). */
  readonly body?: unknown;
  /** Whether repeating the call is harmless (see ./retry.ts). */
  readonly idempotent: boolean;
  /** @default "json" */
  readonly kind?: BodyKind | undefined;
  /** Sent as `x-idempotency-key` on every attempt. */
  readonly idempotencyKey?: string | undefined;
  /** Which credential the call sends as `Authorization` (see {@link BearerPolicy}). @default "key" */
  readonly bearer?: BearerPolicy | undefined;
  /** A non-2xx answer to return as a value rather than throw (e.g. `{available:false}` with 404). */
  readonly accept?: ((status: number, body: unknown) => boolean) | undefined;
}

/** An open stream: its response (body unread), metadata, and how to release it. */
export interface OpenStream {
  readonly response: Response;
  readonly meta: ResponseMeta;
  /** The attempt: its signal aborts with the caller's; call `done()` when the stream ends. */
  readonly attempt: Attempt;
}

const decoder = new TextDecoder();

/**
 * Reads a body: JSON when it says so (or looks like it), else text; "" → null. Throws on malformed
 * JSON only when `strict`, and on an answer that is not JSON at all when `jsonOnly`.
 */
async function readJsonOrText(response: Response, strict: boolean, jsonOnly = false): Promise<unknown> {
  const text = decoder.decode(await response.arrayBuffer());
  if (text.trim() === "") return null;
  const type = response.headers.get("content-type") ?? "";
  if (!/json/i.test(type)) {
    if (jsonOnly)
      throw invalidResponse(
        response,
        text,
        `The answer (HTTP ${response.status}) is not JSON (Content-Type: ${type || "none"}): is the base URL the gateway's?`,
      );
    if (!(!strict && /^\s*[[{]/.test(text))) return text;
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    if (!strict) return text;
    throw invalidResponse(response, text, `The answer (HTTP ${response.status}) is not valid JSON.`, cause);
  }
}

function invalidResponse(response: Response, text: string, message: string, cause?: unknown): TollgateError {
  return new TollgateError(message, {
    status: response.status,
    code: "invalid_response",
    requestId: response.headers.get("x-request-id") ?? undefined,
    headers: response.headers,
    body: text.slice(0, 2000),
    ...(cause === undefined ? {} : { cause }),
  });
}

function headersFor(spec: RequestSpec, resolved: ResolvedRequest): Record<string, string> {
  return {
    accept: spec.kind === "stream" ? "text/event-stream" : "application/json",
    ...(spec.body === undefined ? {} : { "content-type": "application/json" }),
    ...resolved.headers,
    ...(spec.idempotencyKey === undefined ? {} : { "x-idempotency-key": spec.idempotencyKey }),
  };
}

async function execute(baseUrl: string, resolved: ResolvedRequest, spec: RequestSpec): Promise<WithMeta<unknown> | OpenStream> {
  const url = `${baseUrl}${spec.path}${queryString(spec.query)}`;
  const init = { method: spec.method, headers: headersFor(spec, resolved), ...(spec.body === undefined ? {} : { body: stringifyJson(spec.body) }) };
  const caller = resolved.signal;
  const wait = async (ms: number) => {
    try {
      await sleep(ms, caller);
    } catch {
      throw userAbort(caller!);
    }
  };
  for (let retry = 0; ; retry++) {
    if (caller?.aborted) throw userAbort(caller);
    const attempt = startAttempt(caller, resolved.timeoutMs);
    let response: Response;
    let body: unknown;
    try {
      response = await resolved.fetch(url, { ...init, signal: attempt.signal });
      if (spec.kind === "stream" && response.ok) {
        attempt.clearTimeout();
        return { response, meta: metaOf(response, { idempotencyKey: spec.idempotencyKey, retries: retry }), attempt };
      }
      body =
        response.ok && spec.kind === "bytes"
          ? new Uint8Array(await response.arrayBuffer())
          : await readJsonOrText(response, response.ok, response.ok && spec.kind === "json");
    } catch (cause) {
      attempt.done();
      // Our own invalid_response passes as it is; anything after an abort is the abort (caller or timeout).
      const error = cause instanceof TollgateError && !attempt.signal.aborted ? cause : attempt.failure(cause);
      const retryable = spec.idempotent && !(error instanceof UserAbortError) && error.status === undefined;
      if (!retryable || retry >= resolved.maxRetries) throw error;
      await wait(retryDelayMs(retry, undefined)!);
      continue;
    }
    attempt.done();
    const meta = metaOf(response, { idempotencyKey: spec.idempotencyKey, retries: retry });
    if (response.ok || spec.accept?.(response.status, body)) return { data: body, meta };
    const error = errorFromResponse(response.status, body, response.headers);
    if (retry < resolved.maxRetries && isRetryableAnswer(response.status, response.headers, spec.idempotent, error.code)) {
      const delay = retryDelayMs(retry, response.headers);
      if (delay !== undefined) {
        await wait(delay);
        continue;
      }
    }
    throw error;
  }
}

/** Runs a call to completion: the parsed body and its metadata, or a typed error. */
export function request(baseUrl: string, resolved: ResolvedRequest, spec: RequestSpec): Promise<WithMeta<unknown>> {
  return execute(baseUrl, resolved, { ...spec, kind: spec.kind === "stream" ? "json" : (spec.kind ?? "json") }) as Promise<WithMeta<unknown>>;
}

/** Opens a stream: resolves once a 2xx answer's headers arrive (error answers throw as usual). */
export function openStream(baseUrl: string, resolved: ResolvedRequest, spec: Omit<RequestSpec, "kind">): Promise<OpenStream> {
  return execute(baseUrl, resolved, { ...spec, kind: "stream" }) as Promise<OpenStream>;
}
