/**
 * The acceptance walk: `npm start` on a fresh data directory (no chain configured) starts the dev
 * chain, and examples/dev-chain-walk.ts — the script the README points to — does what a new user
 * would: a dispenser claim, embeddings paid with the official `@x402/fetch` client, a key-billed
 * call, a settlement batch. Every amount is checked on the chain itself, not only in the answers.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walkDevChain, type WalkResult } from "../../../../examples/dev-chain-walk.js";
import { sample } from "../../../core/src/observability/test-fixtures.js";
import { startCli, type CliProcess } from "../testing/cli-process.js";
import { readDevChainRecord, type DevChainRecord } from "./record.js";
import { pidAlive, postJson, tempDataDir, usdcBalance, waitUntil } from "./test-support.js";

const data = tempDataDir("walk");
let server: CliProcess;
let url: string;
let record: DevChainRecord;
let walk: WalkResult;
let payeeBefore: bigint;
let dispenserBefore: bigint;

beforeAll(async () => {
  // As a new user runs it: no TOLLGATE_DEV_CHAIN (empty = unset), no NODE_ENV, no --config.
  server = startCli(["--port", "0", "--db", data.db], { TOLLGATE_DEV_CHAIN: "", NODE_ENV: "" }, { npmStart: true });
  url = await server.url();
  record = readDevChainRecord(data.devChainDir)!;
  payeeBefore = await usdcBalance(record.rpcUrl, record.usdc, record.roles.payee);
  dispenserBefore = await usdcBalance(record.rpcUrl, record.usdc, record.roles.dispenser);
});

afterAll(async () => {
  await server?.stop();
  if (record?.anvil && pidAlive(record.anvil.pid)) process.kill(record.anvil.pid, "SIGKILL");
});

describe("npm start with no chain configured", () => {
  it("starts a dev chain with x402, the dispenser and settlement on it, and says it is test money", () => {
    expect(record).toMatchObject({ chainId: 31337, usdc: expect.stringMatching(/^0x[0-9a-f]{40}$/) });
    expect(statSync(join(data.devChainDir, "dev-chain.json")).mode & 0o077).toBe(0); // it holds the internal secret
    const out = server.out();
    expect(out).toContain(`dev chain: ON — a local anvil with TEST money only`);
    expect(out).toContain(`rpc         ${record.rpcUrl} (chain 31337), new; kept in ${join(data.devChainDir, "anvil-state.json")}`);
    expect(out).toContain(`usdc        ${record.usdc}`);
    expect(out).toContain(`dispenser   ${record.roles.dispenser} holds $1000000.00 USDC (test money)`);
    expect(out).toContain(`-H 'x-internal-secret: ${record.internalSecret}'`);
    expect(out).toContain("docs/x402.md");
    expect(out).toMatch(new RegExp(`x402: on \\(payTo ${record.roles.payee}; eip155:31337 via local facilitator ${record.roles.facilitator}`));
    expect(out).toContain(`dispenser: on, 1.00 USDC per claim on chains 31337 (wallet ${record.roles.dispenser})`);
    expect(out).toContain(`settlement: on, treasury ${record.roles.payee}, spender ${record.roles.spender} on chain 31337`);
    expect(new URL(record.rpcUrl).hostname).toBe("127.0.0.1");
  });

  it("walks claim → x402-paid embeddings → key-billed embeddings → settlement batch, each moving exactly its amount on-chain", async () => {
    walk = await walkDevChain({ gatewayUrl: url, devChainFile: join(data.devChainDir, "dev-chain.json") });
    const balance = (who: string) => usdcBalance(record.rpcUrl, record.usdc, who);
    // Claim: 1.00 test USDC from the dispenser wallet.
    expect(walk.claim.balance).toBe(1_000_000n);
    expect(walk.claim.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await balance(record.roles.dispenser)).toBe(dispenserBefore - 1_000_000n);
    // x402: the quoted price left the wallet in one transferWithAuthorization.
    expect(walk.x402.price).toBeGreaterThan(0n);
    expect(walk.x402.embeddings).toBe(1);
    expect(walk.x402.balance).toBe(1_000_000n - walk.x402.price);
    expect(walk.x402.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    // Key billing charges the ledger; the batch then moves that charge, and only it, to the treasury.
    expect(walk.key.budgetUsed).toBeGreaterThan(0n);
    expect(walk.batch).toMatchObject({ successCount: 1, failCount: 0 });
    expect(walk.batch.results).toEqual([
      expect.objectContaining({ wallet: walk.wallet, amountWei: walk.key.budgetUsed.toString(), txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) }),
    ]);
    expect(walk.balanceAfterBatch).toBe(walk.x402.balance - walk.key.budgetUsed);
    expect(await balance(walk.wallet)).toBe(walk.balanceAfterBatch);
    expect(await balance(record.roles.payee)).toBe(payeeBefore + walk.x402.price + walk.key.budgetUsed);
  });

  it("refuses what the walk must not be able to repeat: a second claim, a batch without the secret; a second batch finds nothing queued", async () => {
    const again = await postJson(`${url}/api/dispenser/claim`, { address: walk.wallet, chainId: 31337 });
    expect([again.status, again.body.alreadyClaimed]).toEqual([409, true]);
    const wrong = await postJson(`${url}/api/settlement/batch`, {}, { "x-internal-secret": `${record.internalSecret}x` });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, "unauthorized"]);
    const second = await postJson(`${url}/api/settlement/batch`, {}, { "x-internal-secret": record.internalSecret });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ totalGroups: 0, totalIntents: 0, totalValueWei: "0" });
    expect(await usdcBalance(record.rpcUrl, record.usdc, walk.wallet)).toBe(walk.balanceAfterBatch);
  });

  it("/metrics shows each step: its requests, the x402 verification, both charges and the settlement batch", async () => {
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const requests = (route: string, status: number) => sample(text, "tollgate_http_requests_total", { method: "POST", route, status: String(status) });
    expect(requests("/api/dispenser/claim", 200)).toBe(1); // the walk's claim
    expect(requests("/api/dispenser/claim", 409)).toBe(1); // the repeat above
    expect(requests("/v1/embeddings", 402)).toBe(1); // the x402 challenge the client answered
    expect(requests("/v1/embeddings", 200)).toBe(2); // the x402-paid call and the key-billed call
    expect(requests("/api/keys", 201)).toBe(1);
    expect(requests("/api/settlement/batch", 200)).toBe(2);
    expect(requests("/api/settlement/batch", 401)).toBe(1);
    expect(sample(text, "tollgate_x402_verifications_total", { result: "valid" })).toBe(1);
    const model = "openai:text-embedding-3-small";
    expect(sample(text, "tollgate_charged_usdc_atomic_total", { model, payment: "x402" })).toBe(Number(walk.x402.price));
    expect(sample(text, "tollgate_charged_usdc_atomic_total", { model, payment: "key" })).toBe(Number(walk.key.budgetUsed));
    expect(sample(text, "tollgate_settlement_batches_total", { outcome: "ok" })).toBe(2);
    expect(sample(text, "tollgate_settlement_groups_total", { outcome: "settled" })).toBe(1);
  });

  it("the request log (JSON lines on stdout) has a line for each step, found by the x-request-id it sent", () => {
    const lines = server
      .out()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line["msg"] === "request");
    const of = (requestId: string) => lines.filter((line) => line["reqId"] === requestId);
    expect(of(walk.requestIds.claim)).toMatchObject([{ method: "POST", route: "/api/dispenser/claim", status: 200 }]);
    expect(of(walk.requestIds.x402)).toMatchObject([
      { route: "/v1/embeddings", status: 402 },
      { route: "/v1/embeddings", status: 200, amount: walk.x402.price.toString() },
    ]);
    expect(of(walk.requestIds.key)).toMatchObject([{ route: "/api/keys", status: 201 }]);
    expect(of(walk.requestIds.keyCall)).toMatchObject([
      { route: "/v1/embeddings", status: 200, keyId: walk.key.keyId, amount: walk.key.budgetUsed.toString() },
    ]);
    expect(of(walk.requestIds.batch)).toMatchObject([{ route: "/api/settlement/batch", status: 200 }]);
  });

  it("stops the dev chain with the server (Ctrl-C), leaving its state beside the ledger", async () => {
    await server.stop();
    expect(server.out()).toMatch(/Tollgate stopping \(SIG(INT|TERM)\)/);
    await waitUntil(() => !pidAlive(record.anvil!.pid), `anvil (pid ${record.anvil!.pid}) outlived the server`);
    expect(existsSync(join(data.devChainDir, "anvil-state.json"))).toBe(true);
    expect(statSync(join(data.devChainDir, "anvil-state.json")).size).toBeGreaterThan(0);
  });
});
