/**
 * An x402 signature buys at most one upstream call that may have done work: a call whose client
 * hangs up after the upstream took the request, or that outlives the provider's timeout, is not
 * charged (nothing moved), but its signature is not given back either, since the upstream bills
 * that work all the same. A call the upstream refused (an error answer: no work) gives the
 * signature back for a retry. On a real port and a real anvil, with the official x402 client's
 * signatures and a local node:http stub standing in for OpenAI.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import { serve, type RunningServer } from "./server.js";
import { officialPaymentHeader, startX402Env, type X402Env } from "../../core/src/x402/test-fixtures.js";

const SECRET = "x402-after-work-internal-secret-0001";
const IMAGE = { model: "dall-e-3", prompt: "a toll gate at dawn", size: "1024x1024" };

let env: X402Env;
let upstream: http.Server;
/** The gateway, and the same one whose provider times out (300 ms) before the stub answers (1 s). */
let running: RunningServer;
let slow: RunningServer;
/** Requests the stub received in full (the work OpenAI would bill), and how it answers the next ones. */
let received = 0;
/** How the stub answers: the images after 1 s, a 400 at once, or a 200 whose body does not decode. */
let mode: "work" | "refuse" | "garbled" = "work";
let arrived: (() => void) | undefined;

beforeAll(async () => {
  env = await startX402Env();
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received += 1;
      arrived?.();
      if (mode === "refuse") return void res.writeHead(400, { "content-type": "application/json" }).end('{"error":{"message":"bad request"}}');
      if (mode === "garbled") return void res.writeHead(200, { "content-type": "application/json" }).end('{"created":1,"data":[]}');
      setTimeout(() => {
        if (!res.destroyed)
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ created: 1, data: [{ b64_json: "iVBORw0KGgo=" }] }));
      }, 1_000);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const gateway = (timeoutMs?: number) =>
    createGateway({
      sweepIntervalMs: 0,
      internalSecret: SECRET,
      chains: [{ chainId: env.node.chainId, rpcUrl: env.node.rpcUrl, usdc: env.usdc }],
      x402: { payTo: env.payTo, networks: [{ chainId: env.node.chainId, facilitator: { type: "local" as const, privateKey: env.facilitator.privateKey } }] },
      media: {
        providers: {
          openai: Object.assign(
            { type: "openai-compatible" as const, baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, apiKey: "sk-upstream" },
            timeoutMs ? { timeoutMs } : {},
          ),
        },
      },
    });
  running = await serve(gateway(), { port: 0 });
  slow = await serve(gateway(300), { port: 0 });
});

afterAll(async () => {
  await running?.close({ graceMs: 100 });
  await slow?.close({ graceMs: 100 });
  upstream?.closeAllConnections();
  await new Promise((r) => upstream?.close(r));
  await env?.stop();
});

const post = (url: string, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(`${url}/v1/images/generations`, {
    method: "POST",
    headers: Object.assign({ "content-type": "application/json" }, headers),
    body: JSON.stringify(IMAGE),
    ...(signal ? { signal } : {}),
  });

/** A fresh signature for one call of `url`. */
async function signature(url: string): Promise<string> {
  const challenge = await post(url);
  expect(challenge.status).toBe(402);
  return officialPaymentHeader(await challenge.json(), env.payer.privateKey);
}

it("a client that hangs up once the upstream has the request: charged nothing, and its signature buys no second call", async () => {
  const paid = await signature(running.url);
  const before = { received, payer: (await env.balances()).payer };
  const controller = new AbortController();
  const got = new Promise<void>((r) => (arrived = r));
  const pending = post(running.url, { "payment-signature": paid }, controller.signal).catch(() => null);
  await got;
  controller.abort();
  await pending;
  await new Promise((r) => setTimeout(r, 1_300)); // the upstream's answer comes to nobody
  const again = await post(running.url, { "payment-signature": paid });
  expect(again.status).not.toBe(200);
  expect(received - before.received).toBe(1);
  expect((await env.balances()).payer).toBe(before.payer);
});

it("a call that outlives the provider's timeout: 504, charged nothing, and a retry with the same signature is refused before the upstream", async () => {
  const paid = await signature(slow.url);
  const before = { received, payer: (await env.balances()).payer };
  expect((await post(slow.url, { "payment-signature": paid })).status).toBe(504);
  expect((await post(slow.url, { "payment-signature": paid })).status).not.toBe(200);
  expect(received - before.received).toBe(1);
  expect((await env.balances()).payer).toBe(before.payer);
});

it("a call the upstream refused (an error answer, no work): the same signature pays for the retry", async () => {
  const paid = await signature(running.url);
  const before = { received, payer: (await env.balances()).payer };
  mode = "refuse";
  try {
    expect((await post(running.url, { "payment-signature": paid })).status).toBe(502);
  } finally {
    mode = "work";
  }
  const retry = await post(running.url, { "payment-signature": paid });
  expect(retry.status).toBe(200);
  expect(received - before.received).toBe(2);
  expect(before.payer - (await env.balances()).payer).toBeGreaterThan(0n);
});

it("an upstream that answered 200 with a body that does not decode did the work: 502, and the signature buys no second call", async () => {
  const paid = await signature(running.url);
  const before = { received, payer: (await env.balances()).payer };
  mode = "garbled";
  try {
    expect((await post(running.url, { "payment-signature": paid })).status).toBe(502);
    expect((await post(running.url, { "payment-signature": paid })).status).not.toBe(502);
  } finally {
    mode = "work";
  }
  expect(received - before.received).toBe(1);
  expect((await env.balances()).payer).toBe(before.payer);
});
