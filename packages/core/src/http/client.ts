/**
 * The injectable HTTP client used for upstream providers and external services. On Node the
 * `@tollgate/node` package supplies a pooled undici client (measured at ~6x the throughput of the
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
  /**
   * Deadline in milliseconds; on expiry the client rejects (or the body read throws) with
   * `upstream_timeout`. Without `stream` it bounds the whole exchange, body included; with
   * `stream` see there.
   */
  timeoutMs?: number;
  /**
   * A long-lived response read as it arrives (server-sent events): `timeoutMs` then bounds the
   * wait for the response headers and, after them, each gap between two body chunks while the
   * body is being read (an idle deadline), never the whole exchange. Read such a body with
   * {@link HttpClientResponse.chunks}; `text()`/`bytes()` also work, under the same idle deadline.
   */
  stream?: boolean;
}

/**
 * One response. The body is read at most once: by `text()` or `bytes()` (which may share one
 * read), or by `chunks()`; mixing `chunks()` with the others throws a `TypeError`.
 */
export interface HttpClientResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  text(): Promise<string>;
  bytes(): Promise<Uint8Array>;
  /**
   * The body as it arrives, chunk by chunk, iterable once. Both clients of this package implement
   * it; it is optional so that an injected third-party `HttpClient` written before it keeps
   * compiling (callers then fall back to `bytes()`, losing incremental reading). Iteration throws
   * `GatewayError("upstream_timeout")` when the deadline passes (see
   * {@link HttpClientRequest.stream}), `GatewayError("upstream_error")` when the connection breaks,
   * and the `signal`'s reason when the caller aborts. Leaving the loop early (`return()`, also
   * before the first chunk) cancels the body and releases the connection. A body that is never
   * iterated holds the connection until the deadline (or, with `stream`, until the upstream
   * closes it or the `signal` aborts): call `return()` on its iterator to drop it.
   */
  chunks?(): AsyncIterable<Uint8Array>;
}

/**
 * Sends one request. Contract: rejects with `GatewayError("upstream_timeout")` when `timeoutMs`
 * passes, `GatewayError("upstream_error")` when the connection fails, and re-throws the
 * `signal`'s abort reason when the caller aborts. Any HTTP status resolves.
 */
export type HttpClient = (request: HttpClientRequest) => Promise<HttpClientResponse>;

/**
 * An {@link HttpClient} over a WHATWG `fetch` (edge runtimes, browsers, tests). Implements
 * `chunks()` and the `stream` flag: header and idle deadlines are timers that abort the fetch.
 */
export function createFetchHttpClient(fetchImpl: typeof fetch = globalThis.fetch): HttpClient {
  return async (req) => {
    const streamed = req.stream === true;
    // Whole exchange: one deadline signal. Stream: timers around each wait abort `stop`, which
    // also cancels the fetch when the reader leaves the body early.
    const timeout = !streamed && req.timeoutMs !== undefined ? AbortSignal.timeout(req.timeoutMs) : undefined;
    const stop = new AbortController();
    let timedOut = false;
    const watch = (): (() => void) => {
      if (!streamed || req.timeoutMs === undefined) return () => undefined;
      const timer = setTimeout(() => {
        timedOut = true;
        stop.abort();
      }, req.timeoutMs);
      return () => clearTimeout(timer);
    };
    const signals = [req.signal, timeout, stop.signal].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    const failure = (error: unknown, midStream = false) => classifyFailure(error, req, timedOut || timeout?.aborted === true, midStream);
    let res: Response;
    const headersWatch = watch();
    try {
      res = await fetchImpl(req.url, {
        method: req.method,
        ...(req.headers ? { headers: req.headers } : {}),
        ...(req.body === undefined ? {} : { body: req.body as BodyInit }),
        signal,
      });
    } catch (error) {
      throw failure(error);
    } finally {
      headersWatch();
    }
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      headers[k] = v;
    });
    let iterated = false;
    let readWhole = false;
    const read = async <T>(f: () => Promise<T>): Promise<T> => {
      if (iterated) throw bodyUsed();
      readWhole = true;
      try {
        return await f();
      } catch (error) {
        throw failure(error);
      }
    };
    const chunks = (): AsyncIterableIterator<Uint8Array> => {
      if (iterated || readWhole) throw bodyUsed();
      iterated = true;
      const reader = res.body?.getReader();
      return releasingIterable(
        async () => {
          if (!reader) return { done: true, value: undefined };
          const idleWatch = watch();
          try {
            const r = await reader.read();
            return r.done ? { done: true, value: undefined } : { done: false, value: r.value };
          } catch (error) {
            throw failure(error, streamed);
          } finally {
            idleWatch();
          }
        },
        (completed) => {
          if (completed) return;
          stop.abort();
          reader?.cancel().catch(() => undefined);
        },
      );
    };
    const collect = async () => {
      const parts: Uint8Array[] = [];
      for await (const part of chunks()) parts.push(part);
      return concatBytes(parts);
    };
    return {
      status: res.status,
      headers,
      text: streamed ? async () => new TextDecoder().decode(await collect()) : () => read(() => res.text()),
      bytes: streamed ? collect : () => read(async () => new Uint8Array(await res.arrayBuffer())),
      chunks,
    };
  };
}

