/**
 * An x402 chat call whose upstream may have worked pays nothing but keeps its signature spent: a
 * stream whose client leaves after the upstream answered its headers (the upstream read the
 * prompt; the gateway's headers go out with the upstream's, so a client knows when to leave), and
 * a call that outlives the provider's timeout. Without that, one signature bought any number of
 * upstream calls. A real port, a real anvil, the official x402 client's signatures, the chat stub.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import { startChatStub, type ChatStub } from "@tollgate/testing";
import { serve, type RunningServer } from "./server.js";
import { officialPaymentHeader, startX402Env, type X402Env } from "../../core/src/x402/test-fixtures.js";

let env: X402Env;
let stub: ChatStub;
let running: RunningServer;
/** Non-streamed chat whose upstream (1.5 s) outlasts the provider's timeoutMs (500 ms). */
let slow: RunningServer;
// ~100k tokens of prompt: what the upstream reads (and bills) on every call.
const BODY = {
  model: "gpt-4o-mini",
  stream: true,
  max_tokens: 16,
  messages: [{ role: "user", content: Array.from({ length: 20_000 }, (_, i) => `w${i % 997}`).join(" ") }],
};

beforeAll(async () => {
  env = await startX402Env();
  stub = await startChatStub();
  const gateway = createGateway({
    sweepIntervalMs: 0,
    rateLimits: { unpaidChatBytes: false },
    chains: [{ chainId: env.node.chainId, rpcUrl: env.node.rpcUrl, usdc: env.usdc }],
    x402: { payTo: env.payTo, networks: [{ chainId: env.node.chainId, facilitator: { type: "local" as const, privateKey: env.facilitator.privateKey } }] },
    // Headers at once, first chunk after 2 s (the prefill of a long prompt).
    media: { providers: { openai: { type: "openai-compatible", baseUrl: `${stub.url}/quiet-2000`, apiKey: "sk-upstream" } } },
  } as never);
  running = await serve(gateway, { port: 0 });
  slow = await serve(
    createGateway({
      sweepIntervalMs: 0,
      chains: [{ chainId: env.node.chainId, rpcUrl: env.node.rpcUrl, usdc: env.usdc }],
      x402: { payTo: env.payTo, networks: [{ chainId: env.node.chainId, facilitator: { type: "local" as const, privateKey: env.facilitator.privateKey } }] },
      media: { providers: { openai: { type: "openai-compatible", baseUrl: `${stub.url}/slow-1500`, apiKey: "sk-upstream", timeoutMs: 500 } } },
    } as never),
    { port: 0 },
  );
});

afterAll(async () => {
  await running?.close({ graceMs: 100 });
  await slow?.close({ graceMs: 100 });
  await stub?.close();
  await env?.stop();
});

it("streamed: a client that leaves after the upstream's headers pays nothing, and its signature buys no second call", async () => {
  const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(BODY) };
  const challenge = await fetch(`${running.url}/v1/chat/completions`, init);
  expect(challenge.status).toBe(402);
  const signature = await officialPaymentHeader(await challenge.json(), env.payer.privateKey);
  const before = await env.balances();
  const received = stub.bodies.length;
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) {
    const controller = new AbortController();
    const res = await fetch(`${running.url}/v1/chat/completions`, {
      ...init,
      headers: { ...init.headers, "payment-signature": signature },
      signal: controller.signal,
    });
    statuses.push(res.status); // 200: the gateway's headers, sent once the upstream has the request
    controller.abort();
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(statuses[0]).toBe(200);
  expect(statuses.slice(1).every((s) => s !== 200)).toBe(true);
  expect(stub.bodies.length - received).toBe(1);
  expect((await env.balances()).payer).toBe(before.payer);
});

it("not streamed: a call that outlives the provider's timeout is a 504, and a retry with its signature is refused before the upstream", async () => {
  const body = { model: "gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: "think for a long time" }] };
  const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
  const signature = await officialPaymentHeader(await (await fetch(`${slow.url}/v1/chat/completions`, init)).json(), env.payer.privateKey);
  const before = await env.balances();
  const received = stub.bodies.length;
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++)
    statuses.push((await fetch(`${slow.url}/v1/chat/completions`, { ...init, headers: { ...init.headers, "payment-signature": signature } })).status);
  await new Promise((r) => setTimeout(r, 1_500));
  expect(statuses[0]).toBe(504);
  expect(statuses.slice(1).every((s) => s !== 200 && s !== 504)).toBe(true);
  expect(stub.bodies.length - received).toBe(1);
  expect((await env.balances()).payer).toBe(before.payer);
});
