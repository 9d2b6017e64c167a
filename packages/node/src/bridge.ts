/**
 * The one Node bridge: IncomingMessage -> GatewayRequest and GatewayResponse -> ServerResponse,
 * with no Web Request/Response objects on the way (docs/architecture.md "How a request flows").
 * The standalone server, Express and Fastify all go through these three functions.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { bodyTooLarge, fallbackResponse, GatewayError, relativeToBase, SSE_CACHE_CONTROL, stringifyJson } from "@tollgate/core";
import type { Gateway, GatewayRequest, GatewayRequestBody, GatewayResponse } from "@tollgate/core";

/** Options of {@link toGatewayRequest}. */
export interface ToGatewayRequestOptions {
  /** Mount path stripped from the front of the path (e.g. `"/gw"`). A path outside it is passed on unchanged. @default "" */
  basePath?: string;
  /** Take the origin from `X-Forwarded-Proto` / `X-Forwarded-Host` (only behind a proxy you control). @default false */
  trustProxy?: boolean;
  /** A body a framework already parsed; becomes `{ kind: "parsed", value }`. */
  parsedBody?: unknown;
  /** The response of this request. When given, `signal` aborts if the client disconnects before it finishes. */
  res?: ServerResponse;
  /** Upper bound in bytes for any `body.read(limit)`, whatever limit the route asks for. @default unlimited */
  maxBodySize?: number;
}

/** Options of {@link writeGatewayResponse}. */
export interface WriteGatewayResponseOptions {
  /** Called once with an error raised while streaming a body (the response is then destroyed). */
  onError?: (error: unknown) => void;
}

/** Options of {@link createNodeHandler}; the same names as every framework adapter's `createHandler`. */
export interface NodeHandlerOptions {
  /** Mount path of the gateway (e.g. `"/gw"`). Requests outside it go to `next()` when there is one. @default "" */
  basePath?: string;
  /** Hard cap in bytes on a request body, below the per-route limits of the gateway. @default unlimited (the gateway's own limits apply) */
  maxBodySize?: number;
  /** Trust `X-Forwarded-Proto` / `X-Forwarded-Host` for the public origin. @default false */
  trustProxy?: boolean;
  /** Called once per error that escaped the gateway or happened while writing. @default logs to stderr */
  onError?: (error: unknown) => void;
}

/** A Node request handler; `next` (Connect/Express style) receives requests outside `basePath`. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => Promise<void>;

const NO_BODY_METHODS = new Set(["GET", "HEAD", "DELETE", "OPTIONS"]);
const HOST_RE = /^[A-Za-z0-9.\-:[\]]{1,255}$/;

/**
 * Converts a Node request into the gateway's plain {@link GatewayRequest}.
 * - `headers`: lower-case names, repeated values joined with ", ".
 * - `path`: still percent-encoded, without query, `basePath` stripped (unchanged when outside it).
 * - `body`: `undefined` for GET/HEAD/DELETE/OPTIONS without content; `parsed` when `opts.parsedBody`
 *   is given or a framework set `req.body` after consuming the stream; otherwise a lazy `stream`
 *   whose `read(limit)` runs at most once and rejects with `GatewayError("payload_too_large")` as
 *   soon as more than `limit` bytes arrive (or Content-Length already says so).
 * - `signal`: aborted when the client disconnects before the response finished (needs `opts.res`).
 * - `origin`: from `Host` (and `X-Forwarded-*` when `trustProxy`); undefined without a usable host.
 * - `remoteAddress`: the socket peer (the gateway's `trustedProxies` option decides whether
 *   `X-Forwarded-For` overrides it for the per-IP rate limits).
 */
export function toGatewayRequest(req: IncomingMessage, opts: ToGatewayRequestOptions = {}): GatewayRequest {
  const method = (req.method ?? "GET").toUpperCase();
  const { pathname, search } = splitUrl(req.url ?? "/");
  const path = stripBasePath(pathname, opts.basePath) ?? pathname;
  const headers = lowerCaseHeaders(req);
  const body = requestBody(req, method, opts);
  const origin = requestOrigin(req, headers, opts.trustProxy === true);
  return {
    method,
    path,
    query: new URLSearchParams(search),
    headers,
    ...(body === undefined ? {} : { body }),
    ...(opts.res === undefined ? {} : { signal: disconnectSignal(opts.res) }),
    ...(origin === undefined ? {} : { origin }),
    ...(req.socket?.remoteAddress ? { remoteAddress: req.socket.remoteAddress } : {}),
  };
}

