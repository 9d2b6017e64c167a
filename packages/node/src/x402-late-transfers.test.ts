/**
 * A payment that lands after its call was answered 502 is found again after a restart, by
 * whichever instance looks first, and reported once. The facilitator (a node:http stub over the
 * local facilitator) loses its settle answer; the held transfer lands on anvil only after the
 * gateway that answered 502 has closed. Two fresh gateways on the same SQLite file then watch the
 * claim from the store. Real anvil, TestUSDC, the official x402 client's signatures.
 */
import http from "node:http";
import { mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { createViemChain } from "../../core/src/chain/viem-chain.js";
import { createLocalFacilitator } from "../../core/src/x402/local-facilitator.js";
import { officialPaymentHeader, startX402Env, type X402Env } from "../../core/src/x402/test-fixtures.js";
import { paymentPayloadSchema, paymentRequirementsSchema, type PaymentPayload, type PaymentRequirements } from "../../core/src/x402/types.js";
import { serve, type RunningServer } from "./server.js";

const IMAGE = { model: "dall-e-3", prompt: "a toll gate at dawn", size: "1024x1024" };
const METRICS_TOKEN = "late-transfers-metrics-token";
let env: X402Env;
let upstream: http.Server;
let facilitator: http.Server;
/** Settles the stub answered 500 to without sending: the test submits them when it chooses. */
const held: { payload: PaymentPayload; requirements: PaymentRequirements }[] = [];
const dbFile = join(mkdtempSync(join(tmpdir(), "tollgate-late-")), "gw.db");
const listen = async (server: http.Server) => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const servers: RunningServer[] = [];
let upstreamUrl: string;
let facilitatorUrl: string;
/** The local facilitator behind the stub: it sends the held transfers when the test says. */
let local: ReturnType<typeof createLocalFacilitator>;

beforeAll(async () => {
  env = await startX402Env();
  local = createLocalFacilitator({
    chains: [
      createViemChain({ rpcUrl: env.node.rpcUrl, chainId: env.node.chainId, usdc: env.usdc, privateKey: env.facilitator.privateKey, pollingIntervalMs: 50 }),
    ],
    clock: { now: () => Date.now() },
  });
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ created: 1, data: [{ b64_json: "iVBORw0KGgo=" }] })));
  });
  facilitator = http.createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => {
      void (async () => {
        const body = JSON.parse(text) as { paymentPayload: unknown; paymentRequirements: unknown };
        const payload = paymentPayloadSchema.parse(body.paymentPayload);
        const requirements = paymentRequirementsSchema.parse(body.paymentRequirements);
        if (req.url === "/verify")
          return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(await local.verify(payload, requirements)));
        held.push({ payload, requirements });
        res.writeHead(500, { "content-type": "text/plain" }).end("facilitator lost track");
      })().catch((error: unknown) => res.writeHead(500).end(String(error)));
    });
  });
  upstreamUrl = await listen(upstream);
  facilitatorUrl = await listen(facilitator);
}, 60_000);

afterAll(async () => {
  for (const s of servers) await s.close({ graceMs: 100 });
  for (const s of [upstream, facilitator]) {
    s?.closeAllConnections();
    await new Promise((r) => s?.close(r));
  }
  await env?.stop();
});

/** A gateway on the shared SQLite file whose store is checked for late transfers every `checkSeconds` (0: never). */
async function start(checkSeconds: number): Promise<RunningServer> {
  const gateway = createGateway({
    store: createSqliteStore({ filename: dbFile }),
    sweepIntervalMs: 0,
    metrics: { token: METRICS_TOKEN },
    chains: [{ chainId: env.node.chainId, rpcUrl: env.node.rpcUrl, usdc: env.usdc }],
    x402: {
      payTo: env.payTo,
      networks: [{ chainId: env.node.chainId, facilitator: { type: "http" as const, url: facilitatorUrl, timeoutMs: 2_000 } }],
      settleCheckSeconds: 1,
      lateTransferCheckSeconds: checkSeconds,
    },
    media: { providers: { openai: { type: "openai-compatible" as const, baseUrl: upstreamUrl, apiKey: "sk-upstream" } } },
  });
  const running = await serve(gateway, { port: 0 });
  servers.push(running);
  return running;
}

const post = (url: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/v1/images/generations`, {
    method: "POST",
    headers: Object.assign({ "content-type": "application/json" }, headers),
    body: JSON.stringify(IMAGE),
  });

/** The value of the late-transfer counter on `url`'s metrics (0 when it has not counted one). */
async function lateCount(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const line = text.split("\n").find((l) => l.startsWith("tollgate_x402_late_transfers_total{"));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

it("a transfer that lands after the gateway that answered 502 closed is recorded by one of two restarted instances, once", async () => {
  const first = await start(0);
  const challenge = await post(first.url);
  expect(challenge.status).toBe(402);
  const signature = await officialPaymentHeader(await challenge.json(), env.payer.privateKey);
  const before = await env.balances();
  const answered = await post(first.url, { "payment-signature": signature });
  expect(answered.status).toBe(502);
  expect(await answered.json()).toMatchObject({ error: { code: "upstream_error", details: { settlementUnsure: true } } });
  expect(held).toHaveLength(1);
  await first.close({ graceMs: 100 });

  // The facilitator's transaction lands now, with no gateway running.
  const settled = await local.settle(held[0]!.payload, held[0]!.requirements);
  expect(settled.success).toBe(true);
  expect(await env.balances()).toEqual({
    payer: before.payer - BigInt(held[0]!.requirements.amount),
    payTo: before.payTo + BigInt(held[0]!.requirements.amount),
  });

  const [second, third] = [await start(1), await start(1)];
  const reader = createSqliteStore({ filename: dbFile });
  const key = {
    network: `eip155:${env.node.chainId}`,
    payer: env.payer.address,
    nonce: (held[0]!.payload.payload as { authorization: { nonce: string } }).authorization.nonce,
  };
  let claim = await reader.getPaymentNonce(key);
  expect(claim).toMatchObject({ status: "claimed", checkUntil: expect.any(Number) });
  for (let i = 0; i < 100 && claim?.status !== "settled"; i++) {
    await new Promise((r) => setTimeout(r, 100));
    claim = await reader.getPaymentNonce(key);
  }
  expect(claim).toMatchObject({ status: "settled", txHash: settled.transaction });
  // Both instances keep checking; only the one that marked the claim counts it.
  await new Promise((r) => setTimeout(r, 2_500));
  expect((await lateCount(second.url)) + (await lateCount(third.url))).toBe(1);
  expect(await reader.listUnsurePaymentNonces({ now: Date.now(), limit: 10 })).toEqual([]);
  // The signature stays spent: it buys no call.
  const replay = await post(second.url, { "payment-signature": signature });
  expect(replay.status).toBe(402);
  await reader.close();
}, 60_000);