/**
 * A single-use async iterator over `next` that calls `release(completed)` exactly once: `true`
 * when `next` reports the end, `false` when `next` throws or the consumer leaves early
 * (`return()`, also before the first `next()`, which an async generator would not notice). After
 * that, `next()` answers done. For implementers of {@link HttpClientResponse.chunks} and streams
 * built on it.
 */
export function releasingIterable<T>(next: () => Promise<IteratorResult<T, undefined>>, release: (completed: boolean) => void): AsyncIterableIterator<T> {
  let open = true;
  const close = (completed: boolean) => {
    if (!open) return;
    open = false;
    release(completed);
  };
  const done: IteratorReturnResult<undefined> = { done: true, value: undefined };
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      if (!open) return done;
      try {
        const r = await next();
        if (r.done) close(true);
        return r;
      } catch (error) {
        close(false);
        throw error;
      }
    },
    async return() {
      close(false);
      return done;
    },
  };
  return iterator;
}

function bodyUsed(): TypeError {
  return new TypeError("The response body has already been read");
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The caller's abort reason, else 504 or 502; `midStream` names an idle gap / broken body of a streamed response. */
function classifyFailure(error: unknown, req: HttpClientRequest, timedOut: boolean, midStream: boolean): unknown {
  if (req.signal?.aborted) return req.signal.reason;
  if (timedOut) {
    const what = midStream ? `sent nothing for ${req.timeoutMs} ms` : `did not answer within ${req.timeoutMs} ms`;
    return new GatewayError("upstream_timeout", `${hostOf(req.url)} ${what}`);
  }
  return new GatewayError("upstream_error", `${hostOf(req.url)} ${midStream ? "broke off the response" : "could not be reached"}`, { cause: error });
}

/** The host of a URL, for error messages that must not leak paths or credentials. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "upstream";
  }
}

/** A URL as it may be printed: its origin and path, without credentials, query or fragment (where API keys ride). */
export function urlForDisplay(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === "/" ? "" : u.pathname}`;
  } catch {
    return "(an unparseable URL)";
  }
}

/**
 * The body of `res` as text, refused past `maxBytes` (502 `upstream_error` naming `what`): read
 * chunk by chunk when the client can (the read stops and the body is dropped at the limit), else
 * whole and then checked. For answers a gateway relays or parses whole (a directory's search, a
 * models service's list), whose size a third party decides.
 */
export async function boundedText(res: HttpClientResponse, maxBytes: number, what: string): Promise<string> {
  const tooLarge = () => new GatewayError("upstream_error", `${what} answered more than ${maxBytes} bytes.`);
  const declared = Number(res.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await dropBody(res);
    throw tooLarge();
  }
  if (!res.chunks) {
    const all = await res.bytes();
    if (all.byteLength > maxBytes) throw tooLarge();
    return new TextDecoder().decode(all);
  }
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  for await (const chunk of res.chunks()) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(); // leaving the loop cancels the body
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

async function dropBody(res: HttpClientResponse): Promise<void> {
  const chunks = res.chunks?.();
  await chunks?.[Symbol.asyncIterator]().return?.();
}
