/**
 * The Web `Request`/`Response` wrapper around `handle`, for Next.js route handlers, edge
 * runtimes and tests. (The Node adapters use the plain-shape bridge in @tollgate/node instead.)
 */
import { GatewayError } from "../errors.js";
import { stringifyJson } from "./respond.js";
import type { GatewayRequest, GatewayResponse } from "./types.js";

/** Reads a Web body stream, rejecting with `payload_too_large` as soon as it passes `limit`. */
async function readLimited(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new GatewayError("payload_too_large", `The body is larger than ${limit} bytes.`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** Converts a Web `Request` to the plain request shape. `basePath` is stripped from the path. */
export function fromWebRequest(request: Request, basePath = ""): GatewayRequest {
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  request.headers.forEach((v, k) => {
    headers[k] = v;
  });
  let path = url.pathname;
  if (basePath && path.startsWith(basePath)) path = path.slice(basePath.length) || "/";
  const stream = request.body;
  let pending: Promise<Uint8Array> | undefined;
  return {
    method: request.method.toUpperCase(),
    path,
    query: url.searchParams,
    headers,
    origin: url.origin,
    signal: request.signal,
    ...(stream
      ? {
          body: {
            kind: "stream" as const,
            read(limit: number) {
              const declared = Number(headers["content-length"]);
              if (Number.isFinite(declared) && declared > limit)
                return Promise.reject(new GatewayError("payload_too_large", `The body is larger than ${limit} bytes.`));
              pending ??= readLimited(stream, limit);
              return pending;
            },
          },
        }
      : {}),
  };
}

/** Converts the plain response shape to a Web `Response`; SSE frames become a streaming body. */
export function toWebResponse(response: GatewayResponse): Response {
  const init = { status: response.status, headers: response.headers };
  const body = response.body;
  switch (body.kind) {
    case "json":
      return new Response(stringifyJson(body.value), init);
    case "bytes":
      return new Response(body.value as Uint8Array<ArrayBuffer>, init);
    case "empty":
      return new Response(null, init);
    case "sse": {
      const iterator = body.frames[Symbol.asyncIterator]();
      const encoder = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await iterator.next();
          if (next.done) controller.close();
          else controller.enqueue(encoder.encode(next.value));
        },
        async cancel() {
          await iterator.return?.();
        },
      });
      return new Response(stream, init);
    }
  }
}
