/**
 * The request pipeline's side of observability: one log line and one count per answered request.
 * A server-sent-events answer is recorded when its stream ends (its latency is the stream's, and
 * a chat stream's charge, settled at the end, is on its line).
 */
import { GatewayError } from "../errors.js";
import { openApiPath } from "../http/openapi.js";
import type { AnyRoute } from "../http/route.js";
import type { GatewayRequest, GatewayResponse } from "../http/types.js";
import { writes, type GatewayLogger, type LogLevel } from "./logger.js";
import type { GatewayMetrics } from "./metrics.js";
import type { RequestTrace } from "./telemetry.js";
import { endingWith } from "../iterables.js";

/** The route label of a request no route matched (404), so a scan of random paths adds no series. */
export const UNMATCHED_ROUTE = "unmatched";

/** The tag of the health, metrics and index routes: their successful answers log at debug level (probes poll them). */
export const OPERATIONS_TAG = "operations";

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** One request as the pipeline finished it. */
export interface FinishedRequest {
  readonly request: GatewayRequest;
  readonly requestId: string;
  /** The matched route (also on a 405 or a preflight of a known path, when one matched); undefined on a 404. */
  readonly route: AnyRoute | undefined;
  readonly trace: RequestTrace;
  readonly response: GatewayResponse;
  /** What the pipeline caught, when the answer is an error envelope. */
  readonly error: unknown;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
}

/** Records answered requests. */
export interface RequestObserver {
  /** Records `finished` (now, or when its event stream ends) and returns the response to send (an SSE body wrapped to notice its end). */
  finish(finished: FinishedRequest): GatewayResponse;
}

/** Where the records go: `log` writes one line per request (none when undefined); `fallback` reports unexpected errors when `log` is undefined. */
export interface RequestObserverOptions {
  readonly log: GatewayLogger | undefined;
  readonly fallback: GatewayLogger;
  readonly metrics: GatewayMetrics;
}

/** The level of a request's line: 5xx error (503, a refusal by design, warn), a client that left info, probes debug. */
function levelOf(f: FinishedRequest, status: number): LogLevel {
  if (f.request.signal?.aborted) return "info";
  if (status >= 500) return status === 503 ? "warn" : "error";
  if (status < 400 && f.route?.tag === OPERATIONS_TAG) return "debug";
  return "info";
}

/** Creates the observer. */
export function createRequestObserver(options: RequestObserverOptions): RequestObserver {
  const { log, fallback, metrics } = options;
  const labels = new WeakMap<AnyRoute, string>();
  const routeLabel = (route: AnyRoute | undefined) => {
    if (!route) return UNMATCHED_ROUTE;
    let label = labels.get(route);
    if (label === undefined) labels.set(route, (label = openApiPath(route.path)));
    return label;
  };

  const record = (f: FinishedRequest) => {
    const ms = performance.now() - f.started;
    const method = METHODS.has(f.request.method) ? f.request.method : "OTHER";
    const route = routeLabel(f.route);
    const status = f.response.status;
    metrics.request(method, route, status, ms / 1000);
    const unexpected = f.error !== undefined && !(f.error instanceof GatewayError) && !f.request.signal?.aborted;
    if (!log) {
      // A client that went away aborts its upstream call with the signal's reason: not a bug to report.
      if (unexpected) fallback.error({ err: f.error, reqId: f.requestId }, "unexpected error");
      return;
    }
    const level = levelOf(f, status);
    if (!writes(log, level)) return;
    const line: Record<string, unknown> = { reqId: f.requestId, method, route, path: f.request.path, status, latencyMs: Math.round(ms * 100) / 100 };
    const t = f.trace;
    if (t.keyId !== undefined) line.keyId = t.keyId;
    if (t.model !== undefined) line.model = t.model;
    if (t.amount !== undefined) line.amount = t.amount.toString();
    if (t.upstreamMs !== undefined) line.upstreamMs = Math.round(t.upstreamMs * 100) / 100;
    if (f.error instanceof GatewayError) line.code = f.error.code;
    if (f.request.signal?.aborted) line.aborted = true;
    // Unexpected errors and 5xx carry the error with its stack (and its cause: the upstream failure).
    if (f.error !== undefined && (unexpected || status >= 500)) line.err = f.error;
    log[level](line, "request");
  };

  return {
    finish(f) {
      const body = f.response.body;
      const { status, headers } = f.response;
      if (body.kind === "sse") return { status, headers, body: { kind: "sse", frames: endingWith(body.frames, () => record(f)) } };
      if (body.kind === "stream") return { status, headers, body: { kind: "stream", chunks: endingWith(body.chunks, () => record(f)) } };
      record(f);
      return f.response;
    },
  };
}
