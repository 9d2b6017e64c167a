/**
 * An x402 chat stream whose upstream ignores the cap and sends its answer in one event past the
 * overrun bound: nothing of it is relayed, the payer pays the signed quote (the cap it agreed to),
 * and the stream carries the receipt of that payment before its error. Real anvil, real HTTP stub.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway } from "../gateway.js";
import type { Gateway } from "../gateway-types.js";
import type { GatewayServices } from "../services.js";
import { startX402Env, type X402Env } from "../x402/test-fixtures.js";

let env: X402Env;
let upstream: http.Server;
let gateway: Gateway<GatewayServices>;
const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify(Object.assign({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices }, extra))}\n\n`;

beforeAll(async () => {
  env = await startX402Env();
  // An upstream that ignores the cap and sends its answer in one large event (as servers that buffer, or batch, their deltas do).
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk([{ index: 0, delta: { role: "assistant", content: Array.from({ length: 400 }, (_, i) => ` w${i}`).join("") } }]));
      res.write(chunk([{ index: 0, delta: {}, finish_reason: "stop" }]));
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  gateway = createGateway({
    sweepIntervalMs: 0,
    chains: [{ chainId: env.node.chainId, rpcUrl: env.node.rpcUrl, usdc: env.usdc }],
    x402: { payTo: env.payTo, networks: [{ chainId: env.node.chainId, facilitator: { type: "local" as const, privateKey: env.facilitator.privateKey } }] },
    media: { providers: { openai: { type: "openai-compatible" as const, baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` } } },
  });
});
afterAll(async () => {
  await gateway?.close();
  upstream?.closeAllConnections();
  await new Promise((r) => upstream?.close(r));
  await env?.stop();
});

it("an x402 stream past the cap on its first event relays nothing, and is paid with a receipt before its error", async () => {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(env.payer.privateKey) });
  client.setSpendControls({ allowedAssets: true });
  const pay = wrapFetchWithPayment((input: RequestInfo | URL, init?: RequestInit) => gateway.fetch(new Request(input, init)), client);
  const before = await env.balances();
  const res = await pay("http://gw.test/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_completion_tokens: 10, stream: true }),
  });
  expect(res.status).toBe(200);
  const events = (await res.text())
    .split("\n\n")
    .filter((e) => e.startsWith("data: {"))
    .map((e) => JSON.parse(e.slice(6)) as { choices?: unknown[]; receipt?: { finalAmountWei: string }; error?: { code: string } });
  expect(events.map((e) => (e.receipt ? "receipt" : e.error ? e.error.code : "chunk"))).toEqual(["receipt", "upstream_error"]);
  const after = await env.balances();
  const paid = before.payer - after.payer;
  expect(paid).toBeGreaterThan(0n);
  expect(BigInt(events[0]!.receipt!.finalAmountWei)).toBe(paid);
});
