/**
 * The Web `Request`/`Response` wrapper around `handle`, for Next.js route handlers, edge
 * runtimes and tests. (The Node adapters use the plain-shape bridge in @tollgate/node instead.)
 */
import { bodyTooLarge } from "../errors.js";
import { concatBytes } from "../providers/bytes.js";
import { stringifyJson } from "./respond.js";
import type { GatewayRequest, GatewayResponse } from "./types.js";

/** Reads a Web body stream, rejecting with `payload_too_large` as soon as it passes `limit`. */
async function readLimited(stream: ReadableStream<Uint8Array>, limit: number, onChunk: ((bytes: number) => void) | undefined): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    try {
      if (size > limit) throw bodyTooLarge(limit);
      onChunk?.(value.byteLength);
    } catch (error) {
      await reader.cancel().catch(() => {});
      throw error;
    }
    chunks.push(value);
  }
  return concatBytes(chunks);
}

/** Options of {@link fromWebRequest}. */
export interface FromWebRequestOptions {
  /** Mount path stripped from the front of the path, only at a segment boundary (`/gw` strips `/gw/x`, not `/gwx`). A path outside it is passed on unchanged. @default "" */
  basePath?: string;
  /** Upper bound in bytes for any `body.read(limit)`, whatever limit the route asks for. @default unlimited */
  maxBodySize?: number;
  /**
   * The client's address as the host knows it (a Web `Request` carries none): the per-IP limits
   * key on it (with `trustedProxies: 0`). Not an IP address, or absent: the request has no peer address.
   */
  remoteAddress?: string;
}

/** Returns `path` relative to `basePath` (segment-aligned), or undefined when it lies outside it. */
export function relativeToBase(path: string, basePath: string | undefined): string | undefined {
  const trimmed = !basePath || basePath === "/" ? "" : basePath.replace(/\/+$/, "");
  const base = trimmed === "" || trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
  if (base === "") return path;
  if (path === base) return "/";
  return path.startsWith(`${base}/`) ? path.slice(base.length) : undefined;
}

const HOLDS = Symbol("tollgate.request");

/**
 * `request.signal`, made to keep `request` alive. Node's `Request` follows the signal it was made
 * with through a weak reference to itself: once nothing holds the Request (a caller that keeps
 * only the response, a route that keeps only the signal), its signal silently stops following,
 * and a stream whose client left would poll on for good. The signal now holds its Request.
 */
function retained(request: Request): AbortSignal {
  const signal = request.signal;
  if (!(HOLDS in signal)) Object.defineProperty(signal, HOLDS, { value: request });
  return signal;
}

/**
 * Converts a Web `Request` to the plain request shape: lower-case headers (repeated ones joined
 * with ", " by `Headers`), the still-encoded path relative to `basePath`, the request's abort
 * signal, and a lazy body whose `read(limit)` runs once and rejects with `payload_too_large` as
 * soon as more than `min(limit, maxBodySize)` bytes arrive (or Content-Length already says so).
 * A string second argument is the `basePath` (older call form).
 */
export function fromWebRequest(request: Request, options: string | FromWebRequestOptions = {}): GatewayRequest {
  const opts = typeof options === "string" ? { basePath: options } : options;
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  request.headers.forEach((v, k) => {
    headers[k] = v;
  });
  const path = relativeToBase(url.pathname, opts.basePath) ?? url.pathname;
  const stream = request.body;
  let pending: Promise<Uint8Array> | undefined;
  return {
    method: request.method.toUpperCase(),
    path,
    query: url.searchParams,
    headers,
    origin: url.origin,
    signal: retained(request),
    ...(opts.remoteAddress ? { remoteAddress: opts.remoteAddress } : {}),
    ...(stream
      ? {
          body: {
            kind: "stream" as const,
            read(routeLimit: number, onChunk?: (bytes: number) => void) {
              const limit = Math.min(routeLimit, opts.maxBodySize ?? Number.POSITIVE_INFINITY);
              const declared = Number(headers["content-length"]);
              if (Number.isFinite(declared) && declared > limit) return Promise.reject(bodyTooLarge(limit));
              pending ??= readLimited(stream, limit, onChunk);
              return pending;
            },
          },
        }
      : {}),
  };
}

/** Options of {@link toWebResponse}. */
export interface ToWebResponseOptions {
  /** Called once with an error raised by the SSE frames after the response started (the body stream then errors). */
  onError?: (error: unknown) => void;
}

/**
 * Converts the plain response shape to a Web `Response`. SSE frames (and a `stream` body's chunks)
 * become a streaming body that pulls one frame at a time; cancelling the body calls the frame iterator's `return()`, and a
 * frame iterator that throws errors the body stream (a client sees a broken stream, not an end).
 */
export function toWebResponse(response: GatewayResponse, options: ToWebResponseOptions = {}): Response {
  const init = { status: response.status, headers: response.headers };
  const body = response.body;
  switch (body.kind) {
    case "json": {
      const bytes = new TextEncoder().encode(stringifyJson(body.value) ?? "null");
      return new Response(bytes, {
        status: response.status,
        headers: Object.assign({ "content-type": "application/json; charset=utf-8" }, response.headers, { "content-length": String(bytes.byteLength) }),
      });
    }
    case "bytes":
      return new Response(body.value as Uint8Array<ArrayBuffer>, {
        status: response.status,
        headers: Object.assign({ "content-type": "application/octet-stream" }, response.headers, { "content-length": String(body.value.byteLength) }),
      });
    case "empty":
      return new Response(null, init);
    case "sse":
    case "stream": {
      const iterator: AsyncIterator<string | Uint8Array> = (body.kind === "sse" ? body.frames : body.chunks)[Symbol.asyncIterator]();
      const encoder = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          let next: IteratorResult<string | Uint8Array>;
          try {
            next = await iterator.next();
          } catch (error) {
            options.onError?.(error);
            controller.error(error);
            return;
          }
          if (next.done) controller.close();
          else controller.enqueue(typeof next.value === "string" ? encoder.encode(next.value) : next.value);
        },
        async cancel() {
          await iterator.return?.();
        },
      });
      return new Response(stream, init);
    }
  }
}
