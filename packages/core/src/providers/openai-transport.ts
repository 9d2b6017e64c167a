/**
 * The request/error plumbing every method of the OpenAI-compatible provider shares (its REST
 * methods in `openai-compatible.ts`, chat in `openai-chat.ts`): one place builds the URL and
 * headers, maps transport failures and non-2xx answers to the provider error contract, and keeps
 * the API key out of error text.
 */
import { z } from "zod";
import { GatewayError } from "../errors.js";
import { hostOf } from "../http/client.js";
import type { HttpClient, HttpClientResponse } from "../http/client.js";

/** Options of `createOpenAICompatibleProvider`. */
export interface OpenAICompatibleProviderOptions {
  /** The API root, e.g. `https://api.openai.com/v1` (a trailing slash is ignored). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never appears in errors. */
  apiKey?: string;
  /** The HTTP client (`createUndiciHttpClient()` on Node, `createFetchHttpClient()` elsewhere). */
  http: HttpClient;
  /**
   * Deadline in milliseconds: of the whole request, or for a streamed chat completion the wait
   * for the response headers and then each gap between two chunks of the stream. @default 60000
   */
  timeoutMs?: number;
  /** Extra request headers (e.g. `OpenAI-Organization`); `Authorization` from `apiKey` wins. */
  headers?: Record<string, string>;
  /** The one field a chat completion's output cap is sent in; by default the body's own fields, as they are. */
  outputCapField?: OutputCapField;
}

/** The request fields an output cap can go in. */
export type OutputCapField = "max_tokens" | "max_completion_tokens";

/** A request body: JSON, or an already encoded multipart form. */
export type OpenAIBody = { json: unknown } | { multipart: { body: Uint8Array; contentType: string } };

/** The shared plumbing of one provider instance; see {@link createOpenAITransport}. */
export interface OpenAITransport {
  /** The API root without its trailing slash. */
  readonly base: string;
  /** The upstream's host, the only part of the URL error messages name. */
  readonly host: string;
  /**
   * Sends a request and resolves with a 2xx response, its body unread. Rejects as the provider
   * contract says: non-2xx → 502 with `details: { upstreamStatus, upstreamMessage? }` (the error
   * body read and scrubbed), transport failures → 502/504 from the client, abort → the signal's
   * reason. `stream` asks for `text/event-stream` with the client's header/idle deadlines; `extra`
   * headers are sent as well (overriding that `accept`).
   */
  send(
    method: string,
    path: string,
    body: OpenAIBody | undefined,
    signal: AbortSignal | undefined,
    stream?: boolean,
    extra?: Record<string, string>,
  ): Promise<HttpClientResponse>;
  /** Runs a body read, mapping its failure as {@link rethrow} does. */
  read<T>(f: () => Promise<T>, signal: AbortSignal | undefined): Promise<T>;
  /** The JSON text decoded and checked against `schema`; 502 `upstream_error` naming the host otherwise. */
  decode<S extends z.ZodType>(schema: S, text: string, status: number): z.output<S>;
  /** A 502 `upstream_error` with optional details and cause. */
  fail(message: string, details?: Record<string, unknown>, cause?: unknown): GatewayError;
  /** A failure as the contract wants it: the signal's reason when it aborted, a GatewayError as is, else 502 "could not be reached". */
  rethrow(error: unknown, signal: AbortSignal | undefined): unknown;
  /** Upstream text cut to 500 characters with the API key and the configured header values replaced by `[redacted]`. */
  scrub(text: string): string;
}

const MAX_UPSTREAM_MESSAGE = 500;

const errorBodySchema = z.object({
  error: z.union([z.string(), z.object({ message: z.string().nullish() })]).nullish(),
  message: z.string().nullish(),
});

/**
 * The plumbing for one provider. Throws a `TypeError` when `baseUrl` is not an absolute http(s)
 * URL. Every request carries `accept`, the configured headers, `authorization` from `apiKey`, and
 * the provider's `timeoutMs`.
 */
