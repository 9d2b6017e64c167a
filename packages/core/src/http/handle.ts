/**
 * The one request pipeline: request id -> CORS preflight -> route match (404/405) -> params,
 * query and body parsing with zod -> handler -> response headers -> the request's log line and
 * metrics. Every failure becomes the error envelope (docs/api.md "Errors"); `handle` never rejects.
 */
import { bodyTooLarge, GatewayError, invalidRequest, toErrorEnvelope } from "../errors.js";
import { parseWith } from "../validation.js";
import type { GatewayContext } from "../context.js";
import { randomIds } from "../ids.js";
import { parseMultipart } from "../providers/multipart.js";
import type { CorsOptions } from "./cors.js";
import { corsHeaders, preflightHeaders } from "./cors.js";
import { assertJsonShape } from "./json-shape.js";
import { empty, json, stringifyJson } from "./respond.js";
import type { AnyRoute } from "./route.js";
import type { Router } from "./router.js";
import { clientIp } from "./client-ip.js";
import { limitByIp, limitByKey, limitByWallet } from "./limits.js";
import type { GatewayRequest, GatewayResponse } from "./types.js";
import type { RequestTrace } from "../observability/telemetry.js";

const REQUEST_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Every 409 of the gateway is a definitive conflict (a state move, an idempotency key, a claim):
 * repeating the request cannot succeed, so clients that retry 409s (openai-node style) are told not to.
 */
const DEFINITIVE = { "x-should-retry": "false" } as const;
/** The cache policy of an answer to a credential (a route that authenticates or declares credentials it accepts), unless the route set its own. */
const NO_STORE = { "cache-control": "private, no-store" } as const;

/** Echoes a well-formed caller `x-request-id`, else mints `req_<hex>`. */
export function requestIdFor(req: Pick<GatewayRequest, "headers">, ctx: Pick<GatewayContext, "ids">): string {
  const given = req.headers["x-request-id"];
  return given && REQUEST_ID.test(given) ? given : (ctx.ids ?? randomIds).next("req");
}

/**
 * The answer an adapter sends when `gateway.handle` itself threw (it never does, but a wrapped or
 * custom gateway might): the error envelope of docs/api.md "Errors" for `error` (500 `internal_error` for anything
 * but a GatewayError) under the caller's well-formed `x-request-id` or a new one.
 */
export function fallbackResponse(error: unknown, incomingRequestId?: string | null): GatewayResponse {
  const requestId = requestIdFor({ headers: { "x-request-id": incomingRequestId ?? undefined } }, { ids: randomIds });
  const envelope = toErrorEnvelope(error, requestId);
  return json(envelope.body, { status: envelope.status, headers: Object.assign({}, envelope.headers, { "x-request-id": requestId }) });
}

export { parseWith, zodError } from "../validation.js";

/** First value of each query parameter, as a plain object. */
export function queryObject(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of query) if (!(k in out)) out[k] = v;
  return out;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const MULTIPART_TYPE = /^multipart\/form-data\s*;/i;

/** Whether the request announces a body (a framework-parsed one, a length above 0, or chunks). */
function announcesBody(req: GatewayRequest): boolean {
  if (!req.body) return false;
  if (req.body.kind === "parsed") return req.body.value !== undefined && req.body.value !== null && req.body.value !== "";
  const length = req.headers["content-length"];
  return length === undefined ? req.headers["transfer-encoding"] !== undefined : length.trim() !== "0";
}

/**
 * 415 `unsupported_media_type` unless a body is JSON (or multipart where the route takes it). An
 * absent body passes. This is what keeps a web page elsewhere from POSTing a "simple" text/plain
 * request without a CORS preflight.
 */
