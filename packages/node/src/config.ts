/**
 * Configuration of the `tollgate` CLI as data: one table of options (flag, env variable,
 * description, default, zod schema). Parsing, validation and `--help` all come from that table,
 * so an option added to it is parsed, validated and documented at once.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { z } from "zod";
import { catalogSchema, formatIssues } from "@tollgate/core";
import type { ModelCard } from "@tollgate/core";
import { expandEnvReferences, recordSubstitutions } from "./config-env.js";
import { devChainModeSchema } from "./dev-chain/mode.js";
import { logFormatSchema, logLevelSchema } from "./logging.js";

/** One command-line option: `--<flag> <value>`, optionally also read from `env`. */
export interface OptionSpec<T = unknown> {
  /** Long flag name without the leading dashes (e.g. `"port"`). */
  readonly flag: string;
  /** Environment variable read when the flag is absent (e.g. `"TOLLGATE_PORT"`). */
  readonly env?: string;
  /** Placeholder of the value in `--help` (e.g. `"<port>"`). */
  readonly value: string;
  /** One-line description for `--help`. */
  readonly description: string;
  /** Raw default, parsed by `schema` like any other value; options without one are `undefined` when absent. */
  readonly default?: string;
  /** Turns the raw string into the typed value; its issue messages read as "<flag> <message>". */
  readonly schema: z.ZodType<T, string>;
}

/** A table of options keyed by the config property each one fills. */
export type OptionTable = Record<string, OptionSpec<any>>;

/** The typed configuration a table produces: options with a default are always present. */
export type ConfigOf<T extends OptionTable> = {
  [K in keyof T]: T[K] extends { default: string } ? z.output<T[K]["schema"]> : z.output<T[K]["schema"]> | undefined;
};

/** The outcome of {@link parseOptions}: a config, a request for help, or one line per problem. */
export type ParseResult<C> = { kind: "ok"; config: C } | { kind: "help" } | { kind: "error"; problems: string[] };

type Ctx = z.core.$RefinementCtx<string>;

function invalid(ctx: Ctx, raw: string, message: string): never {
  ctx.issues.push({ code: "custom", message: `${message} (got ${JSON.stringify(raw)})`, input: raw });
  return z.NEVER;
}

/** A TCP port; 0 asks the OS for a free one. */
export const portSchema = z.string().transform((raw, ctx) => {
  const n = /^\s*\d{1,5}\s*$/.test(raw) ? Number(raw) : Number.NaN;
  return n >= 0 && n <= 65535 ? n : invalid(ctx, raw, "must be an integer between 1 and 65535 (0 picks a free port)");
});

/** A host name or IP address to listen on. */
export const hostSchema = z.string().transform((raw, ctx) => {
  const host = raw.trim();
  return /^[A-Za-z0-9.:[\]%_-]+$/.test(host) ? host : invalid(ctx, raw, "must be a host name or IP address");
});

/** A non-empty file path. */
export const filePathSchema = z.string().transform((raw, ctx) => (raw.trim() === "" ? invalid(ctx, raw, "must be a file path") : raw.trim()));

/** Whether a `--db` value names a PostgreSQL server (`postgres://…` or `postgresql://…`) rather than a SQLite file. */
export const isPostgresUrl = (db: string): boolean => /^postgres(ql)?:\/\//i.test(db);

/**
 * The `--db` value: a SQLite file path, or a `postgres://`/`postgresql://` connection URL (checked
 * to parse and to name a host, or a socket directory in `?host=`). The value is kept as given (trimmed); {@link isPostgresUrl} tells the two apart.
 */
export const databaseSchema = z.string().transform((raw, ctx) => {
  const db = raw.trim();
  if (!isPostgresUrl(db)) return db === "" ? invalid(ctx, raw, "must be a SQLite file path or a postgres:// URL") : db;
  try {
    const url = new URL(db);
    if (url.hostname !== "" || url.searchParams.get("host")) return db; // ?host=/run/postgresql: a Unix socket
  } catch {
    // reported below
  }
  return invalid(ctx, redactUrl(raw), "must be a URL such as postgres://user:password@host:5432/database");
});

