/**
 * The standalone server's logger: pino to stdout, JSON lines or pino-pretty's readable lines, at
 * the level `--log-level` names. The gateway writes one line per request to it (see
 * docs/operations.md "Logs").
 */
import { z } from "zod";
import pino, { type Logger } from "pino";
import pretty from "pino-pretty";

/** pino's levels, most verbose first, and `silent`. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type CliLogLevel = (typeof LOG_LEVELS)[number];

/** How lines are written: one JSON object per line, or pino-pretty's coloured human lines. */
export type LogFormat = "json" | "pretty";

const issue = (ctx: z.core.$RefinementCtx<string>, raw: string, message: string) => {
  ctx.issues.push({ code: "custom", message: `${message} (got ${JSON.stringify(raw)})`, input: raw });
  return z.NEVER;
};

/** `--log-level`: one of {@link LOG_LEVELS}. */
export const logLevelSchema = z.string().transform((raw, ctx): CliLogLevel => {
  const v = raw.trim().toLowerCase();
  return (LOG_LEVELS as readonly string[]).includes(v) ? (v as CliLogLevel) : issue(ctx, raw, `must be one of ${LOG_LEVELS.join(", ")}`);
});

/** `--log-format`: `json` or `pretty`. */
export const logFormatSchema = z.string().transform((raw, ctx): LogFormat => {
  const v = raw.trim().toLowerCase();
  return v === "json" || v === "pretty" ? v : issue(ctx, raw, "must be json or pretty");
});

/** The format used when none is given: pretty on a terminal, JSON lines otherwise (a file, a pipe, a log collector). */
export function defaultLogFormat(stdout: { isTTY?: boolean } = process.stdout): LogFormat {
  return stdout.isTTY ? "pretty" : "json";
}

/** A request line in one readable phrase (`GET /v1/models 200 1.2ms`); any other line its message. */
function prettyMessage(log: Record<string, unknown>, messageKey: string): string {
  if (typeof log.route !== "string" || typeof log.status !== "number") return String(log[messageKey] ?? "");
  const charged = typeof log.amount === "string" ? ` charged ${log.amount}` : "";
  return `${String(log.method)} ${String(log.path)} ${log.status} ${String(log.latencyMs)}ms${charged}`;
}

/**
 * Creates the server's logger on stdout: pino's own destination for JSON (synchronous writes, so
 * nothing is lost when the process exits), or pino-pretty in-process for `pretty` (no worker thread).
 */
export function createCliLogger(options: { level: CliLogLevel; format: LogFormat }): Logger {
  const base = { level: options.level, base: { pid: process.pid }, serializers: { err: (error: Error) => withoutUrlSecrets(pino.stdSerializers.err(error)) } };
  if (options.format === "json") return pino(base);
  return pino(base, pretty({ colorize: process.stdout.isTTY === true, ignore: "pid,hostname,component", messageFormat: prettyMessage, sync: true }));
}

/** A URL in free text: its scheme, optional credentials, host, and the path and query after it. */
const URL_IN_TEXT = /\b([a-z][a-z0-9+.-]*:\/\/)(?:[^\s/"'?#@]*@)?([^\s/"'?#]+)([^\s"']*)/gi;

/**
 * A logged error with every URL in its texts (message, stack, causes, a client's `url` field) cut
 * to its scheme and host: an RPC or provider URL may carry an API key in its path or query (viem's
 * errors print the URL they called), and logs travel further than the configuration.
 */
export function withoutUrlSecrets<T>(value: T, depth = 0): T {
  if (typeof value === "string")
    return value.replace(URL_IN_TEXT, (_m, scheme: string, host: string, rest: string) => `${scheme}${host}${rest ? "/…" : ""}`) as T;
  if (value === null || typeof value !== "object" || depth > 8) return value;
  if (Array.isArray(value)) return value.map((v) => withoutUrlSecrets(v, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = withoutUrlSecrets(v, depth + 1);
  return out as T;
}