export function createOpenAITransport(options: OpenAICompatibleProviderOptions): OpenAITransport {
  const base = options.baseUrl.replace(/\/+$/, "");
  let parsed: URL;
  try {
    parsed = new URL(base);
  } catch {
    throw new TypeError("baseUrl must be an absolute http(s) URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new TypeError("baseUrl must be an absolute http(s) URL");
  const host = hostOf(base);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const fixedHeaders: Record<string, string> = { accept: "application/json" };
  for (const [k, v] of Object.entries(options.headers ?? {})) fixedHeaders[k.toLowerCase()] = v;
  if (options.apiKey) fixedHeaders.authorization = `Bearer ${options.apiKey}`;

  const fail = (message: string, details?: Record<string, unknown>, cause?: unknown) =>
    new GatewayError("upstream_error", message, Object.assign({}, details ? { details } : undefined, cause === undefined ? undefined : { cause }));
  const rethrow = (error: unknown, signal: AbortSignal | undefined): unknown => {
    if (signal?.aborted) return signal.reason;
    if (error instanceof GatewayError) return error;
    return fail(`${host} could not be reached`, undefined, error);
  };
  // The API key and every configured header value (Azure's `api-key`, a proxy's token; each word of 8
  // characters or more, so `Bearer <token>` loses its token), longest first: upstreams echo what they refuse.
  const secrets = [
    ...Object.values(options.headers ?? {})
      .flatMap((v) => [v, ...v.split(/\s+/)])
      .filter((v) => v.length >= 8),
    ...(options.apiKey ? [options.apiKey] : []),
  ].sort((a, b) => b.length - a.length);
  // Redacted before the cut: a key straddling the cut would otherwise survive as its first characters.
  const scrub = (text: string) => {
    for (const secret of secrets) if (text.includes(secret)) text = text.split(secret).join("[redacted]");
    return text.slice(0, MAX_UPSTREAM_MESSAGE);
  };

  async function read<T>(f: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    try {
      return await f();
    } catch (error) {
      throw rethrow(error, signal);
    }
  }

  async function send(
    method: string,
    path: string,
    body: OpenAIBody | undefined,
    signal: AbortSignal | undefined,
    stream = false,
    extra?: Record<string, string>,
  ): Promise<HttpClientResponse> {
    const headers = Object.assign({}, fixedHeaders);
    if (stream) headers.accept = "text/event-stream";
    if (extra) Object.assign(headers, extra);
    let payload: string | Uint8Array | undefined;
    if (body && "json" in body) {
      headers["content-type"] = "application/json";
      payload = JSON.stringify(body.json);
    } else if (body) {
      headers["content-type"] = body.multipart.contentType;
      payload = body.multipart.body;
    }
    let res: HttpClientResponse;
    try {
      res = await options.http({
        method,
        url: `${base}${path}`,
        headers,
        ...(payload === undefined ? {} : { body: payload }),
        ...(signal ? { signal } : {}),
        timeoutMs,
        ...(stream ? { stream } : {}),
      });
    } catch (error) {
      throw rethrow(error, signal);
    }
    if (res.status >= 200 && res.status < 300) return res;
    const text = await read(() => res.text(), signal).catch((error: unknown) => {
      if (signal?.aborted || (error instanceof GatewayError && error.code === "upstream_timeout")) throw error;
      return "";
    });
    const upstreamMessage = errorMessageOf(parseJson(text));
    throw fail(`${host} answered HTTP ${res.status}`, { upstreamStatus: res.status, ...(upstreamMessage ? { upstreamMessage: scrub(upstreamMessage) } : {}) });
  }

  function decode<S extends z.ZodType>(schema: S, text: string, status: number): z.output<S> {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw fail(`${host} answered malformed JSON`, { upstreamStatus: status });
    }
    const result = schema.safeParse(value);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue && issue.path.length > 0 ? issue.path.join(".") : "body";
      throw fail(`${host} answered an unexpected shape (${where}: ${issue?.message ?? "invalid"})`, { upstreamStatus: status });
    }
    return result.data;
  }

  return { base, host, send, read, decode, fail, rethrow, scrub };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** OpenAI's `{error:{message}}`, `{error:"…"}` or `{message}` (already parsed); undefined for anything else. */
export function errorMessageOf(value: unknown): string | undefined {
  const r = errorBodySchema.safeParse(value);
  if (!r.success) return undefined;
  const e = r.data.error;
  return (typeof e === "string" ? e : e?.message) ?? r.data.message ?? undefined;
}
