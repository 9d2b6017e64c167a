/**
 * Chat completions paid with x402 v2 (`exact`) on a real anvil chain, by the official client
 * packages (`@x402/fetch` + `@x402/evm`): the challenge prices the quote (prompt bound + output
 * cap), the signed amount moves once the answer is complete (streamed: before its first event is
 * relayed), and an upstream that fails before answering moves nothing.
 */
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway } from "../gateway.js";
import type { Gateway } from "../gateway-types.js";
import type { GatewayServices } from "../services.js";
import { mintUsdc, startChatStub, type ChatStub } from "@tollgate/testing";
import { FUNDS, startX402Env, type X402Env } from "../x402/test-fixtures.js";
import { createPublicClient, createWalletClient, erc20Abi, http } from "viem";
import { countPrompt, promptBound, tokenCounter } from "../metering/tokens.js";
import { priceChat } from "./quote.js";

let env: X402Env;
let stub: ChatStub;
let gateway: Gateway<GatewayServices>;
let failing: Gateway<GatewayServices>;
const decode = (h: string | null) => JSON.parse(Buffer.from(h ?? "", "base64").toString("utf8")) as any;
const messages = [{ role: "user", content: "pay per token" }];
const request = (body: Record<string, unknown>) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "gpt-4o-mini", messages, max_completion_tokens: 200, ...body }) });

function make(baseUrl?: string) {
  return createGateway({
    sweepIntervalMs: 0,
    chains: [{ chainId: env.node.chainId, rpcUrl: env.node.rpcUrl, usdc: env.usdc }],
    x402: { payTo: env.payTo, networks: [{ chainId: env.node.chainId, facilitator: { type: "local" as const, privateKey: env.facilitator.privateKey } }] },
    ...(baseUrl ? { media: { providers: { openai: { type: "openai-compatible" as const, baseUrl } } } } : {}),
  });
}

function payingFetch(gw: Gateway) {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(env.payer.privateKey) });
  client.setSpendControls({ allowedAssets: true });
  return wrapFetchWithPayment((input: RequestInfo | URL, init?: RequestInit) => gw.fetch(new Request(input, init)), client);
}

beforeAll(async () => {
  env = await startX402Env();
  stub = await startChatStub();
  gateway = make();
  failing = make(`${stub.url}/fail500`);
});
afterAll(async () => {
  await Promise.all([gateway?.close(), failing?.close()]);
  await stub?.close();
  await env?.stop();
});