/** The URL with its password replaced by `***`, for messages and logs; anything unparsable comes back unchanged. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url.trim());
    const secretParams = [...parsed.searchParams.keys()].filter((k) => SECRET_PARAMS.test(k));
    if (parsed.password === "" && secretParams.length === 0) return url;
    if (parsed.password !== "") parsed.password = "***";
    for (const k of secretParams) parsed.searchParams.set(k, "***");
    return parsed.toString().replace(/%2A%2A%2A/g, "***");
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@").replace(SECRET_PARAM_VALUES, "$1=***");
  }
}

/** Query parameters of a connection URL that carry a secret (pg takes `?password=`, `sslpassword=`, `sslkey=`). */
const SECRET_PARAM_NAMES = "password|sslpassword|sslkey|pass|pwd|secret|token|api[_-]?key|key";
const SECRET_PARAMS = new RegExp(`^(?:${SECRET_PARAM_NAMES})$`, "i");
/** The same names with their values, in a URL that does not parse. */
const SECRET_PARAM_VALUES = new RegExp(`([?&](?:${SECRET_PARAM_NAMES}))=[^&#\\s]*`, "gi");

/** A PostgreSQL schema name: a lower-case unquoted identifier (so SQL and psql see the same name). */
export const sqlIdentifierSchema = z.string().transform((raw, ctx) =>
  /^[a-z_][a-z0-9_]{0,62}$/.test(raw.trim()) ? raw.trim() : invalid(ctx, raw, "must be a lower-case SQL identifier (letters, digits and _, at most 63, not starting with a digit)"),
);

/** A switch: `on`/`off` (also `true`/`false`, `1`/`0`, `yes`/`no`). */
export const switchSchema = z.string().transform((raw, ctx) => {
  const v = raw.trim().toLowerCase();
  if (["on", "true", "1", "yes"].includes(v)) return true;
  if (["off", "false", "0", "no"].includes(v)) return false;
  return invalid(ctx, raw, "must be on or off");
});

/** A positive integer no larger than `max`. */
export const positiveIntSchema = (max: number) =>
  z.string().transform((raw, ctx) => {
    const n = /^\s*\d{1,9}\s*$/.test(raw) ? Number(raw) : Number.NaN;
    return n >= 1 && n <= max ? n : invalid(ctx, raw, `must be an integer between 1 and ${max}`);
  });

/** An absolute http(s) URL. */
export const httpUrlSchema = z.string().transform((raw, ctx) => {
  try {
    const url = new URL(raw.trim());
    if (url.protocol === "http:" || url.protocol === "https:") return url.toString();
  } catch {
    // reported below
  }
  return invalid(ctx, raw, "must be an http(s) URL such as http://127.0.0.1:9000");
});

/** `*` or a comma-separated list of exact origins (`https://app.example.com`). */
export const corsOriginsSchema = z.string().transform((raw, ctx): "*" | string[] => {
  if (raw.trim() === "*") return "*";
  const origins = raw.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = origins.filter((o) => {
    try {
      return new URL(o).origin !== o;
    } catch {
      return true;
    }
  });
  if (origins.length === 0 || bad.length > 0)
    return invalid(ctx, raw, "must be * or a comma-separated list of origins such as https://app.example.com");
  return origins;
});

/**
 * A secret of at least 16 characters, kept as given. A problem never echoes the value (it would
 * land in logs).
 */
export const secretSchema = z.string().transform((raw, ctx) => {
  if (raw.length >= 16) return raw;
  ctx.issues.push({ code: "custom", message: `must be at least 16 characters (got ${raw.length})`, input: "" });
  return z.NEVER;
});

/** How the gateway proves the owner wallet of `x-session-user-address`: `verified` or `trusted-header`. */
export const walletAuthSchema = z.string().transform((raw, ctx): "verified" | "trusted-header" => {
  const v = raw.trim().toLowerCase();
  return v === "verified" || v === "trusted-header" ? v : invalid(ctx, raw, "must be verified or trusted-header");
});

/** A count of trusted reverse proxies, 0..10. */
export const proxyCountSchema = z.string().transform((raw, ctx) => {
  const n = /^\s*\d{1,2}\s*$/.test(raw) ? Number(raw) : Number.NaN;
  return n >= 0 && n <= 10 ? n : invalid(ctx, raw, "must be an integer between 0 and 10");
});

