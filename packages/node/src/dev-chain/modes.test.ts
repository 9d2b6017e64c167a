/**
 * When the dev chain starts and when it must not: the decision as a pure function, and the real
 * CLI for each way of turning it off (flag, a configured chain, production) and each usage error.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, startCli, type CliProcess } from "../testing/cli-process.js";
import { decideDevChain, devChainDir } from "./mode.js";
import { postJson, tempDataDir } from "./test-support.js";

const CHAIN = { chainId: 8453, rpcUrl: "http://127.0.0.1:9", usdc: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913" };

describe("decideDevChain", () => {
  const decide = (mode: "auto" | "on" | "off", options: Record<string, unknown> = {}, db = "./data/tollgate.db", nodeEnv?: string) =>
    decideDevChain({ mode, options, db, nodeEnv });

  it("auto starts it beside a SQLite file when nothing chain-related is configured and NODE_ENV is not production", () => {
    expect(decide("auto")).toEqual({ kind: "start", dir: resolve("data", "dev-chain") });
    expect(decide("auto", { chains: [] }, "/srv/t/x.db", "development")).toEqual({ kind: "start", dir: "/srv/t/dev-chain" });
    expect(decide("auto", {}, ":memory:")).toEqual({ kind: "start", dir: undefined });
  });

  it("auto stays off for a configured chain (any of chains, x402, dispenser, settlement), in production and on PostgreSQL", () => {
    for (const options of [{ chains: [CHAIN] }, { x402: {} }, { dispenser: {} }, { settlement: {} }])
      expect(decide("auto", options)).toEqual({ kind: "skip", reason: "a chain is configured" });
    expect(decide("auto", {}, "./data/tollgate.db", "production")).toEqual({ kind: "skip", reason: "NODE_ENV=production" });
    expect(decide("auto", {}, "postgres://u@db/tollgate")).toMatchObject({ kind: "skip", reason: expect.stringContaining("PostgreSQL") });
  });

  it("a real provider turns auto off and makes on an error (test USDC must not pay real upstream calls); auto stays off beyond loopback", () => {
    const real = { media: { providers: { local: { type: "local" }, openai: { type: "openai-compatible" } } } };
    expect(decide("auto", real)).toEqual({ kind: "skip", reason: "a real provider is configured (openai): test USDC must not pay for its calls" });
    expect(decide("on", real)).toMatchObject({ kind: "error", message: expect.stringContaining("real provider (openai in --config)") });
    expect(decide("auto", { media: { providers: { local: { type: "local" } } } })).toMatchObject({ kind: "start" });
    const at = (host: string | undefined) => decideDevChain({ mode: "auto", options: {}, db: ":memory:", nodeEnv: undefined, host });
    for (const host of [undefined, "127.0.0.1", "localhost", "::1"]) expect(at(host)).toEqual({ kind: "start", dir: undefined });
    for (const host of ["0.0.0.0", "::", "10.0.0.5", "gateway.example"]) expect(at(host)).toMatchObject({ kind: "skip", reason: expect.stringContaining(`listening on ${host}`) });
    expect(decideDevChain({ mode: "on", options: {}, db: ":memory:", nodeEnv: undefined, host: "0.0.0.0" })).toEqual({ kind: "start", dir: undefined });
  });

  it("on starts it (also on PostgreSQL) but is a usage error with a configured chain or in production; off never starts it", () => {
    expect(decide("on", {}, "postgres://u@db/tollgate")).toEqual({ kind: "start", dir: devChainDir("postgres://u@db/tollgate") });
    expect(decide("on", { chains: [CHAIN] })).toMatchObject({ kind: "error", message: expect.stringContaining("configured chain") });
    expect(decide("on", {}, "./t.db", "production")).toMatchObject({ kind: "error", message: expect.stringContaining("NODE_ENV=production") });
    expect(decide("off")).toEqual({ kind: "off" });
    expect(decide("off", {}, "./t.db", "production")).toEqual({ kind: "off" });
  });
});

describe("tollgate serve without a dev chain", () => {
  let run: CliProcess | undefined;
  afterEach(async () => {
    await run?.stop();
    run = undefined;
  });

  /** Starts serve, checks that no anvil runs and that the chain features answer 503 not_configured; resolves with its output. */
  async function serveWithout(args: string[], env: Record<string, string>, devChainDir: string): Promise<string> {
    run = startCli(["serve", "--port", "0", ...args], env);
    const url = await run.url();
    expect(existsSync(devChainDir)).toBe(false);
    if (existsSync(`/proc/${run.child.pid}/task/${run.child.pid}/children`))
      expect(readFileSync(`/proc/${run.child.pid}/task/${run.child.pid}/children`, "utf8").trim()).toBe("");
    const claim = await postJson(`${url}/api/dispenser/claim`, { address: "0x00000000000000000000000000000000000000c1", chainId: 31337 });
    expect(claim.status).toBe(503);
    const batch = await postJson(`${url}/api/settlement/batch`, {}, { "x-internal-secret": "some-secret-of-16-chars" });
    expect([batch.status, batch.body.error.code]).toEqual([503, "not_configured"]);
    const unpaid = await postJson(`${url}/v1/embeddings`, { model: "text-embedding-3-small", input: "x" });
    expect(unpaid.headers.get("payment-required")).toBeNull(); // no x402 offer without a chain
    expect(run.out()).not.toContain("dev chain: ON");
    return run.out();
  }

  it("--dev-chain off starts no anvil, and x402, the dispenser and settlement stay off (the flag wins over TOLLGATE_DEV_CHAIN)", async () => {
    const data = tempDataDir("dev-off");
    const out = await serveWithout(["--db", data.db, "--dev-chain", "off"], { TOLLGATE_DEV_CHAIN: "on" }, data.devChainDir);
    expect(out).not.toContain("dev chain");
    expect(out).toContain("x402: off");
  });

  it("a configured chain turns auto off", async () => {
    const data = tempDataDir("dev-configured");
    const config = join(data.dir, "gateway.json");
    writeFileSync(config, JSON.stringify({ chains: [CHAIN] }));
    const out = await serveWithout(["--db", data.db, "--config", config], { TOLLGATE_DEV_CHAIN: "auto" }, data.devChainDir);
    expect(out).toContain("dev chain: off (a chain is configured)");
  });

  it("NODE_ENV=production turns auto off", async () => {
    const data = tempDataDir("dev-production");
    const out = await serveWithout(["--db", data.db, "--auth-domains", "gateway.example.com"], { TOLLGATE_DEV_CHAIN: "auto", NODE_ENV: "production" }, data.devChainDir);
    expect(out).toContain("dev chain: off (NODE_ENV=production)");
  });

  it("auto serves on without a chain when anvil cannot run, and says why", async () => {
    const data = tempDataDir("dev-noanvil");
    const out = await serveWithout(
      ["--db", data.db],
      { TOLLGATE_DEV_CHAIN: "auto", ANVIL_BIN: join(data.dir, "no-such-anvil") },
      join(data.devChainDir, "anvil-state.json"),
    );
    expect(out).toMatch(/dev chain: could not start \(could not run anvil \(.*no-such-anvil\): .*ENOENT.*\); x402, the dispenser and settlement stay off/);
  });

  it("usage errors exit 2 before serving (on with a configured chain, on in production, an unknown mode); on without anvil exits 1", async () => {
    const data = tempDataDir("dev-usage");
    const config = join(data.dir, "gateway.json");
    writeFileSync(config, JSON.stringify({ chains: [CHAIN] }));
    const [withChain, inProduction, unknown, noAnvil, noDomains] = await Promise.all([
      runCli(["serve", "--port", "0", "--db", data.db, "--config", config, "--dev-chain", "on"]),
      runCli(["serve", "--port", "0", "--db", data.db, "--auth-domains", "gateway.example.com"], { TOLLGATE_DEV_CHAIN: "on", NODE_ENV: "production" }),
      runCli(["serve", "--port", "0", "--db", data.db, "--dev-chain", "maybe"]),
      runCli(["serve", "--port", "0", "--db", data.db, "--dev-chain", "on"], { ANVIL_BIN: join(data.dir, "no-such-anvil") }),
      runCli(["serve", "--port", "0", "--db", join(data.dir, "production.db")], { TOLLGATE_DEV_CHAIN: "auto", NODE_ENV: "production" }),
    ]);
    expect([withChain.code, withChain.err]).toEqual([
      2,
      "tollgate: --dev-chain on cannot be combined with a configured chain (chains, x402, dispenser or settlement in --config): drop one of them\n",
    ]);
    expect([inProduction.code, inProduction.err]).toEqual([
      2,
      "tollgate: --dev-chain on is refused with NODE_ENV=production: the dev chain holds test money only\n",
    ]);
    expect([unknown.code, unknown.err]).toEqual([2, 'tollgate: --dev-chain must be auto, on or off (got "maybe")\n']);
    expect(noAnvil.code).toBe(1);
    expect(noAnvil.err).toMatch(/^tollgate: the dev chain did not start: could not run anvil/);
    // In production the sign-in domains are required: a SIWE message must not verify for any Host a client names.
    expect(noDomains.code).toBe(2);
    expect(noDomains.err).toMatch(/^tollgate: NODE_ENV=production needs the sign-in domains: set --auth-domains/);
    expect(existsSync(join(data.dir, "production.db"))).toBe(false); // refused before the database was opened: no migration ran
    for (const r of [withChain, inProduction, unknown, noAnvil, noDomains]) expect(r.out).not.toContain("listening on");
  }, 60_000); // five CLI processes at once on a shared machine
});