describe("chat completions paid with x402 (exact)", () => {
  it("the 402 challenge asks for the quote: the prompt bound and the output cap, priced by the card", async () => {
    const res = await gateway.fetch(new Request("http://gw.test/v1/chat/completions", request({})));
    expect(res.status).toBe(402);
    const body = (await res.json()) as any;
    expect(decode(res.headers.get("payment-required"))).toEqual(body);
    const card = gateway.services.catalog.get("gpt-4o-mini");
    const bound = promptBound(countPrompt(await tokenCounter(), { messages }));
    expect(body.accepts[0]).toMatchObject({ scheme: "exact", amount: priceChat(card, { promptTokens: bound, completionTokens: 200 }, 100).finalAmount.toString() });
    // A predicted output is quoted as output: its rejected tokens are billed as output by the upstream.
    const prediction = { type: "content", content: "a long predicted answer ".repeat(200) };
    const predicted = await gateway.fetch(new Request("http://gw.test/v1/chat/completions", request({ prediction })));
    const predictedTokens = (await tokenCounter()).count(prediction.content);
    expect(predictedTokens).toBeGreaterThan(800);
    expect(((await predicted.json()) as any).accepts[0].amount).toBe(priceChat(card, { promptTokens: bound, completionTokens: 200 + predictedTokens }, 100).finalAmount.toString());
  });

  it("not streamed: the signed quote moves on-chain once, with PAYMENT-RESPONSE and a settled receipt", async () => {
    const before = await env.balances();
    const res = await payingFetch(gateway)("http://gw.test/v1/chat/completions", request({}));
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.choices[0].message.content).toContain("pay per token");
    expect(body.receipt.settlement).toMatchObject({ status: "settled", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(decode(res.headers.get("payment-response"))).toMatchObject({ success: true, transaction: body.receipt.settlement.txHash });
    const after = await env.balances();
    expect(after.payTo - before.payTo).toBe(BigInt(body.receipt.finalAmountWei));
    expect(before.payer - after.payer).toBe(BigInt(body.receipt.finalAmountWei));
  });

  it("streamed: the chunks, then the receipt chunk with the settlement's transaction, then [DONE]", async () => {
    const before = await env.balances();
    const res = await payingFetch(gateway)("http://gw.test/v1/chat/completions", request({ stream: true }));
    expect(res.status).toBe(200);
    const events = (await res.text()).split("\n\n").filter(Boolean).map((f) => f.slice("data: ".length));
    expect(events.at(-1)).toBe("[DONE]");
    const receipt = JSON.parse(events.at(-2)!).receipt;
    expect(receipt.settlement).toMatchObject({ status: "settled", txHash: expect.stringMatching(/^0x/) });
    const after = await env.balances();
    expect(after.payTo - before.payTo).toBe(BigInt(receipt.finalAmountWei));
  });

  it("streamed: the payment is collected before the first event is relayed; one that cannot be collected then gets no content", async () => {
    // The upstream starts answering after 1.5 s (then sends 4 words and waits); meanwhile the payer
    // moves its USDC away (as it could cancel the authorization): the signed amount can no longer move.
    const slow = make(`${stub.url}/late-1500`);
    const cancelled = stub.closedStalls();
    const wallet = createWalletClient({ account: privateKeyToAccount(env.payer.privateKey), transport: http(env.node.rpcUrl) });
    const sink = privateKeyToAccount(generatePrivateKey()).address;
    try {
      const before = await env.balances();
      const seen = stub.bodies.length;
      let signature: string | null = null;
      const recording = (input: RequestInfo | URL, init?: RequestInit) => {
        const req = new Request(input, init);
        signature ??= req.headers.get("payment-signature");
        return slow.fetch(req);
      };
      const pending = payingFetch(Object.assign(Object.create(slow) as Gateway, { fetch: recording }))("http://gw.test/v1/chat/completions", request({ stream: true }));
      while (stub.bodies.length === seen) await new Promise((r) => setTimeout(r, 20));
      const moved = await wallet.writeContract({ chain: null, address: env.usdc, abi: erc20Abi, functionName: "transfer", args: [sink, before.payer] });
      await createPublicClient({ transport: http(env.node.rpcUrl) }).waitForTransactionReceipt({ hash: moved });
      const res = await pending;
      const events = (await res.text()).split("\n\n").filter(Boolean).map((f) => JSON.parse(f.slice("data: ".length)));
      // No chunk of the answer, no receipt: only the error.
      expect(events).toHaveLength(1);
      expect(events[0].error).toMatchObject({ code: "upstream_error" });
      expect(events[0].error.message).toContain("x402 settlement");
      expect((await env.balances()).payTo).toBe(before.payTo);
      // And the upstream request is cancelled: nobody would pay for the rest of its answer.
      await cancelled;
      // The settle was tried, so the claim stays (its transfer could still land): funded again, the
      // same signature is refused, and the upstream is not called for it.
      await mintUsdc(env.node, env.usdc, env.payer.address, FUNDS);
      const calls = stub.bodies.length;
      const again = await slow.fetch(new Request("http://gw.test/v1/chat/completions", { ...request({ stream: true }), headers: { "content-type": "application/json", "payment-signature": signature! } }));
      expect(again.status).toBe(402);
      expect(((await again.json()) as { error: string }).error).toMatch(/already been presented/);
      expect(stub.bodies.length).toBe(calls);
    } finally {
      await slow.close();
      await mintUsdc(env.node, env.usdc, env.payer.address, FUNDS);
    }
  });

  it("an upstream that fails before answering: 502, and nothing moves", async () => {
    const before = await env.balances();
    const res = await payingFetch(failing)("http://gw.test/v1/chat/completions", request({ stream: true }));
    expect(res.status).toBe(502);
    expect(await env.balances()).toEqual(before);
  });
});