/** A comma-separated list of hosts (`host[:port]`). */
export const hostListSchema = z.string().transform((raw, ctx) => {
  const hosts = raw.split(",").map((h) => h.trim()).filter(Boolean);
  return hosts.length > 0 && hosts.every((h) => /^[A-Za-z0-9.\-[\]:]{1,255}$/.test(h)) ? hosts : invalid(ctx, raw, "must be a comma-separated list of hosts such as gateway.example.com or localhost:8787");
});

/** Reads and parses a JSON file named by an option; problems become one readable issue. */
function readJsonFile(raw: string, ctx: Ctx): { ok: true; json: unknown } | { ok: false } {
  try {
    return { ok: true, json: JSON.parse(readFileSync(raw.trim(), "utf8")) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    invalid(ctx, raw, code ? `cannot be read: ${code}` : `is not valid JSON: ${(error as Error).message}`);
    return { ok: false };
  }
}

/** A JSON catalog file (an array of model cards or `{ cards: [...] }`), read and validated; one issue per bad field. */
export const catalogFileSchema = z.string().transform((raw, ctx): ModelCard[] => {
  const file = readJsonFile(raw, ctx);
  if (!file.ok) return z.NEVER;
  const json = file.json;
  const wrapped = typeof json === "object" && json !== null && !Array.isArray(json) && "cards" in json;
  const result = catalogSchema.safeParse(wrapped ? (json as { cards: unknown }).cards : json);
  if (result.success) return result.data;
  for (const line of formatIssues(result.error.issues, wrapped ? "cards" : ""))
    ctx.issues.push({ code: "custom", message: `${JSON.stringify(raw.trim())}: ${line || "must be an array of model cards or { cards: [...] }"}`, input: raw });
  return z.NEVER;
});

/** A JSON file of agent cards (an array, or `{ agents: [...] }`) seeding the agent directory; validated by the gateway. */
export const agentsFileSchema = z.string().transform((raw, ctx): unknown[] => {
  const file = readJsonFile(raw, ctx);
  if (!file.ok) return z.NEVER;
  const json = file.json as { agents?: unknown } | unknown[];
  const list = Array.isArray(json) ? json : typeof json === "object" && json !== null && Array.isArray(json.agents) ? json.agents : undefined;
  if (!list) return invalid(ctx, raw, "must hold an array of agent cards or { agents: [...] }");
  return list;
});

/**
 * A JSON file of gateway options (`chains`, `dispenser`, `settlement`, … — whatever JSON can hold),
 * read here and validated by `createGateway` (which reports every problem at once). `${NAME}` in
 * its string values is replaced from `process.env` at parse time (`$${` is a literal `${`; see
 * `config-env.ts`); an unset or empty variable is one problem per use, naming the variable and the
 * JSON path, never a value. `substitutionsOf(result)` (config-env.ts) tells what was substituted.
 */
export const gatewayConfigFileSchema = z.string().transform((raw, ctx): Record<string, unknown> => {
  const file = readJsonFile(raw, ctx);
  if (!file.ok) return z.NEVER;
  const json = file.json;
  if (typeof json !== "object" || json === null || Array.isArray(json)) return invalid(ctx, raw, "must hold a JSON object of gateway options such as { chains, dispenser, settlement }");
  const expanded = expandEnvReferences(json, process.env);
  if (!expanded.ok) {
    for (const problem of expanded.problems) ctx.issues.push({ code: "custom", message: `${JSON.stringify(raw.trim())}: ${problem}`, input: raw });
    return z.NEVER;
  }
  const options = expanded.value as Record<string, unknown>;
  if (expanded.references.length > 0) recordSubstitutions(options, expanded);
  return options;
});

/** Options of `tollgate serve`. */
export const serveOptions = {
  port: { flag: "port", env: "TOLLGATE_PORT", value: "<port>", description: "TCP port to listen on (0 picks a free port).", default: "8787", schema: portSchema },
  host: { flag: "host", env: "TOLLGATE_HOST", value: "<host>", description: "Interface to listen on; 0.0.0.0 for every interface.", default: "127.0.0.1", schema: hostSchema },
  db: {
    flag: "db",
    env: "TOLLGATE_DB",
    value: "<file|url>",
    description: "SQLite database file (its directory is created if missing), or a postgres:// URL that several instances may share.",
    default: "./data/tollgate.db",
    schema: databaseSchema,
  },
  dbSchema: { flag: "db-schema", env: "TOLLGATE_DB_SCHEMA", value: "<name>", description: "PostgreSQL only: the schema of Tollgate's tables, created if missing (default public).", schema: sqlIdentifierSchema },
  dbPoolSize: { flag: "db-pool-size", env: "TOLLGATE_DB_POOL_SIZE", value: "<n>", description: "PostgreSQL only: most connections this process opens (default 10).", schema: positiveIntSchema(1000) },
  dbMigrate: {
    flag: "db-migrate",
    env: "TOLLGATE_DB_MIGRATE",
    value: "<on|off>",
    description: "PostgreSQL only: apply pending migrations at start (default on); off only checks that `tollgate migrate` applied them.",
    schema: switchSchema,
  },
  dbGroupCommit: {
    flag: "db-group-commit",
    env: "TOLLGATE_DB_GROUP_COMMIT",
    value: "<on|off>",
    description: "PostgreSQL only: commit the ledger writes of one event-loop turn together (default on).",
    schema: switchSchema,
  },
  dbPreparedStatements: {
    flag: "db-prepared-statements",
    env: "TOLLGATE_DB_PREPARED_STATEMENTS",
    value: "<on|off>",
    description: "PostgreSQL only: run statements as named prepared statements (default on); off behind a pooler in transaction mode that does not keep them (PgBouncer before 1.21).",
    schema: switchSchema,
  },
  catalog: { flag: "catalog", env: "TOLLGATE_CATALOG", value: "<file>", description: "JSON model catalog (array of cards or { cards }) replacing the bundled one.", schema: catalogFileSchema },
  extendedCatalog: { flag: "extended-catalog", env: "TOLLGATE_EXTENDED_CATALOG", value: "<file>", description: "JSON catalog served by /v1/models/all.", schema: catalogFileSchema },
  modelsServiceUrl: { flag: "models-service-url", env: "TOLLGATE_MODELS_SERVICE_URL", value: "<url>", description: "Models service proxied by /api/models.", schema: httpUrlSchema },
  corsOrigins: { flag: "cors-origins", env: "TOLLGATE_CORS_ORIGINS", value: "<list>", description: "Allowed browser origins: * or a comma-separated list.", schema: corsOriginsSchema },
  internalSecret: {
    flag: "internal-secret",
    env: "TOLLGATE_INTERNAL_SECRET",
    value: "<secret>",
    description:
      "Secret (16+ characters) a server-side host app sends as x-internal-secret to act for the wallet it names in x-session-user-address; prefer the env variable (a flag shows in ps). Default: settlement.internalSecret of --config, else none.",
    schema: secretSchema,
  },
  walletAuth: {
    flag: "wallet-auth",
    env: "TOLLGATE_WALLET_AUTH",
    value: "<verified|trusted-header>",
    description:
      "How x-session-user-address is proven: verified (a wallet session, a key of that wallet or the internal secret; the default) or trusted-header (believed as sent: only behind a proxy that authenticates users).",
    schema: walletAuthSchema,
  },
  authDomains: {
    flag: "auth-domains",
    env: "TOLLGATE_AUTH_DOMAINS",
    value: "<hosts>",
    description: "Hosts a Sign-In with Ethereum message may name (comma-separated, e.g. gateway.example.com); default: the hosts of --cors-origins, plus a loopback Host (localhost, 127.0.0.1) outside production. Required with NODE_ENV=production.",
    schema: hostListSchema,
  },
  trustedProxies: {
    flag: "trusted-proxies",
    env: "TOLLGATE_TRUSTED_PROXIES",
    value: "<n>",
    description: "Reverse proxies in front that append to X-Forwarded-For; the client IP of the per-IP rate limits is that many entries from the right. Default 0: the socket peer.",
    schema: proxyCountSchema,
  },
  agents: { flag: "agents", env: "TOLLGATE_AGENTS", value: "<file.json>", description: "JSON agent cards seeding /agents (array or { agents }).", schema: agentsFileSchema },
  logLevel: { flag: "log-level", env: "TOLLGATE_LOG_LEVEL", value: "<level>", description: "Least severe log level written: trace, debug, info (a line per request), warn, error, fatal or silent.", default: "info", schema: logLevelSchema },
  logFormat: { flag: "log-format", env: "TOLLGATE_LOG_FORMAT", value: "<json|pretty>", description: "Log lines as JSON (one object per line) or pretty (readable). Default: pretty on a terminal, else json.", schema: logFormatSchema },
  metricsToken: {
    flag: "metrics-token",
    env: "TOLLGATE_METRICS_TOKEN",
    value: "<token>",
    description: "Require Authorization: Bearer <token> (16+ characters) on GET /metrics; prefer the env variable (a flag shows in ps). Default: /metrics is open.",
    schema: secretSchema,
  },
  config: { flag: "config", env: "TOLLGATE_CONFIG", value: "<file.json>", description: "JSON file of further gateway options (chains, x402, media, dispenser, settlement, …); ${NAME} in its string values is read from the environment ($${ for a literal ${); flags win.", schema: gatewayConfigFileSchema },
  devChain: {
    flag: "dev-chain",
    env: "TOLLGATE_DEV_CHAIN",
    value: "<auto|on|off>",
    description:
      "A local anvil with test USDC, x402, the dispenser and settlement wired to it (test money only). auto: when no chain is configured, NODE_ENV is not production and the database is a SQLite file; on: always (a usage error with a configured chain or in production); off: never.",
    default: "auto",
    schema: devChainModeSchema,
  },
} satisfies OptionTable;

/** The validated configuration of `tollgate serve`. */
export type ServeConfig = ConfigOf<typeof serveOptions>;

/** Options of `tollgate migrate`: only where the database is. */
export const migrateOptions = { db: serveOptions.db, dbSchema: serveOptions.dbSchema } satisfies OptionTable;

/**
 * Parses `argv` (the arguments after the command name) and `env` against a table. Flags win over
 * env variables, which win over defaults; empty env variables count as unset. `--help`/`-h` wins
 * over everything. Never throws: an unknown flag, a missing value or an invalid value is a
 * problem line of the form `tollgate: --port must be … (got "abc")`; all value problems are
 * reported at once (an argv syntax error stops at the first one).
 */
export function parseOptions<T extends OptionTable>(table: T, argv: readonly string[], env: Readonly<Record<string, string | undefined>> = process.env): ParseResult<ConfigOf<T>> {
  const spec: Record<string, { type: "string" } | { type: "boolean"; short: string }> = { help: { type: "boolean", short: "h" } };
  for (const o of Object.values(table)) spec[o.flag] = { type: "string" };
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...argv], options: spec, strict: true, allowPositionals: false }).values;
  } catch (error) {
    return { kind: "error", problems: [`tollgate: ${argvProblem(error)}`] };
  }
  if (values.help === true) return { kind: "help" };
  const config: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, o] of Object.entries(table)) {
    const flagValue = values[o.flag];
    const envValue = o.env === undefined || env[o.env] === "" ? undefined : env[o.env];
    const [raw, source] = typeof flagValue === "string" ? [flagValue, `--${o.flag}`] : envValue !== undefined ? [envValue, o.env!] : [o.default, "default"];
    if (raw === undefined) continue;
    const result = o.schema.safeParse(raw);
    if (result.success) config[key] = result.data;
    else for (const issue of result.error.issues) problems.push(`tollgate: ${source} ${issue.message}`);
  }
  return problems.length > 0 ? { kind: "error", problems } : { kind: "ok", config: config as ConfigOf<T> };
}

function argvProblem(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  const quoted = /'([^']+)'/.exec(message ?? "")?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `unknown option ${quoted ?? ""} (see --help)`.replace("  ", " ");
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") return `unexpected argument ${JSON.stringify(quoted ?? "")} (see --help)`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") return `${(quoted ?? "").split(" ").find((w) => w.startsWith("--")) ?? "an option"} needs a value (see --help)`;
  return (message ?? String(error)).split("\n")[0]!;
}

/**
 * Renders help for a command from its option table: every flag with its value placeholder,
 * description, env variable and default, plus `-h, --help`.
 */
export function formatHelp(usage: string, summary: string, table: OptionTable): string {
  const rows: [string, string][] = Object.values(table).map((o) => {
    const extra = [o.env ? `env ${o.env}` : "", o.default !== undefined ? `default ${o.default}` : ""].filter(Boolean).join("; ");
    return [`--${o.flag} ${o.value}`, extra ? `${o.description} [${extra}]` : o.description];
  });
  rows.push(["-h, --help", "Show this help."]);
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  return [`Usage: ${usage}`, "", summary, "", "Options:", ...rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`), ""].join("\n");
}
