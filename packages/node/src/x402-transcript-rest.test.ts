/**
 * The rest of an x402 transcription is kept in the store: the request that pays it may reach
 * another instance, even once the instance that cut the transcript has closed. Two gateways on
 * one SQLite file on real ports, a node:http stub standing in for OpenAI (it hears 30 s), real
 * anvil and TestUSDC, payments by the official x402 client.
 */
import http from "node:http";
import { mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { audioFixture, thrice } from "../../core/src/providers/audio-test-fixtures.js";
import { startX402Env, type X402Env } from "../../core/src/x402/test-fixtures.js";
import { serve, type RunningServer } from "./server.js";

const JOINED = thrice(audioFixture("tone-10s-16k.mp3")); // plays 30 s; quoted the 10.08 s its first MP3 header declares
const dbFile = join(mkdtempSync(join(tmpdir(), "tollgate-rest-")), "gw.db");
let env: X402Env;
let upstream: http.Server;
let upstreamCalls = 0;
const servers: RunningServer[] = [];

beforeAll(async () => {
  env = await startX402Env();
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      upstreamCalls++;
      const segments = [0, 1, 2].map((i) => ({ start: i * 10, end: (i + 1) * 10, text: ` tone ${i + 1}.` }));
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ task: "transcribe", text: "tone 1. tone 2. tone 3.", duration: 30, segments }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
}, 60_000);

afterAll(async () => {
  for (const s of servers) await s.close({ graceMs: 100 });
  upstream?.closeAllConnections();
  await new Promise((r) => upstream?.close(r));
  await env?.stop();
});

async function start(): Promise<RunningServer> {
  const gateway = createGateway({
    store: createSqliteStore({ filename: dbFile }),
    sweepIntervalMs: 0,
    chains: [{ chainId: env.node.chainId, rpcUrl: env.node.rpcUrl, usdc: env.usdc }],
    x402: { payTo: env.payTo, networks: [{ chainId: env.node.chainId, facilitator: { type: "local" as const, privateKey: env.facilitator.privateKey } }] },
    media: { providers: { openai: { type: "openai-compatible" as const, baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1` } } },
  });
  const running = await serve(gateway, { port: 0 });
  servers.push(running);
  return running;
}

const request = (url: string) =>
  new Request(`${url}/v1/audio/transcriptions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "whisper-1", file: `data:audio/mpeg;base64,${Buffer.from(JOINED).toString("base64")}` }),
  });

function payingFetch() {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(env.payer.privateKey) });
  client.setSpendControls({ allowedAssets: true });
  return wrapFetchWithPayment(fetch, client);
}
const quotedAmount = async (url: string) => BigInt(((await (await fetch(request(url))).json()) as { accepts: { amount: string }[] }).accepts[0]!.amount);

it("a transcript cut on one instance has its rest sold by another after the first closed, without a second upstream call", async () => {
  const first = await start();
  const quote = await quotedAmount(first.url);
  const before = await env.balances();
  const cut = await payingFetch()(request(first.url));
  expect(cut.status).toBe(200);
  expect(cut.headers.get("x-transcript-cut-at")).not.toBeNull();
  expect(((await cut.json()) as { text: string }).text).toBe("tone 1.");
  expect(upstreamCalls).toBe(1);
  await first.close({ graceMs: 100 });

  const second = await start();
  const rest = await quotedAmount(second.url);
  expect(rest).toBeGreaterThan(quote); // the ~20 s heard beyond the 10.08 s paid for
  const whole = await payingFetch()(request(second.url));
  expect(whole.status).toBe(200);
  expect(((await whole.json()) as { text: string }).text).toBe("tone 1. tone 2. tone 3.");
  expect(whole.headers.get("x-transcript-cut-at")).toBeNull();
  expect(upstreamCalls).toBe(1);
  expect(before.payer - (await env.balances()).payer).toBe(quote + rest);
  // Taken: the same request is a new call again, quoted from its bytes.
  expect(await quotedAmount(second.url)).toBe(quote);
}, 60_000);
