/**
 * The fixed parts of the OpenAPI document: security schemes, the error envelope, x402 challenge
 * and model card schemas, the shared error responses, header parameters, and the response facts
 * of the few routes whose answer is not a plain 200 JSON object or has a documented schema (the
 * model card routes) — a handler's status and content type are code, not data, so they are
 * stated here; a test checks every entry names a real route.
 */
import { z } from "zod";
import { MODALITIES, modelCardSchema, PRICE_UNITS } from "../catalog/card.js";
import { MODEL_CREATED } from "../catalog/card-view.js";
import { ERROR_TABLE } from "../errors.js";
import { paymentRequirementsSchema, resourceInfoSchema } from "../x402/types.js";
import type { RouteCredential } from "./route.js";

/** A JSON Schema (draft 2020-12) or any other OpenAPI object, as plain JSON. */
export type JsonObject = Record<string, unknown>;

/** The `components.securitySchemes` of the document, keyed by {@link RouteCredential}. */
export const SECURITY_SCHEMES: Readonly<Record<RouteCredential, JsonObject>> = {
  serviceKey: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "svc-<base64url>",
    description: "A service key as `Authorization: Bearer svc-…` (a bare token is accepted too).",
  },
  session: {
    type: "apiKey",
    in: "header",
    name: "x-session-user-address",
    description:
      "The owner wallet (a 0x-prefixed 20-byte EVM address; mixed case must carry its EIP-55 checksum). It names the wallet; a wallet session, a live key of that wallet or the internal secret must prove it (401 wallet_unverified otherwise), unless the operator runs walletAuth: trusted-header.",
  },
  walletSession: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "sess_<base64url>",
    description: "A wallet session from POST /api/auth/verify (Sign-In with Ethereum), as `Authorization: Bearer sess_…` or the tollgate_session HttpOnly cookie (__Host-tollgate_session when Secure, over https).",
  },
  x402: {
    type: "apiKey",
    in: "header",
    name: "PAYMENT-SIGNATURE",
    description: "An x402 v2 payment payload, base64 JSON, answering the 402 challenge of a paid route.",
  },
  internalSecret: {
    type: "apiKey",
    in: "header",
    name: "x-internal-secret",
    description: "The operator's internal secret (compared in constant time): runs settlement batches, and lets a server-side host app act for the wallet it names.",
  },
  metricsToken: {
    type: "http",
    scheme: "bearer",
    description: "The operator's metrics token (metrics.token, or --metrics-token), required by GET /metrics only when one is configured.",
  },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const inputSchema = (schema: z.ZodType): JsonObject => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }) as JsonObject;
  return rest;
};

/**
 * The wire view of a model card (`catalog/card-view.ts`) and a page of them: OpenAI's `Model`
 * fields, every field of the card schema (converted from it, so they cannot drift), `type` and
 * the enriched operations.
 */
function modelCardSchemas(): Record<string, JsonObject> {
  const { properties, required } = inputSchema(modelCardSchema) as { properties: Record<string, JsonObject>; required: string[] };
  const modality = { type: "string", enum: [...MODALITIES] };
  const modalities = { type: "array", items: modality };
  return {
    ModelPricingUnit: {
      type: "object",
      description: "The prices of one unit: `entries` maps a price key (or `key:name=value,…` for a `when` variant) to USD per unit.",
      properties: {
        unitKey: { type: "string", enum: Object.keys(PRICE_UNITS) },
        unit: { type: "string", description: "What is counted: tokens, characters, images, seconds or requests." },
        header: { type: "string", description: "A label, e.g. `USD per 1M tokens`." },
        entries: { type: "object", additionalProperties: { type: "number" } },
        valueKeys: { type: "array", items: { type: "string" }, description: "The distinct price keys (what metering reads)." },
        default: { type: "boolean", description: "True on the unit to show first." },
      },
      required: ["unitKey", "unit", "header", "entries", "valueKeys", "default"],
    },
    ModelOperation: {
      type: "object",
      properties: {
        modality,
        operation: { type: "string" },
        sourceTypes: { type: "array", items: { type: "string", enum: ["native", "extended"] }, description: "The catalog serving the card." },
        input: modalities,
        output: modalities,
        pricingUnits: { type: "array", items: ref("ModelPricingUnit") },
        streamable: { type: "boolean", description: "True for text chat (SSE) and video generation (status stream)." },
      },
      required: ["modality", "operation", "sourceTypes", "input", "output", "pricingUnits", "streamable"],
    },
    ModelCard: {
      type: "object",
      description: "A model card: OpenAI's `Model` fields (`id`, `object`, `created`, `owned_by`), every field of the card, and the derived `type` and operation capabilities.",
      properties: {
        id: { type: "string", description: "OpenAI's `id`: the card's `modelId`." },
        object: { const: "model" },
        created: {
          type: "integer",
          minimum: 0,
          description: `OpenAI's \`created\` (Unix seconds): always ${MODEL_CREATED}, meaning unknown, since cards carry no dates; fixed so answers are deterministic.`,
        },
        owned_by: { type: "string", description: "OpenAI's `owned_by`: the card's `provider`." },
        ...properties,
        type: { ...modality, description: "The primary modality: that of the first operation." },
        operations: { type: "array", minItems: 1, items: ref("ModelOperation") },
      },
      required: ["id", "object", "created", "owned_by", ...required, "type"],
    },
    ModelList: {
      type: "object",
      description: "A page of model cards, ordered by (modelId, provider).",
      properties: {
        object: { const: "list" },
        data: { type: "array", items: ref("ModelCard") },
        total: { type: "integer", minimum: 0, description: "How many cards match the filters." },
        next_cursor: { anyOf: [{ type: "string" }, { type: "null" }], description: "The `cursor` of the next page; null on the last." },
      },
      required: ["object", "data", "total", "next_cursor"],
    },
  };
}

