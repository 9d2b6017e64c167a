/** Options of the observability capability: `logger`, `metrics` and `readiness` of `createGateway`. */
import { z } from "zod";
import type { GatewayLogger } from "./logger.js";

const LOG_METHODS = ["debug", "info", "warn", "error"] as const;

/**
 * A pino-compatible logger (see {@link GatewayLogger}). Given one, the gateway writes a line per
 * request to it, and its warnings and errors. Without one, request lines are off and only
 * warnings and errors reach the console.
 */
export const loggerOptionSchema = z
  .custom<GatewayLogger>(
    (v) => typeof v === "object" && v !== null && LOG_METHODS.every((m) => typeof (v as Record<string, unknown>)[m] === "function"),
    "must be a pino-compatible logger (an object with debug, info, warn and error methods), e.g. pino()",
  )
  .optional();

/** `options.metrics`: the Prometheus registry and `GET /metrics`. */
export const metricsOptionsSchema = z
  .strictObject({
    /** Count metrics and serve `GET /metrics`. Off: the registry stays empty and `/metrics` answers 404. @default true */
    enabled: z.boolean().optional(),
    /** When set, `GET /metrics` requires `Authorization: Bearer <token>` (401 otherwise). At least 16 characters. */
    token: z.string().min(16, "must be at least 16 characters").optional(),
    /** Also collect prom-client's process metrics (CPU, memory, event loop lag, GC) into the registry. @default false */
    processMetrics: z.boolean().optional(),
  })
  .optional();

/** `options.readiness`: how `GET /readyz` checks the store, the chains and the upstreams. */
export const readinessOptionsSchema = z
  .strictObject({
    /** Deadline of each check in ms. @default 2000 */
    timeoutMs: z.number().int().min(50).max(60_000).optional(),
    /** How long a readiness report is reused, in ms (0: every call checks again, concurrent calls still share one run). @default 2000 */
    cacheMs: z.number().int().min(0).max(600_000).optional(),
  })
  .optional();