export function assertJsonBody(req: GatewayRequest, multipart: boolean, hasBytes = announcesBody(req)): void {
  if (!hasBytes) return;
  const type = req.headers["content-type"] ?? "";
  if (JSON_TYPE.test(type) || (multipart && MULTIPART_TYPE.test(type))) return;
  throw new GatewayError("unsupported_media_type", `The body must be JSON (Content-Type: application/json${multipart ? " or multipart/form-data" : ""}); got ${type ? JSON.stringify(type.slice(0, 100)) : "no Content-Type"}.`, {
    param: "content-type",
  });
}

/**
 * Reads and parses a JSON body under `limit` bytes (or a multipart form when allowed). An empty
 * body is `{}`. `onChunk` sees each chunk's size as it arrives (the in-flight byte cap).
 */
export async function readJsonBody(req: GatewayRequest, limit: number, multipart = false, onChunk?: (bytes: number) => void): Promise<unknown> {
  const body = req.body;
  if (!body) return {};
  if (body.kind === "parsed") {
    // The framework read it under its own limits: the route's size limit still holds, on what it parsed.
    const cap = Math.min(limit, body.maxBytes ?? Number.POSITIVE_INFINITY);
    if (parsedSize(body.value) > cap) throw bodyTooLarge(cap);
    return body.value ?? {};
  }
  const bytes = await body.read(limit, onChunk);
  // A Web Request announces no length: the type is checked again once the bytes are known.
  assertJsonBody(req, multipart, bytes.byteLength > 0);
  const type = req.headers["content-type"] ?? "";
  if (multipart && MULTIPART_TYPE.test(type)) {
    const form = parseMultipart(bytes, type);
    return { ...form.fields, ...form.files, ...form.fileLists };
  }
  if (bytes.byteLength === 0) return {};
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw invalidRequest("The body is not valid UTF-8.");
  }
  if (text.trim() === "") return {};
  assertJsonShape(text);
  try {
    return JSON.parse(text);
  } catch {
    throw invalidRequest("The body is not valid JSON.");
  }
}

/**
 * The bytes of a body a framework parsed: its text or bytes as they are, anything else as JSON (a
 * bigint as its digits). A value that is not JSON at all (a cycle) counts as too large: the limit
 * never fails open.
 */
