/**
 * Paid media routes over x402 v2 on a real anvil chain, driven by the official client packages
 * (`@x402/fetch` + `@x402/evm`) exactly as a real x402 client would, through `gateway.fetch`.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesToBase64, fromBase64Url } from "../encoding.js";
import { encodePng } from "../providers/png.js";
import { encodeWav } from "../providers/wav.js";
import { createGateway } from "../gateway.js";
import type { Gateway } from "../gateway-types.js";
import type { GatewayServices } from "../services.js";
import { officialPaymentHeader, patchOffer, startX402Env, type X402Env } from "../x402/test-fixtures.js";

let env: X402Env;
let gateway: Gateway<GatewayServices>;
let failing: Gateway<GatewayServices>;
let stub: Server;
let upstreamCalls = 0;
const decode = (h: string | null) => JSON.parse(Buffer.from(h ?? "", "base64").toString("utf8")) as any;

/** The host app's secret: with it, x-session-user-address names the wallet a key is created for. */
const INTERNAL_SECRET = "x402-test-internal-secret";

function options(extra: Record<string, unknown> = {}) {
  return {
    sweepIntervalMs: 0,
    internalSecret: INTERNAL_SECRET,
    video: { pollerIntervalMs: 0 },
    chains: [{ chainId: env.node.chainId, rpcUrl: env.node.rpcUrl, usdc: env.usdc }],
    x402: { payTo: env.payTo, networks: [{ chainId: env.node.chainId, facilitator: { type: "local" as const, privateKey: env.facilitator.privateKey } }] },
    ...extra,
  };
}

function payingFetch(gw: Gateway) {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(env.payer.privateKey) });
  client.setSpendControls({ allowedAssets: true }); // TestUSDC is not one of the client's known assets
  return wrapFetchWithPayment((input: RequestInfo | URL, init?: RequestInit) => gw.fetch(new Request(input, init)), client);
}

const embed = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "text-embedding-3-small", input: "hello x402" }) };

beforeAll(async () => {
  env = await startX402Env();
  gateway = createGateway(options());
  stub = createServer((_req, res) => void (upstreamCalls++, res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"down"}}')));
  await new Promise<void>((r) => stub.listen(0, "127.0.0.1", r));
  failing = createGateway(options({ media: { providers: { openai: { type: "openai-compatible", baseUrl: `http://127.0.0.1:${(stub.address() as AddressInfo).port}/v1` } } } }));
});
afterAll(async () => {
  await Promise.all([gateway?.close(), failing?.close()]);
  await new Promise<void>((r) => stub.close(() => r()));
  await env?.stop();
});

