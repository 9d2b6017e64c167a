/**
 * The local x402 facilitator's settle when the RPC answers the send with a JSON-RPC error after
 * its node took the transaction, and the hash lookup lags (a load-balanced RPC): the transfer
 * landed, so the settle succeeds with that transaction instead of being reported as a refusal.
 * Real anvil and TestUSDC behind a JSON-RPC proxy; signatures by the official x402 client.
 */
import { startRpcProxy, type RpcProxy } from "@tollgate/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeService, officialPaymentHeader, startX402Env, type X402Env } from "../../core/src/x402/test-fixtures.js";

let env: X402Env;
let proxy: RpcProxy;

beforeAll(async () => {
  env = await startX402Env();
  proxy = await startRpcProxy(env.node.rpcUrl);
}, 60_000);
afterAll(async () => {
  await proxy?.close();
  await env?.stop();
});

it("a settle whose transfer landed behind a JSON-RPC error and a lagging lookup succeeds with its transaction", async () => {
  const { service } = makeService({ ...env, node: { rpcUrl: proxy.url, chainId: env.node.chainId } }, { settleCheckSeconds: 2 });
  const input = { amount: 2_500n, resourceUrl: "https://gw.test/v1/embeddings", description: "Embeddings", mimeType: "application/json" };
  const header = await officialPaymentHeader((await service.challenge({ ...input, error: "payment required" })).body, env.payer.privateKey);
  const before = await env.balances();
  const verified = await service.verify({ ...input, header, requestId: "req_1" });
  if (!verified.ok) throw new Error(verified.message);
  Object.assign(proxy.state, { rpcError: 1, lag: 2 });
  const settled = await service.settle(verified.payment);
  expect(settled.response).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  const after = await env.balances();
  expect(before.payer - after.payer).toBe(2_500n);
  expect(after.payTo - before.payTo).toBe(2_500n);
}, 60_000);