/**
 * Writes a {@link GatewayResponse} to a Node response and resolves when it is fully written (or
 * the client went away). JSON is serialised with `JSON.stringify` (a stray bigint becomes a
 * decimal string); bytes get a Content-Length; SSE frames (and a `stream` body's chunks, under
 * the response's own headers) are written one by one after
 * `flushHeaders()`, awaiting `drain` when the socket buffer is full, and the frame iterator's
 * `return()` is called as soon as the client disconnects. Rejects only on errors before any byte
 * of a JSON/bytes body was written (e.g. a value JSON cannot represent); SSE errors go to `onError`.
 */
export async function writeGatewayResponse(res: ServerResponse, response: GatewayResponse, opts: WriteGatewayResponseOptions = {}): Promise<void> {
  const body = response.body;
  switch (body.kind) {
    case "json": {
      const text = stringifyJson(body.value) ?? "null";
      writeHead(res, response, { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(text)) });
      await endWith(res, text);
      return;
    }
    case "bytes":
      writeHead(res, response, { "content-type": "application/octet-stream", "content-length": String(body.value.byteLength) });
      await endWith(res, body.value);
      return;
    case "empty":
      writeHead(res, response, {});
      await endWith(res, undefined);
      return;
    case "sse":
      await writeStream(res, response, body.frames, opts.onError, true);
      return;
    case "stream":
      await writeStream(res, response, body.chunks, opts.onError, false);
      return;
  }
}

/**
 * The Node handler of a gateway: bridges the request, calls `gateway.handle`, writes the answer.
 * Never rejects: a failure before the response started becomes a 500 error envelope, and every
 * error is reported once to `onError`. A request outside `basePath` calls `next()` if given.
 */
export function createNodeHandler(gateway: Pick<Gateway, "handle">, options: NodeHandlerOptions = {}): NodeHandler {
  const onError = options.onError ?? defaultOnError;
  return async (req, res, next) => {
    if (next && options.basePath && stripBasePath(splitUrl(req.url ?? "/").pathname, options.basePath) === undefined) {
      next();
      return;
    }
    try {
      const request = toGatewayRequest(req, { res, ...options });
      const response = await gateway.handle(request);
      await writeGatewayResponse(res, response, { onError });
    } catch (error) {
      onError(error);
      writeFallback(req, res, error);
    }
  };
}

/** Returns the path relative to `basePath`, or undefined when it lies outside it. */
export function stripBasePath(path: string, basePath: string | undefined): string | undefined {
  return relativeToBase(path, basePath);
}

function splitUrl(url: string): { pathname: string; search: string } {
  let rest = url;
  // Absolute-form request targets (sent to proxies) carry scheme and authority.
  if (/^https?:\/\//i.test(rest)) {
    const slash = rest.indexOf("/", rest.indexOf("//") + 2);
    rest = slash === -1 ? "/" : rest.slice(slash);
  }
  const hash = rest.indexOf("#");
  if (hash !== -1) rest = rest.slice(0, hash);
  const q = rest.indexOf("?");
  const pathname = q === -1 ? rest : rest.slice(0, q);
  return { pathname: pathname === "" ? "/" : pathname, search: q === -1 ? "" : rest.slice(q + 1) };
}

function lowerCaseHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

function requestOrigin(req: IncomingMessage, headers: Record<string, string>, trustProxy: boolean): string | undefined {
  const first = (v: string | undefined) => v?.split(",")[0]?.trim() || undefined;
  const fwdProto = trustProxy ? first(headers["x-forwarded-proto"])?.toLowerCase() : undefined;
  const proto = fwdProto === "http" || fwdProto === "https" ? fwdProto : "encrypted" in req.socket && req.socket.encrypted ? "https" : "http";
  const host = (trustProxy ? first(headers["x-forwarded-host"]) : undefined) ?? headers.host;
  return host !== undefined && HOST_RE.test(host) ? `${proto}://${host}` : undefined;
}

function hasContent(req: IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const length = req.headers["content-length"];
  return length !== undefined && length !== "0";
}