function parsedSize(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === "string") return Buffer.byteLength(value);
  if (value instanceof Uint8Array) return value.byteLength;
  try {
    return Buffer.byteLength(stringifyJson(value) ?? "");
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function bodyLimitOf(route: AnyRoute, auth: unknown, ctx: GatewayContext): number {
  const kind = typeof route.bodyLimit === "function" ? route.bodyLimit(auth) : (route.bodyLimit ?? "json");
  return kind === "media" ? ctx.limits.mediaBodyBytes : kind === "unpaid" ? Math.min(ctx.limits.unpaidBodyBytes, ctx.limits.mediaBodyBytes) : ctx.limits.jsonBodyBytes;
}

async function runRoute(route: AnyRoute, rawParams: Record<string, string>, req: GatewayRequest, requestId: string, ctx: GatewayContext, trace: RequestTrace): Promise<GatewayResponse> {
  const limitHeaders = limitByIp(route, req, ctx);
  const auth: unknown = route.authenticate ? await route.authenticate(req, ctx) : undefined;
  trace.keyId = route.rateLimit?.key?.(auth)?.keyId;
  Object.assign(limitHeaders, limitByKey(route, auth, ctx));
  Object.assign(limitHeaders, limitByWallet(route, auth, ctx));
  const params = route.params ? parseWith(route.params, rawParams, "path") : rawParams;
  const q = queryObject(req.query);
  const query = route.query ? parseWith(route.query, q, "query") : q;
  let body: unknown;
  // The client's share of the in-flight body bytes (http/body-budget.ts); only routes with a body take any.
  const hold = ctx.bodyBudget.hold(route.body ? clientIp(req, ctx.rateLimits.trustedProxies) : undefined);
  try {
    if (route.body) {
      assertJsonBody(req, route.multipart ?? false);
      const limit = bodyLimitOf(route, auth, ctx);
      // Bytes are taken from the cap as they arrive, never on a declared length: a client that
      // announces a body and sends nothing holds nothing. One that falls behind the pace, or
      // outlasts limits.bodyTimeoutMs, gives its bytes back with a 408 (http/body-pace.ts).
      const paced = ctx.bodyPace.watch();
      const onChunk = (n: number) => {
        paced.received(n);
        hold.take(n);
      };
      let raw = await paced.guard(readJsonBody(req, limit, route.multipart ?? false, onChunk));
      if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalidRequest("The body must be a JSON object.");
      if (route.bodyFromQuery) raw = { ...q, ...(raw as Record<string, unknown>) };
      body = parseWith(route.body, raw, "body");
    }
    const response = await route.handle({ request: req, auth, params, query, body, requestId, gateway: ctx, trace });
    return Object.keys(limitHeaders).length === 0 ? response : { status: response.status, headers: Object.assign({}, limitHeaders, response.headers), body: response.body };
  } catch (error) {
    if (error instanceof GatewayError && Object.keys(limitHeaders).length > 0) Object.assign(error, { headers: Object.assign({}, limitHeaders, error.headers) });
    throw error;
  } finally {
    // Decoded bodies live until the handler returns (media inputs are held through the upstream call).
    hold.release();
  }
}

/** Builds the `handle` function of a gateway over a router. */
export function createRequestHandler(router: Router, ctx: GatewayContext, cors: CorsOptions | undefined): (req: GatewayRequest) => Promise<GatewayResponse> {
  const observer = ctx.observability.requests;
  return async (req) => {
    const started = performance.now();
    const requestId = requestIdFor(req, ctx);
    const trace: RequestTrace = {};
    let route: AnyRoute | undefined;
    let caught: unknown;
    let response: GatewayResponse;
    try {
      const method = req.method.toUpperCase();
      const match = router.match(method, req.path);
      if (match.kind === "not_found") throw new GatewayError("not_found", `No route for ${method} ${req.path}.`);
      if (match.kind === "found") route = match.route;
      if (method === "OPTIONS") {
        const allow = match.kind === "found" ? [match.route.method] : match.allow;
        response = empty(204, { allow: [...allow, "OPTIONS"].join(", "), ...(cors ? preflightHeaders(cors, req, allow) : {}) });
      } else if (match.kind === "method_not_allowed") {
        throw new GatewayError("method_not_allowed", `${method} is not allowed on ${req.path}; use ${match.allow.join(", ")}.`, {
          headers: { allow: match.allow.join(", ") },
        });
      } else {
        response = await runRoute(match.route, match.params, req, requestId, ctx, trace);
        if (method === "HEAD") response = { status: response.status, headers: response.headers, body: { kind: "empty" } };
      }
    } catch (error) {
      // An unexpected error is a bug: its details go to the log (the observer), never in the response.
      caught = error;
      const envelope = toErrorEnvelope(error, requestId);
      response = json(envelope.body, { status: envelope.status, headers: envelope.headers });
    }
    // Object.assign, not a literal opening with a spread: see docs/architecture.md "Allocation on the hot path".
    // An answer to a credential (a key's budget, a wallet's keys or usage) is never kept by a shared cache.
    const takesCredential = route !== undefined && (route.authenticate !== undefined || (route.security?.accepts.length ?? 0) > 0);
    const credentialed = takesCredential && response.headers["cache-control"] === undefined ? NO_STORE : undefined;
    const headers = Object.assign({}, response.headers, corsHeaders(cors, req), response.status === 409 ? DEFINITIVE : undefined, credentialed, { "x-request-id": requestId });
    const vary = response.headers.vary;
    if (vary !== undefined && headers.vary !== vary) headers.vary = `${vary}, ${headers.vary}`;
    response = { status: response.status, headers, body: response.body };
    return observer.finish({ request: req, requestId, route, trace, response, error: caught, started });
  };
}
