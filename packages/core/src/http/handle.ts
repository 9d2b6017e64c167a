/**
 * The one request pipeline: request id -> CORS preflight -> route match (404/405) -> params,
 * query and body parsing with zod -> handler -> response headers. Every failure becomes the
 * CONTRACT.md error envelope; `handle` never rejects.
 */
import type { z } from "zod";
import { GatewayError, invalidRequest, toErrorEnvelope } from "../errors.js";
import type { GatewayContext } from "../context.js";
import { randomIds } from "../ids.js";
import { parseMultipart } from "../providers/multipart.js";
import type { CorsOptions } from "./cors.js";
import { corsHeaders, preflightHeaders } from "./cors.js";
import { empty, json } from "./respond.js";
import type { AnyRoute } from "./route.js";
import type { Router } from "./router.js";
import type { GatewayRequest, GatewayResponse } from "./types.js";

const REQUEST_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Every 409 of the gateway is a definitive conflict (a state move, an idempotency key, a claim):
 * repeating the request cannot succeed, so clients that retry 409s (openai-node style) are told not to.
 */
const DEFINITIVE = { "x-should-retry": "false" } as const;

/** Echoes a well-formed caller `x-request-id`, else mints `req_<hex>`. */
export function requestIdFor(req: Pick<GatewayRequest, "headers">, ctx: Pick<GatewayContext, "ids">): string {
  const given = req.headers["x-request-id"];
  return given && REQUEST_ID.test(given) ? given : (ctx.ids ?? randomIds).next("req");
}

/**
 * The answer an adapter sends when `gateway.handle` itself threw (it never does, but a wrapped or
 * custom gateway might): the CONTRACT.md envelope of `error` (500 `internal_error` for anything
 * but a GatewayError) under the caller's well-formed `x-request-id` or a new one.
 */
export function fallbackResponse(error: unknown, incomingRequestId?: string | null): GatewayResponse {
  const requestId = requestIdFor({ headers: { "x-request-id": incomingRequestId ?? undefined } }, { ids: randomIds });
  const envelope = toErrorEnvelope(error, requestId);
  return json(envelope.body, { status: envelope.status, headers: { ...envelope.headers, "x-request-id": requestId } });
}

/** Turns zod issues into one 400 naming the first offending field and listing all of them. */
export function zodError(error: z.ZodError, where: "body" | "query" | "path"): GatewayError {
  const issues = error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
  const first = issues[0];
  const message = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
  return invalidRequest(`Invalid ${where}: ${message}`, first?.path || undefined, { issues });
}

/** Parses `value` with `schema`, throwing a 400 envelope error on failure. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, where: "body" | "query" | "path"): T {
  const result = schema.safeParse(value);
  if (!result.success) throw zodError(result.error, where);
  return result.data;
}

/** First value of each query parameter, as a plain object. */
export function queryObject(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of query) if (!(k in out)) out[k] = v;
  return out;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Reads and parses a JSON body under `limit` bytes (or a multipart form when allowed). An empty body is `{}`. */
export async function readJsonBody(req: GatewayRequest, limit: number, multipart = false): Promise<unknown> {
  const body = req.body;
  if (!body) return {};
  if (body.kind === "parsed") return body.value ?? {};
  const bytes = await body.read(limit);
  const type = req.headers["content-type"] ?? "";
  if (multipart && /^multipart\/form-data/i.test(type)) {
    const form = parseMultipart(bytes, type);
    return { ...form.fields, ...form.files };
  }
  if (bytes.byteLength === 0) return {};
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw invalidRequest("The body is not valid UTF-8.");
  }
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw invalidRequest("The body is not valid JSON.");
  }
}

async function runRoute(route: AnyRoute, rawParams: Record<string, string>, req: GatewayRequest, requestId: string, ctx: GatewayContext): Promise<GatewayResponse> {
  const auth: unknown = route.authenticate ? await route.authenticate(req, ctx) : undefined;
  const params = route.params ? parseWith(route.params, rawParams, "path") : rawParams;
  const q = queryObject(req.query);
  const query = route.query ? parseWith(route.query, q, "query") : q;
  let body: unknown;
  if (route.body) {
    const limit = route.bodyLimit === "media" ? ctx.limits.mediaBodyBytes : ctx.limits.jsonBodyBytes;
    let raw = await readJsonBody(req, limit, route.multipart ?? false);
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalidRequest("The body must be a JSON object.");
    if (route.bodyFromQuery) raw = { ...q, ...(raw as Record<string, unknown>) };
    body = parseWith(route.body, raw, "body");
  }
  return route.handle({ request: req, auth, params, query, body, requestId, gateway: ctx });
}

/** Builds the `handle` function of a gateway over a router. */
export function createRequestHandler(router: Router, ctx: GatewayContext, cors: CorsOptions | undefined): (req: GatewayRequest) => Promise<GatewayResponse> {
  return async (req) => {
    const requestId = requestIdFor(req, ctx);
    let response: GatewayResponse;
    try {
      const method = req.method.toUpperCase();
      const match = router.match(method, req.path);
      if (match.kind === "not_found") throw new GatewayError("not_found", `No route for ${method} ${req.path}.`);
      if (method === "OPTIONS") {
        const allow = match.kind === "found" ? [match.route.method] : match.allow;
        response = empty(204, { allow: [...allow, "OPTIONS"].join(", "), ...(cors ? preflightHeaders(cors, req, allow) : {}) });
      } else if (match.kind === "method_not_allowed") {
        throw new GatewayError("method_not_allowed", `${method} is not allowed on ${req.path}; use ${match.allow.join(", ")}.`, {
          headers: { allow: match.allow.join(", ") },
        });
      } else {
        response = await runRoute(match.route, match.params, req, requestId, ctx);
        if (method === "HEAD") response = { ...response, body: { kind: "empty" } };
      }
    } catch (error) {
      // A client that went away aborts its upstream call with the signal's reason: not a bug to log.
      if (!(error instanceof GatewayError) && !req.signal?.aborted) reportUnexpected(error, requestId);
      const envelope = toErrorEnvelope(error, requestId);
      response = json(envelope.body, { status: envelope.status, headers: envelope.headers });
    }
    return { ...response, headers: { ...response.headers, ...corsHeaders(cors, req), ...(response.status === 409 ? DEFINITIVE : {}), "x-request-id": requestId } };
  };
}

function reportUnexpected(error: unknown, requestId: string): void {
  // An unexpected error is a bug; keep the details in the log, never in the response.
  console.error(`[tollgate] ${requestId} unexpected error:`, error);
}
