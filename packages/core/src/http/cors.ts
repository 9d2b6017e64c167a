/** CORS: allowed origins, preflight answers and the response headers browsers may read. */
import type { GatewayRequest } from "./types.js";

/** CORS configuration. */
export interface CorsOptions {
  /** `"*"` or the exact origins allowed (e.g. `["https://app.example.com"]`). */
  readonly origins: "*" | readonly string[];
  /** Send `Access-Control-Allow-Credentials: true` (not allowed with `"*"`). @default false */
  readonly credentials?: boolean;
  /** Preflight cache lifetime in seconds. @default 600 */
  readonly maxAgeSeconds?: number;
}

/** Response headers a browser client may read (the headers the gateway documents). */
export const EXPOSED_HEADERS = [
  "x-request-id",
  "x-should-retry",
  "x-key-budget-limit",
  "x-key-budget-used",
  "x-key-budget-reserved",
  "x-key-budget-remaining",
  "x-payment-intent-id",
  "x-output-cap",
  "x-output-cap-reason",
  "x-transcript-cut-at",
  "x-idempotent-replay",
  "x-receipt",
  "payment-required",
  "payment-response",
  "retry-after",
  "allow",
].join(", ");

const ALLOWED_REQUEST_HEADERS =
  "authorization, content-type, x-request-id, x-session-user-address, x-network-id, x-chain-id, x-idempotency-key, x-internal-secret, payment-signature, x-payment";

const VARY_ORIGIN: Readonly<Record<string, string>> = Object.freeze({ vary: "Origin" });

/** The CORS headers for a request's Origin; only `Vary: Origin` when none is sent or it is not allowed (none at all with `origins: "*"` and no credentials). */
export function corsHeaders(cors: CorsOptions | undefined, req: GatewayRequest): Record<string, string> {
  if (!cors) return {};
  const origin = req.headers.origin;
  const any = cors.origins === "*";
  // The answer depends on the Origin whenever it is not the same `*` for all: say so on every
  // answer, or a shared cache would hand one without the CORS headers to an allowed origin.
  if (!origin || (!any && !cors.origins.includes(origin))) return any && !cors.credentials ? {} : VARY_ORIGIN;
  const headers: Record<string, string> = {
    "access-control-allow-origin": any && !cors.credentials ? "*" : origin,
    "access-control-expose-headers": EXPOSED_HEADERS,
  };
  if (!any || cors.credentials) headers.vary = "Origin";
  if (cors.credentials) headers["access-control-allow-credentials"] = "true";
  return headers;
}

/** Extra headers of a preflight answer (204) for an allowed origin. */
export function preflightHeaders(cors: CorsOptions, req: GatewayRequest, allow: readonly string[]): Record<string, string> {
  const base = corsHeaders(cors, req);
  if (!base["access-control-allow-origin"]) return {};
  return Object.assign({}, base, {
    "access-control-allow-methods": [...allow, "OPTIONS"].join(", "),
    "access-control-allow-headers": req.headers["access-control-request-headers"] ?? ALLOWED_REQUEST_HEADERS,
    "access-control-max-age": String(cors.maxAgeSeconds ?? 600),
  });
}