function requestBody(req: IncomingMessage, method: string, opts: ToGatewayRequestOptions): GatewayRequestBody | undefined {
  const parsed = (value: unknown): GatewayRequestBody => (opts.maxBodySize === undefined ? { kind: "parsed", value } : { kind: "parsed", value, maxBytes: opts.maxBodySize });
  if (opts.parsedBody !== undefined) return parsed(opts.parsedBody);
  const frameworkBody = (req as IncomingMessage & { body?: unknown }).body;
  // body-parser (Express 4) sets `req.body = {}` even for types it does not parse; trust it only once the stream was consumed.
  if (frameworkBody !== undefined && req.readableEnded) return parsed(frameworkBody);
  if (!hasContent(req) && NO_BODY_METHODS.has(method)) return undefined;
  let once: Promise<Uint8Array> | undefined;
  return {
    kind: "stream",
    read(limit: number, onChunk?: (bytes: number) => void) {
      once ??= readBody(req, Math.min(limit, opts.maxBodySize ?? Number.POSITIVE_INFINITY), opts.res, onChunk);
      return once;
    },
  };
}


function readBody(req: IncomingMessage, limit: number, res: ServerResponse | undefined, onChunk?: (bytes: number) => void): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const refuse = (error: unknown = bodyTooLarge(limit)) => {
      // Stop holding the rest of a refused body: discard what still arrives and close after the answer.
      if (res && !res.headersSent) res.setHeader("connection", "close");
      req.resume();
      reject(error);
    };
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) return refuse();
    if (req.readableEnded) return resolve(new Uint8Array(0));
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onFail);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      try {
        if (size > limit) throw bodyTooLarge(limit);
        onChunk?.(chunk.length);
      } catch (error) {
        cleanup();
        refuse(error);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onFail = (error: unknown) => {
      cleanup();
      reject(new GatewayError("invalid_request", "The request body could not be read.", { cause: error }));
    };
    const onClose = () => onFail(new Error("the client closed the connection before the body was complete"));
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("error", onFail);
    req.once("close", onClose);
  });
}

function disconnectSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  // `res` "close" before `writableFinished` means the client went away; req "close" fires after the body is read in Node 20.
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

function writeHead(res: ServerResponse, response: GatewayResponse, defaults: Record<string, string>): void {
  const headers: Record<string, string> = Object.assign({}, response.headers);
  for (const [name, value] of Object.entries(defaults)) {
    // Lengths are ours to compute; content types only when the gateway gave none.
    if (name === "content-length" || headers[name] === undefined) headers[name] = value;
  }
  res.writeHead(response.status, headers);
}

function endWith(res: ServerResponse, chunk: string | Uint8Array | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    res.once("close", resolve);
    res.end(chunk, () => resolve());
  });
}

function waitDrainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}

/** Writes SSE frames (`sse`: the event-stream headers, no length) or a byte stream's chunks as they come (see {@link writeGatewayResponse}). */
async function writeStream(
  res: ServerResponse,
  response: GatewayResponse,
  frames: AsyncIterable<string | Uint8Array>,
  onError: ((e: unknown) => void) | undefined,
  sse: boolean,
): Promise<void> {
  const headers: Record<string, string> = Object.assign({}, response.headers, { "x-accel-buffering": "no" });
  if (sse) {
    headers["content-type"] ??= "text/event-stream; charset=utf-8";
    headers["cache-control"] ??= SSE_CACHE_CONTROL;
    delete headers["content-length"];
  }
  res.writeHead(response.status, headers);
  res.flushHeaders();
  const iterator = frames[Symbol.asyncIterator]();
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    // For an async generator this is queued behind a pending next() and runs its finally blocks.
    Promise.resolve(iterator.return?.()).catch(() => undefined);
  };
  const onClose = () => {
    if (!res.writableFinished) stop();
  };
  res.once("close", onClose);
  try {
    while (!stopped) {
      const step = await iterator.next();
      if (step.done) {
        stopped = true;
        break;
      }
      if (stopped || res.destroyed) break;
      if (!res.write(step.value)) await waitDrainOrClose(res);
    }
    await endWith(res, undefined);
  } catch (error) {
    // A read that fails because the client left (its signal aborted the upstream read) is no error.
    if (!stopped) onError?.(error);
    stop();
    res.destroy();
  } finally {
    res.off("close", onClose);
    if (res.destroyed && !res.writableFinished) stop();
  }
}

function defaultOnError(error: unknown): void {
  console.error("[tollgate] request failed:", error);
}

function writeFallback(req: IncomingMessage, res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.destroy();
    return;
  }
  try {
    const incoming = req.headers["x-request-id"];
    const answer = fallbackResponse(error, typeof incoming === "string" ? incoming : undefined);
    const text = JSON.stringify(answer.body.kind === "json" ? answer.body.value : null);
    res.writeHead(answer.status, Object.assign({}, answer.headers, { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(text)) }));
    res.end(text);
  } catch {
    res.destroy();
  }
}
