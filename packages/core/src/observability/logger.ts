/**
 * The logger a host app hands the gateway: the small part of pino's interface the gateway calls.
 * A pino logger fits as is; anything else with these methods (a wrapper around another library)
 * fits too.
 */

/** One log method: a structured object first, then an optional message (pino's calling convention). */
export type LogFn = (object: Record<string, unknown>, message?: string) => void;

/** The levels the gateway writes at. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/**
 * A pino-compatible logger. The gateway calls only `debug`, `info`, `warn` and `error` with
 * `(object, message)`; `child` (when present) once at start, to tag its lines with
 * `component: "tollgate"`; `isLevelEnabled` (when present) before building a line, so a level that
 * is off costs nothing. Errors are passed under the `err` key, which pino serializes with the
 * stack and the cause chain.
 */
export interface GatewayLogger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child?(bindings: Record<string, unknown>): GatewayLogger;
  isLevelEnabled?(level: string): boolean;
}

/**
 * The logger of a gateway given none: warnings and errors (background failures, unexpected
 * errors) go to the console as `[tollgate] message {…}`; `debug` and `info`, among them the
 * per-request lines, are dropped.
 */
export const consoleLogger: GatewayLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (object, message) => console.warn(`[tollgate] ${message ?? ""}`, object),
  error: (object, message) => console.error(`[tollgate] ${message ?? ""}`, object),
  isLevelEnabled: (level) => level === "warn" || level === "error",
};

/** Whether `logger` writes at `level` (a logger without `isLevelEnabled` is taken to write everything). */
export function writes(logger: GatewayLogger, level: LogLevel): boolean {
  return logger.isLevelEnabled ? logger.isLevelEnabled(level) : true;
}

/** The logger the gateway writes to: the host's (tagged `component: "tollgate"` when it has `child`), else {@link consoleLogger}. */
export function gatewayLogger(given: GatewayLogger | undefined): GatewayLogger {
  if (!given) return consoleLogger;
  return given.child ? given.child({ component: "tollgate" }) : given;
}
