/**
 * The local x402 facilitator's settle when the RPC answers the send with a JSON-RPC error after
 * its node took the transaction, and the hash lookup lags (a load-balanced RPC): the transfer
 * landed, so the settle succeeds with that transaction instead of being reported as a refusal.
 * Real anvil and TestUSDC behind a JSON-RPC proxy; signatures by the official x402 client.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeService, officialPaymentHeader, startX402Env, type X402Env } from "../../core/src/x402/test-fixtures.js";

let env: X402Env;
const state = { rpcError: 0, lag: 0 };
let proxyUrl = "";
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  env = await startX402Env();
  const target = env.node.rpcUrl;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const id = (JSON.parse(body) as { id?: unknown }).id;
      const json = (value: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (body.includes("eth_getTransactionByHash") && state.lag > 0) {
        state.lag--;
        return void json({ jsonrpc: "2.0", id, result: null });
      }
      const upstream = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
      const text = await upstream.text();
      if (body.includes("eth_sendRawTransaction") && state.rpcError > 0) {
        state.rpcError--;
        return void json({ jsonrpc: "2.0", id, error: { code: -32000, message: "request timed out" } });
      }
      res.writeHead(upstream.status, { "content-type": "application/json" }).end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  proxyUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise<void>((r) => server.close(() => r()));
}, 60_000);
afterAll(async () => {
  await close();
  await env?.stop();
});

it("a settle whose transfer landed behind a JSON-RPC error and a lagging lookup succeeds with its transaction", async () => {
  const { service } = makeService({ ...env, node: { rpcUrl: proxyUrl, chainId: env.node.chainId } }, { settleCheckSeconds: 2 });
  const input = { amount: 2_500n, resourceUrl: "https://gw.test/v1/embeddings", description: "Embeddings", mimeType: "application/json" };
  const header = await officialPaymentHeader((await service.challenge({ ...input, error: "payment required" })).body, env.payer.privateKey);
  const before = await env.balances();
  const verified = await service.verify({ ...input, header, requestId: "req_1" });
  if (!verified.ok) throw new Error(verified.message);
  Object.assign(state, { rpcError: 1, lag: 2 });
  const settled = await service.settle(verified.payment);
  expect(settled.response).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  const after = await env.balances();
  expect(before.payer - after.payer).toBe(2_500n);
  expect(after.payTo - before.payTo).toBe(2_500n);
}, 60_000);