describe("media routes paid with x402", () => {
  it("answers an unpaid request with the 402 challenge in the body and PAYMENT-REQUIRED", async () => {
    const res = await gateway.fetch(new Request("http://gw.test/v1/embeddings", embed));
    expect(res.status).toBe(402);
    const body = (await res.json()) as any;
    expect(decode(res.headers.get("payment-required"))).toEqual(body);
    expect(body).toMatchObject({ x402Version: 2, resource: { url: "http://gw.test/v1/embeddings", mimeType: "application/json" } });
    expect(body.accepts[0]).toMatchObject({ scheme: "exact", network: `eip155:${env.node.chainId}`, asset: env.usdc, payTo: env.payTo.toLowerCase() });
    expect(BigInt(body.accepts[0].amount)).toBeGreaterThan(0n);
  });

  it("lets the official client pay: exactly the price moves on-chain, and the receipt says settled", async () => {
    const before = await env.balances();
    const challenge = (await (await gateway.fetch(new Request("http://gw.test/v1/images/generations", { ...embed, body: JSON.stringify({ model: "dall-e-2", prompt: "a toll gate", size: "256x256" }) }))).json()) as any;
    const price = BigInt(challenge.accepts[0].amount);
    const res = await payingFetch(gateway)("http://gw.test/v1/images/generations", { ...embed, body: JSON.stringify({ model: "dall-e-2", prompt: "a toll gate", size: "256x256" }) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.data).toHaveLength(1);
    const settlement = decode(res.headers.get("payment-response"));
    expect(settlement).toMatchObject({ success: true, network: `eip155:${env.node.chainId}` });
    expect(body.receipt).toMatchObject({ finalAmountWei: price.toString(), settlement: { status: "settled", txHash: settlement.transaction } });
    expect(JSON.parse(fromBase64Url(res.headers.get("x-receipt")!)!)).toEqual(body.receipt);
    const after = await env.balances();
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
  });

  it("accepts x402 on every paid route, each moving exactly its quoted price", async () => {
    const png = bytesToBase64(encodePng(2, 2, new Uint8Array(12).fill(200)));
    const wav = bytesToBase64(encodeWav(new Int16Array(24_000), 24_000));
    const calls: [string, Record<string, unknown>, number][] = [
      ["/v1/embeddings", { model: "text-embedding-3-small", input: ["a", "b"] }, 200],
      ["/v1/images/generations", { model: "dall-e-2", prompt: "a gate", size: "256x256" }, 200],
      ["/v1/images/edits", { model: "dall-e-2", prompt: "paint it", image: png, size: "256x256" }, 200],
      ["/v1/audio/speech", { model: "tts-1", input: "paid speech", response_format: "wav" }, 200],
      ["/v1/audio/transcriptions", { model: "whisper-1", file: `data:audio/wav;base64,${wav}` }, 200],
      ["/v1/videos/generations", { model: "sora-2", prompt: "a paid clip", seconds: 4 }, 202],
    ];
    const pay = payingFetch(gateway);
    for (const [path, body, status] of calls) {
      const init = { ...embed, body: JSON.stringify(body) };
      const challenge = await gateway.fetch(new Request(`http://gw.test${path}`, init));
      expect(challenge.status, path).toBe(402);
      const price = BigInt(((await challenge.json()) as any).accepts[0].amount);
      const before = await env.balances();
      const res = await pay(`http://gw.test${path}`, init);
      expect(res.status, path).toBe(status);
      expect(decode(res.headers.get("payment-response")).success, path).toBe(true);
      const receipt = JSON.parse(fromBase64Url(res.headers.get("x-receipt")!)!);
      expect(receipt.finalAmountWei, path).toBe(price.toString());
      const after = await env.balances();
      expect(before.payer - after.payer, path).toBe(price);
    }
  });

  it("refuses a replayed PAYMENT-SIGNATURE and moves nothing", async () => {
    let header = "";
    const recordingFetch = wrapFetchWithPayment(
      async (input: RequestInfo | URL, init?: RequestInit) => {
        const req = new Request(input, init);
        header = req.headers.get("payment-signature") ?? header;
        return gateway.fetch(req);
      },
      (() => {
        const c = new x402Client();
        registerExactEvmScheme(c, { signer: privateKeyToAccount(env.payer.privateKey) });
        c.setSpendControls({ allowedAssets: true });
        return c;
      })(),
    );
    expect((await recordingFetch("http://gw.test/v1/embeddings", embed)).status).toBe(200);
    const before = await env.balances();
    const replay = await gateway.fetch(new Request("http://gw.test/v1/embeddings", { ...embed, headers: { ...embed.headers, "payment-signature": header } }));
    expect(replay.status).toBe(402);
    expect(((await replay.json()) as any).error).toMatch(/used|claimed/i);
    expect(await env.balances()).toEqual(before);
  });

  it("refuses expired, underpaying, wrong-payee and wrong-chain signatures before any upstream call", async () => {
    const challenge = (await (await failing.fetch(new Request("http://gw.test/v1/embeddings", embed))).json()) as any;
    const other = env.node.accounts[5]!.address;
    const cases: [string, Record<string, unknown>][] = [
      ["expired", { maxTimeoutSeconds: 1 }],
      ["underpaying", { amount: String(BigInt(challenge.accepts[0].amount) - 1n) }],
      ["wrong payee", { payTo: other }],
      ["wrong chain", { network: "eip155:1" }],
    ];
    const before = await env.balances();
    const calls = upstreamCalls;
    for (const [label, patch] of cases) {
      const header = await officialPaymentHeader(patchOffer(challenge, patch), env.payer.privateKey);
      const res = await failing.fetch(new Request("http://gw.test/v1/embeddings", { ...embed, headers: { ...embed.headers, "payment-signature": header } }));
      expect(res.status, label).toBe(402);
      expect(res.headers.get("payment-required"), label).toBeTruthy();
    }
    expect(upstreamCalls).toBe(calls);
    expect(await env.balances()).toEqual(before);
  });

  it("moves no money when the upstream fails", async () => {
    const before = await env.balances();
    const calls = upstreamCalls;
    const res = await payingFetch(failing)("http://gw.test/v1/embeddings", embed);
    expect(res.status).toBe(502);
    expect(upstreamCalls).toBe(calls + 1);
    expect(((await res.json()) as any).error.code).toBe("upstream_error");
    expect(await env.balances()).toEqual(before);
  });

  it("gives a key whose budget is too small budget_exhausted with the x402 offer beside it", async () => {
    const createdRes = await gateway.fetch(
      new Request("http://gw.test/api/keys", {
        method: "POST",
        headers: { "x-session-user-address": env.payer.address, "x-internal-secret": INTERNAL_SECRET, "content-type": "application/json" },
        body: JSON.stringify({ budgetLimit: "1", expiresAt: Date.now() + 3_600_000, networkId: env.node.chainId, purpose: "api" }),
      }),
    );
    const created = (await createdRes.json()) as any;
    expect(createdRes.status, JSON.stringify(created)).toBe(201);
    const res = await gateway.fetch(
      new Request("http://gw.test/v1/images/generations", {
        ...embed,
        headers: { authorization: `Bearer ${created.token}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "dall-e-2", prompt: "x", size: "256x256" }),
      }),
    );
    expect(res.status).toBe(402);
    const body = (await res.json()) as any;
    expect(body.error.code).toBe("budget_exhausted");
    expect(body.accepts[0].scheme).toBe("exact");
    expect(res.headers.get("payment-required")).toBeTruthy();
    expect(res.headers.get("x-key-budget-remaining")).toBe("1");
  });
});
