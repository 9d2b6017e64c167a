/**
 * `${NAME}` in the `--config` file, through the real `tollgate` process: the substituted API key
 * reaches a real local OpenAI-compatible upstream, the banner names the variables but never their
 * values, and a missing variable stops start-up with exit code 2.
 */
import type { ChildProcess } from "node:child_process";
import http from "node:http";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "./testing/cli-process.js";

const UPSTREAM_KEY = "sk-test-upstream-0f1e2d3c4b5a";
const MODELS_KEY = "models-service-key-9876";
const INTERNAL_SECRET = "cli-env-internal-secret-0123";
const OWNER = "0x00000000000000000000000000000000000000c7";

/** What the stand-in OpenAI-compatible upstream saw. */
const seen: { path: string | undefined; authorization: string | undefined; literal: string | undefined }[] = [];
let upstream: http.Server;
let upstreamUrl: string;

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    req.resume().on("end", () => {
      seen.push({ path: req.url, authorization: req.headers.authorization, literal: req.headers["x-literal"] as string | undefined });
      if (req.method === "POST" && req.url === "/v1/embeddings")
        return void res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ data: [{ index: 0, embedding: [0.5, 0.25] }], usage: { prompt_tokens: 2, total_tokens: 2 } }));
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"no route"}}');
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

function cli(args: string[], env: Record<string, string>): CliProcess {
  const run = startCli(args, env);
  children.push(run.child);
  return run;
}

function setup(options: unknown): { db: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-cli-env-"));
  const config = join(dir, "gateway.json");
  writeFileSync(config, JSON.stringify(options, null, 2));
  return { db: join(dir, "t.db"), config };
}

describe("tollgate serve --config with ${NAME} references", () => {
  it("sends the key from the environment upstream as Authorization, keeps $${ literal, and names (never prints) the variables", async () => {
    const { db, config } = setup({
      media: {
        providers: {
          openai: {
            type: "openai-compatible",
            baseUrl: `${upstreamUrl}/v1`,
            apiKey: "${TOLLGATE_TEST_UPSTREAM_KEY}",
            headers: { "x-literal": "$${NOT_A_VARIABLE}" },
          },
        },
      },
      modelsService: { url: `${upstreamUrl}/models?key=\${TOLLGATE_TEST_MODELS_KEY}` },
    });
    const run = cli(["serve", "--port", "0", "--db", db, "--config", config], {
      TOLLGATE_TEST_UPSTREAM_KEY: UPSTREAM_KEY,
      TOLLGATE_TEST_MODELS_KEY: MODELS_KEY,
      TOLLGATE_INTERNAL_SECRET: INTERNAL_SECRET,
      TOLLGATE_DEV_CHAIN: "off", // no chain needed here (an unknown variable where the dev chain does not exist)
    });
    const url = await run.url();
    expect(run.out()).toContain("--config from the environment: TOLLGATE_TEST_UPSTREAM_KEY, TOLLGATE_TEST_MODELS_KEY");
    // The query (where keys ride) is never printed, from the environment or not.
    expect(run.out()).toContain(`"models service (/api/models): ${upstreamUrl}/models"`);
    expect(run.out()).toContain("media: providers local, openai");
    for (const secret of [UPSTREAM_KEY, MODELS_KEY, INTERNAL_SECRET]) expect(run.out() + run.err()).not.toContain(secret);

    const created = await fetch(`${url}/api/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-session-user-address": OWNER, "x-internal-secret": INTERNAL_SECRET },
      body: JSON.stringify({ budgetLimit: "1000000", expiresAt: Date.now() + 60_000, networkId: 8453, purpose: "api" }),
    });
    expect(created.status).toBe(201);
    const { token } = (await created.json()) as { token: string };
    const before = seen.length;
    const res = await fetch(`${url}/v1/embeddings`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ model: "text-embedding-3-small", input: "hi" }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { embedding: number[] }[] }).data[0]!.embedding).toEqual([0.5, 0.25]);
    expect(seen.slice(before)).toEqual([{ path: "/v1/embeddings", authorization: `Bearer ${UPSTREAM_KEY}`, literal: "${NOT_A_VARIABLE}" }]);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
  });

  it("exits 2 before opening the store, naming every missing or empty variable and where it is used", async () => {
    const { db, config } = setup({
      chains: [{ chainId: 84532, rpcUrl: "${TOLLGATE_TEST_RPC_URL}", usdc: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" }],
      media: { providers: { openai: { type: "openai-compatible", baseUrl: "https://api.openai.com/v1", apiKey: "${TOLLGATE_TEST_EMPTY}" } } },
    });
    const run = cli(["serve", "--port", "0", "--db", db, "--config", config], { TOLLGATE_TEST_EMPTY: "" });
    expect(await run.exited).toBe(2);
    expect([run.out(), existsSync(db)]).toEqual(["", false]);
    expect(run.err()).toBe(
      [
        `tollgate: --config ${JSON.stringify(config)}: chains.0.rpcUrl: \${TOLLGATE_TEST_RPC_URL} is not set in the environment`,
        `tollgate: --config ${JSON.stringify(config)}: media.providers.openai.apiKey: \${TOLLGATE_TEST_EMPTY} is empty in the environment`,
        "",
      ].join("\n"),
    );
  });

  it("exits 2 on a substituted value the gateway refuses, without printing the value", async () => {
    const badKey = "0xnot-a-private-key-but-secret-anyway";
    const { db, config } = setup({
      chains: [{ chainId: 84532, rpcUrl: "${TOLLGATE_TEST_RPC_URL}", usdc: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" }],
      x402: {
        payTo: "0x00000000000000000000000000000000000000b2",
        networks: [{ chainId: 84532, facilitator: { type: "local", privateKey: "${TOLLGATE_TEST_FACILITATOR_KEY}" } }],
      },
    });
    const run = cli(["serve", "--port", "0", "--db", db, "--config", config], {
      TOLLGATE_TEST_RPC_URL: "http://127.0.0.1:1/v2/rpc-secret-123",
      TOLLGATE_TEST_FACILITATOR_KEY: badKey,
    });
    expect(await run.exited).toBe(2);
    expect(run.err()).toBe("tollgate: x402.networks.0.facilitator.privateKey: must be a 0x-prefixed 32-byte hex private key\n");
    expect(run.out() + run.err()).not.toContain("secret");
  });
});
