/**
 * The system under test, as its own process: `createGateway` with production defaults (sweeper
 * on its default interval) behind `serve()` of @tollgate/node, the undici HTTP client, and one
 * openai-compatible provider pointing at the stub.
 *   argv[2]: JSON `{ stubUrl, store: "memory" } | { stubUrl, store: "sqlite", filename } |
 *            { stubUrl, store: "postgres", url, schema, groupCommit? }`
 * Creates a service key with a huge budget through `POST /api/keys` and prints
 * `{"url","token","keyId"}`. Counts the 200 answers it served to `POST /v1/embeddings`; the
 * stdin command `stats` answers `{"served200","cut"}` (`profile-start` / `profile-stop <file>`: profiler.ts), `cut` counting the calls whose client left before
 * the answer was written (wrk closes its connections mid-request when its time is up), and
 * `chat200` / `chatCut` count `POST /v1/chat/completions` the same way. Exits (closing the gateway) on SIGTERM or when
 * stdin closes. With BENCH_LOG_DIR set, the gateway writes its request lines at info level with pino (synchronous
 * writes, as the CLI's default destination) to a file there (stdout is the parent's channel).
 */
import { createGateway, createMemoryStore, type Store } from "@tollgate/core";
import { createUndiciHttpClient, serve } from "@tollgate/node";
import { createPostgresStore } from "@tollgate/postgres";
import { createSqliteStore } from "@tollgate/sqlite";
import { join } from "node:path";
import pino from "pino";
import { serveParent } from "./lib.js";
import { createProfiler } from "./profiler.js";

type Config = { stubUrl: string } & ({ store: "memory" } | { store: "sqlite"; filename: string } | { store: "postgres"; url: string; schema: string; groupCommit?: boolean });
const config = JSON.parse(process.argv[2] ?? "{}") as Config;
const OWNER = "0x00000000000000000000000000000000000000b1";
/** The host app's secret: it proves the owner wallet of the key creation. */
const INTERNAL_SECRET = "bench-gateway-internal-secret";

async function openStore(): Promise<Store> {
  switch (config.store) {
    case "memory":
      return createMemoryStore();
    case "sqlite":
      return createSqliteStore({ filename: config.filename });
    case "postgres":
      return createPostgresStore({ connectionString: config.url, schema: config.schema, ...(config.groupCommit === undefined ? {} : { groupCommit: config.groupCommit }) });
    default:
      throw new Error(`gateway.ts: unknown store in ${process.argv[2]}`);
  }
}

const http = createUndiciHttpClient();
const logDir = process.env.BENCH_LOG_DIR;
const logger = logDir ? pino({ level: "info" }, pino.destination({ dest: join(logDir, `gateway-${process.pid}.log`), sync: true })) : undefined;
const gateway = createGateway({
  ...(logger ? { logger } : {}),
  store: await openStore(),
  internalSecret: INTERNAL_SECRET,
  http,
  media: { providers: { openai: { type: "openai-compatible", baseUrl: `${config.stubUrl}/v1`, apiKey: "sk-bench" } } },
});
const running = await serve(gateway, { port: 0 });

let served200 = 0;
let cut = 0;
let chat200 = 0;
let chatCut = 0;
running.server.on("request", (req, res) => {
  if (req.method === "POST" && req.url === "/v1/embeddings")
    res.once("close", () => {
      if (!res.writableFinished) cut++;
      else if (res.statusCode === 200) served200++;
    });
  else if (req.method === "POST" && req.url === "/v1/chat/completions")
    res.once("close", () => {
      if (!res.writableFinished) chatCut++;
      else if (res.statusCode === 200) chat200++;
    });
});

const created = await fetch(`${running.url}/api/keys`, {
  method: "POST",
  headers: { "content-type": "application/json", "x-session-user-address": OWNER, "x-internal-secret": INTERNAL_SECRET },
  body: JSON.stringify({ budgetLimit: "1000000000000000000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" }),
});
if (created.status !== 201) throw new Error(`key creation answered ${created.status}: ${await created.text()}`);
const key = (await created.json()) as { keyId: string; token: string };

const profiler = createProfiler();
serveParent(
  { url: running.url, token: key.token, keyId: key.keyId },
  async (command) => (command === "stats" ? { served200, cut, chat200, chatCut } : ((await profiler(command)) ?? { error: `unknown command ${command}` })),
  async () => {
    await running.close({ graceMs: 1_000 });
    await http.close();
  },
);
