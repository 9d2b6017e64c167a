/**
 * The injectable HTTP client used for upstream providers and external services. On Node the
 * `@tollgate/node` package supplies a pooled undici client (DESIGN.md: ~6x the throughput of the
 * global fetch); edge runtimes use {@link createFetchHttpClient}.
 */
import { GatewayError } from "../errors.js";

/** One outgoing request. */
export interface HttpClientRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
  /** Whole-request deadline in milliseconds; on expiry the client rejects with `upstream_timeout`. */
  timeoutMs?: number;
}

/** One response; the body is read at most once, by `text()` or `bytes()`. */
export interface HttpClientResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  text(): Promise<string>;
  bytes(): Promise<Uint8Array>;
}

/**
 * Sends one request. Contract: rejects with `GatewayError("upstream_timeout")` when `timeoutMs`
 * passes, `GatewayError("upstream_error")` when the connection fails, and re-throws the
 * `signal`'s abort reason when the caller aborts. Any HTTP status resolves.
 */
export type HttpClient = (request: HttpClientRequest) => Promise<HttpClientResponse>;

/** An {@link HttpClient} over a WHATWG `fetch` (edge runtimes, browsers, tests). */
export function createFetchHttpClient(fetchImpl: typeof fetch = globalThis.fetch): HttpClient {
  return async (req) => {
    const timeout = req.timeoutMs === undefined ? undefined : AbortSignal.timeout(req.timeoutMs);
    const signals = [req.signal, timeout].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    let res: Response;
    try {
      res = await fetchImpl(req.url, {
        method: req.method,
        ...(req.headers ? { headers: req.headers } : {}),
        ...(req.body === undefined ? {} : { body: req.body as BodyInit }),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      throw classifyFailure(error, req, timeout);
    }
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      headers[k] = v;
    });
    const read = async <T>(f: () => Promise<T>): Promise<T> => {
      try {
        return await f();
      } catch (error) {
        throw classifyFailure(error, req, timeout);
      }
    };
    return {
      status: res.status,
      headers,
      text: () => read(() => res.text()),
      bytes: () => read(async () => new Uint8Array(await res.arrayBuffer())),
    };
  };
}

function classifyFailure(error: unknown, req: HttpClientRequest, timeout: AbortSignal | undefined): unknown {
  if (req.signal?.aborted) return req.signal.reason;
  if (timeout?.aborted) return new GatewayError("upstream_timeout", `${hostOf(req.url)} did not answer within ${req.timeoutMs} ms`);
  return new GatewayError("upstream_error", `${hostOf(req.url)} could not be reached`, { cause: error });
}

/** The host of a URL, for error messages that must not leak paths or credentials. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "upstream";
  }
}
