#!/usr/bin/env node
/**
 * The `tollgate` command. Commands are rows of one table: adding `keys`, `catalog` or `settle`
 * is one entry with its option table and its `run`. Exit codes: 0 done, 1 failure, 2 bad usage.
 */
import { GatewayOptionsError, createGateway } from "@tollgate/core";
import type { Gateway, GatewayOptions } from "@tollgate/core";
import { formatHelp, migrateOptions, parseOptions, serveOptions } from "./config.js";
import type { ConfigOf, OptionTable, ServeConfig } from "./config.js";
import { redactSecrets, substitutionsOf } from "./config-env.js";
import { prepareDevChain } from "./dev-chain/serve.js";
import { createUndiciHttpClient } from "./http-client.js";
import { createCliLogger, defaultLogFormat } from "./logging.js";
import { openStore } from "./open-store.js";
import { serve } from "./server.js";
import { runSettle } from "./settle-command.js";

interface Command<T extends OptionTable> {
  readonly summary: string;
  readonly options: T;
  /** Resolves to the exit code, or never for a long-running command that exits on a signal. */
  run(config: ConfigOf<T>): Promise<number | "running">;
}

const command = <T extends OptionTable>(c: Command<T>): Command<T> => c;

const commands: Record<string, Command<OptionTable>> = {
  serve: command({ summary: "Start the gateway HTTP server (the default command).", options: serveOptions, run: runServe }),
  settle: command({
    summary: "Run one settlement batch (same options as serve) and print its result as JSON.",
    options: serveOptions,
    run: (c) => runSettle(c, gatewayOptions(c)),
  }),
  migrate: command({ summary: "Apply pending database migrations and exit (serve also applies them at start).", options: migrateOptions, run: runMigrate }),
};

function usage(): string {
  const names = Object.keys(commands);
  const width = Math.max(...names.map((n) => n.length)) + 2;
  return [
    "Usage: tollgate [command] [options]",
    "",
    "Commands:",
    ...names.map((n) => `  ${n.padEnd(width)}${commands[n]!.summary}`),
    `  ${"help".padEnd(width)}Show help for a command: tollgate help <command>.`,
    "",
    "Run `tollgate <command> --help` for the options of a command.",
    "",
  ].join("\n");
}

function commandHelp(name: string): string {
  const c = commands[name]!;
  return formatHelp(`tollgate ${name} [options]`, c.summary, c.options);
}

async function main(argv: string[]): Promise<number | "running"> {
  const [first, ...rest] = argv;
  if (first === "help" || first === "--help" || first === "-h") {
    const topic = first === "help" ? rest[0] : undefined;
    if (topic !== undefined && !commands[topic]) return fail(`unknown command ${JSON.stringify(topic)} (see tollgate --help)`);
    process.stdout.write(topic ? commandHelp(topic) : `${usage()}\n${commandHelp("serve")}`);
    return 0;
  }
  const name = first === undefined || first.startsWith("-") ? "serve" : first;
  const args = name === first ? rest : argv;
  const cmd = commands[name];
  if (!cmd) return fail(`unknown command ${JSON.stringify(name)} (see tollgate --help)`);
  const parsed = parseOptions(cmd.options, args);
  if (parsed.kind === "help") {
    process.stdout.write(commandHelp(name));
    return 0;
  }
  if (parsed.kind === "error") {
    process.stderr.write(`${parsed.problems.join("\n")}\n`);
    return 2;
  }
  return cmd.run(parsed.config);
}

function fail(message: string, code = 2): number {
  process.stderr.write(`tollgate: ${message}\n`);
  return code;
}

/** The gateway options a serve configuration stands for. */
function gatewayOptions(config: ServeConfig): GatewayOptions {
  const catalog = { ...(config.catalog ? { native: config.catalog } : {}), ...(config.extendedCatalog ? { extended: config.extendedCatalog } : {}) };
  const file = (config.config ?? {}) as GatewayOptions;
  return {
    ...file,
    ...(Object.keys(catalog).length > 0 ? { catalog } : {}),
    ...(config.agents ? { agents: { ...file.agents, seed: config.agents as NonNullable<GatewayOptions["agents"]>["seed"] } } : {}),
    ...(config.modelsServiceUrl ? { modelsService: { url: config.modelsServiceUrl } } : {}),
    ...(config.corsOrigins ? { cors: { origins: config.corsOrigins } } : {}),
    ...(config.internalSecret ? { internalSecret: config.internalSecret } : {}),
    ...(config.walletAuth ? { walletAuth: config.walletAuth } : {}),
    ...(config.authDomains ? { auth: { ...file.auth, domains: config.authDomains } } : {}),
    ...(config.trustedProxies !== undefined ? { trustedProxies: config.trustedProxies } : {}),
    ...(config.metricsToken ? { metrics: { ...file.metrics, token: config.metricsToken } } : {}),
  };
}

/**
 * What `NODE_ENV=production` refuses to serve without (a usage error, exit 2): the sign-in domains.
 * Without `auth.domains` a production gateway believes no `Host` (a phishing page could relay a
 * signature its visitor gave it), so sign-in would work only from the CORS origins' hosts, if any:
 * the operator names the public hosts instead.
 */