/** `components.schemas`: the error envelope of docs/api.md "Errors" (codes and types from the error table), the x402 challenge and the model card. */
export function componentSchemas(): Record<string, JsonObject> {
  const codes = Object.keys(ERROR_TABLE);
  const types = [...new Set(Object.values(ERROR_TABLE).map((s) => s.type))];
  return {
    Error: {
      type: "object",
      description: "The error envelope every failing route answers with.",
      properties: { error: ref("ErrorBody") },
      required: ["error"],
    },
    ErrorBody: {
      type: "object",
      properties: {
        code: { type: "string", enum: codes, description: "Stable snake_case code; its status is fixed by the error table." },
        message: { type: "string" },
        type: { type: "string", enum: types, description: "The OpenAI-style error type." },
        param: { type: "string", description: "The request field or header at fault." },
        details: { type: "object", additionalProperties: true },
        requestId: { type: "string", description: "Equals the response's x-request-id header." },
      },
      required: ["code", "message", "type", "requestId"],
    },
    PaymentRequired: {
      type: "object",
      description:
        "The x402 v2 challenge, also sent base64-encoded in the PAYMENT-REQUIRED header. When a service key's budget is too small, `error` is the envelope's error object (code budget_exhausted).",
      properties: {
        x402Version: { const: 2 },
        error: { anyOf: [{ type: "string" }, ref("ErrorBody")] },
        resource: inputSchema(resourceInfoSchema),
        accepts: { type: "array", items: inputSchema(paymentRequirementsSchema) },
      },
      required: ["x402Version", "error", "resource", "accepts"],
    },
    ...modelCardSchemas(),
  };
}

const errorContent = { "application/json": { schema: ref("Error") } };
const errorResponse = (description: string) => ({ description, content: errorContent });

/** `components.responses`: the error answers operations refer to. */
export const ERROR_RESPONSES: Readonly<Record<string, JsonObject>> = {
  BadRequest: errorResponse("invalid_request: a path, query, body or header value is missing or invalid (`param` names it)."),
  Unauthorized: errorResponse("A required credential is missing, unknown, revoked or expired, or the internal secret is wrong."),
  BudgetExhausted: errorResponse("budget_exhausted: the key's remaining budget is too small."),
  InsufficientFunds: errorResponse(
    "insufficient_funds: on a chain the gateway settles, the wallet's USDC allowance to the settlement spender or its balance does not cover its live keys' budgets and queued charges with this change (details: chainId, spender, allowance, balance, required).",
  ),
  ChainUnavailable: errorResponse("chain_unavailable: the chain's RPC did not answer while the gateway read the wallet's allowance and balance; retry."),
  PaymentRequired: {
    description: "No payment was sent, the x402 payment was refused, or the key's budget is too small.",
    headers: { "PAYMENT-REQUIRED": { description: "The challenge, base64 JSON.", schema: { type: "string" } } },
    content: { "application/json": { schema: { anyOf: [ref("PaymentRequired"), ref("Error")] } } },
  },
  NotFound: errorResponse("The path, or an object the request names (key, intent, model, agent, video job), does not exist."),
  RequestTimeout: errorResponse(
    "request_timeout: the body arrived slower than limits.minBodyBytesPerSecond (8 KiB/s by default) once limits.bodyGraceMs (10 s) had passed, or not within limits.bodyTimeoutMs (5 min); the connection is closed.",
  ),
  PayloadTooLarge: errorResponse("payload_too_large: the body is over the route's limit (1 MiB JSON, 32 MiB media by default)."),
  Forbidden: errorResponse("forbidden: the proof belongs to another wallet than the one named (or a service key where the route takes none)."),
  UnsupportedMediaType: errorResponse("unsupported_media_type: a body was sent with a Content-Type other than application/json (or multipart where the route takes files)."),
  RateLimited: {
    description:
      "rate_limited: the per-key or per-IP request rate was exceeded, or (with Retry-After: 1 and no x-ratelimit headers) the client's bodies in flight would pass its share of the process's in-flight body bytes (limits.inFlightBodyBytesPerClient). too_many_open_intents (routes that reserve on a service key): the key holds the most open payment intents it may (limits.openIntentsPerKey), with Retry-After: 1 and no x-ratelimit headers.",
    headers: {
      "Retry-After": { description: "Seconds until the window resets.", schema: { type: "string" } },
      "x-ratelimit-limit": { description: "Requests per window.", schema: { type: "string" } },
      "x-ratelimit-remaining": { description: "Requests left in the window.", schema: { type: "string" } },
      "x-ratelimit-reset": { description: "Seconds until the window resets.", schema: { type: "string" } },
    },
    content: { "application/json": { schema: ref("Error") } },
  },
  InternalError: errorResponse("internal_error: an unexpected failure (details are logged, never returned)."),
  Error: errorResponse("Any other error in the envelope (403, 409, 429, 502, 503, 504 — see the error table)."),
};

/** `components.parameters`: request headers some routes read besides their credential. */
export const HEADER_PARAMETERS: Readonly<Record<string, JsonObject>> = {
  NetworkId: { name: "x-network-id", in: "header", description: "The chain id of the request.", schema: { type: "string", pattern: "^\\d{1,15}$" } },
  ChainId: { name: "x-chain-id", in: "header", description: "Alias of x-network-id.", schema: { type: "string", pattern: "^\\d{1,15}$" } },
  IdempotencyKey: {
    name: "x-idempotency-key",
    in: "header",
    description: "Replays the original answer for a repeat with the same parameters (or the body's idempotencyKey).",
    schema: { type: "string", minLength: 1, maxLength: 255 },
  },
};

/** What the document says about one route beyond its table entry. */
export interface RouteDoc {
  /** The success status. @default 200 */
  readonly status?: number;
  readonly description?: string;
  /** The success content by media type. @default a JSON object */
  readonly content?: Readonly<Record<string, JsonObject>>;
  /** Names in {@link HEADER_PARAMETERS}. */
  readonly headers?: readonly string[];
  /** Error answers of this route beyond those its security and schemas imply: status → a name in `components.responses`. */
  readonly errors?: Readonly<Record<string, string>>;
}

/** Response facts of the routes that differ from "200, a JSON object" or name their answer's schema, keyed by `METHOD path`. */
export const ROUTE_DOCS: Readonly<Record<string, RouteDoc>> = {
  "GET /v1/models": { description: "A page of native model cards.", content: { "application/json": { schema: ref("ModelList") } } },
  "POST /v1/models/search": { description: "A page of native model cards.", content: { "application/json": { schema: ref("ModelList") } } },
  "GET /v1/models/all": { description: "A page of extended (or native) model cards.", content: { "application/json": { schema: ref("ModelList") } } },
  "GET /v1/models/:model+": { description: "The model card.", content: { "application/json": { schema: ref("ModelCard") } } },
  "GET /api/models": {
    description: 'Without a models service, a `ModelList` page plus `source: "native"`; with one, the service\'s JSON as it is (header `x-models-source: upstream`).',
  },
  "POST /api/keys": { status: 201, description: "The key with its token (returned only here).", errors: { "402": "InsufficientFunds", "503": "ChainUnavailable" } },
  "PATCH /api/keys/:keyId": { errors: { "402": "InsufficientFunds", "503": "ChainUnavailable" } },
  "POST /api/payments/prepare": { headers: ["NetworkId", "ChainId", "IdempotencyKey"] },
  "GET /api/settlement/status": { headers: ["ChainId", "NetworkId"] },
  "POST /v1/feedback": { status: 201, description: "The stored feedback record.", headers: ["ChainId"] },
  "POST /v1/audio/speech": {
    description: "The audio bytes, with the provider's content type (audio/mpeg for mp3, audio/wav for wav, …).",
    content: { "audio/*": {} },
  },
  "POST /v1/audio/transcriptions": {
    description: "`{text, receipt}`, or the plain text when response_format is text.",
    content: { "application/json": { schema: { type: "object" } }, "text/plain": { schema: { type: "string" } } },
  },
  "POST /v1/videos/generations": { status: 202, description: "The submitted job `{id, object, status, created, model, receipt}`." },
  "GET /": { description: "`{name, version, apiVersion, links}`; links are paths relative to the gateway's base URL." },
  "GET /healthz": { description: '`{status: "ok"}`.' },
  "GET /readyz": {
    description:
      'Ready: `{status: "ready", checks: {<name>: {ok, detail, latencyMs}}}` with checks `store`, `chain:<id>`, `upstream:<provider>`. Not ready: 503 `not_ready` with the same checks in `details.checks`.',
  },
  "GET /metrics": { description: "The Prometheus text exposition format (version 0.0.4).", content: { "text/plain": { schema: { type: "string" } } } },
  "GET /v1/videos/:id/content": {
    description:
      "The completed job's file as its upstream sends it (200, or 206 for a `Range`, which is passed on): `video/*` or `application/octet-stream`, streamed. 409 `invalid_state` before the job is completed.",
    content: { "video/mp4": { schema: { type: "string", contentMediaType: "video/mp4" } } },
  },
  "GET /v1/videos/:id/stream": {
    description:
      'Server-sent events: `video.status` frames `{jobId, status, progress?, url?, error?}` on each change, `svc.error` on failure, then `data: [DONE]` (`compose.`-prefixed event names under compat "compose").',
    content: { "text/event-stream": { schema: { type: "string" } } },
  },
};