function productionProblem(options: GatewayOptions, nodeEnv: string | undefined): string | undefined {
  if (nodeEnv !== "production" || options.auth?.domains) return undefined;
  return "NODE_ENV=production needs the sign-in domains: set --auth-domains (or TOLLGATE_AUTH_DOMAINS, or auth.domains in --config) to the public host(s) users sign in at; a production gateway never takes the Host a client names as one";
}

/** Where the metrics are served, and whether they need the token. */
function metricsLine(url: string, metrics: GatewayOptions["metrics"]): string {
  if (metrics?.enabled === false) return "off";
  // The counters include what was charged per model: say so when anyone can read them.
  return `${url}/metrics ${metrics?.token ? "(bearer token required)" : "(open to anyone who can reach this port; set --metrics-token to require a token)"}`;
}

/** Opening a store applies its pending migrations (PostgreSQL: under an advisory lock, so it may run beside live instances). */
async function runMigrate(config: ConfigOf<typeof migrateOptions>): Promise<number> {
  const opened = await openStore(config);
  if (!opened.ok) return fail(opened.message, opened.exitCode);
  await opened.store.close();
  process.stdout.write(`Migrations applied; the database is up to date (${opened.description}).\n`);
  return 0;
}

async function runServe(config: ServeConfig): Promise<number | "running"> {
  // Before the store is opened, so that a refused start applies no migration.
  const options = gatewayOptions(config);
  const unsafe = productionProblem(options, process.env["NODE_ENV"]);
  if (unsafe) return fail(unsafe);
  const opened = await openStore(config);
  if (!opened.ok) return fail(opened.message, opened.exitCode);
  const { store } = opened;
  const dev = await prepareDevChain(config, options);
  if (!dev.ok) {
    await store.close();
    return fail(dev.message, dev.exitCode);
  }
  const http = createUndiciHttpClient();
  // Values the --config file took from the environment are masked in everything printed below.
  const fromEnv = substitutionsOf(config.config);
  const logFormat = config.logFormat ?? defaultLogFormat();
  const logger = createCliLogger({ level: config.logLevel, format: logFormat });
  let gateway: Gateway;
  try {
    gateway = createGateway({ ...dev.options, store, http, logger, metrics: { processMetrics: true, ...dev.options.metrics } });
  } catch (error) {
    await Promise.all([store.close(), http.close(), dev.stop()]);
    if (error instanceof GatewayOptionsError) return fail(redactSecrets(error.issues.join("\ntollgate: "), fromEnv));
    throw error;
  }
  let running;
  try {
    running = await serve(gateway, { port: config.port, host: config.host });
  } catch (error) {
    await Promise.all([gateway.close(), http.close(), dev.stop()]);
    const code = (error as NodeJS.ErrnoException).code;
    return fail(`cannot listen on ${config.host}:${config.port}: ${code ?? (error as Error).message}`, 1);
  }
  const envNames = [...new Set(fromEnv?.references.map((r) => r.name))];
  const lines = [
    `database: ${opened.description}`,
    ...(envNames.length > 0 ? [`--config from the environment: ${envNames.join(", ")}`] : []),
    ...gateway.describe(),
    ...dev.describe(running.url),
    `logs: ${config.logLevel} and above, ${logFormat}, to stdout`,
    `health: ${running.url}/healthz  readiness: ${running.url}/readyz  metrics: ${metricsLine(running.url, dev.options.metrics)}`,
  ];
  // Start and stop are written whatever the level. JSON logs stay JSON lines from the first one: a
  // message is one info line with its fields; otherwise it is plain text, `lines` indented below it.
  const lifecycle = logger.child({}, { level: "info" });
  const announce = (message: string, fields: Record<string, unknown>, lines: readonly string[] = []) => {
    const safe = lines.map((line) => redactSecrets(line, fromEnv));
    if (logFormat === "json") lifecycle.info({ ...fields, ...(safe.length > 0 ? { startup: safe } : {}) }, message);
    else process.stdout.write(`${message}\n${safe.map((line) => `  ${line}\n`).join("")}`);
  };
  let stopping: { signal: NodeJS.Signals; at: number } | undefined;
  const stop = (signal: NodeJS.Signals) => {
    // A second signal stops waiting for in-flight requests; not the same one repeated at once (npm
    // and tsx pass on the Ctrl-C that the terminal already sent to the whole process group).
    if (stopping) {
      if (signal !== stopping.signal || Date.now() - stopping.at > REPEATED_SIGNAL_MS) process.exit(1);
      return;
    }
    stopping = { signal, at: Date.now() };
    announce(`Tollgate stopping (${signal})`, { signal });
    running
      .close()
      .then(() => Promise.all([http.close(), dev.stop()]))
      .then(
        () => process.exit(0),
        (error: unknown) => {
          lifecycle.error({ err: error }, "tollgate: error while stopping");
          process.exit(1);
        },
      );
  };
  // Before the line that says it listens: until a listener is added, a signal kills the process
  // at once (exit by signal), and whoever waits for that line may send one right after reading it.
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  announce(`Tollgate listening on ${running.url}`, { url: running.url }, lines);
  return "running";
}

/** A signal repeated within this many ms is the same stop request relayed by a parent process. */
const REPEATED_SIGNAL_MS = 1_500;

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== "running") process.exitCode = code;
  },
  (error: unknown) => {
    console.error("tollgate:", error);
    // Exit, not just an exit code: whatever was opened before the error (a store's checkpoint worker) must not keep the process alive.
    process.exit(1);
  },
);
