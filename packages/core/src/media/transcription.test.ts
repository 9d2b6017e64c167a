/**
 * Transcription billing against what the upstream hears: a real HTTP server stands in for an
 * OpenAI-compatible upstream and reports the length it "decoded" (ten seconds per copy of the MP3
 * fixture in the upload, as FFmpeg decodes files joined behind one header); keys on the memory
 * store, x402 through the official client on a real anvil chain.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesToBase64 } from "../encoding.js";
import { createGateway } from "../gateway.js";
import type { Gateway } from "../gateway-types.js";
import { priceUsage } from "../metering/usage.js";
import { audioFixture, thrice } from "../providers/audio-test-fixtures.js";
import { MIN_AUDIO_BITS_PER_SECOND } from "../providers/audio-length.js";
import { ESTIMATE_BITS_PER_SECOND } from "../providers/wav.js";
import type { GatewayServices } from "../services.js";
import { startX402Env, type X402Env } from "../x402/test-fixtures.js";

const INTERNAL_SECRET = "transcription-test-secret";
const MP3 = audioFixture("tone-10s-16k.mp3");
const MARK = Buffer.from(MP3.subarray(0, 64));

let env: X402Env;
let gateway: Gateway<GatewayServices>;
let upstream: Server;
let heardCalls = 0;

/** Ten seconds per copy of the MP3 fixture's head in the upload (a decoder's count); prompt "no-duration" leaves the length out, as some upstreams do. */
function heardSeconds(body: Buffer): number {
  let copies = 0;
  for (let at = body.indexOf(MARK); at >= 0; at = body.indexOf(MARK, at + 1)) copies++;
  return copies * 10;
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

const price = (seconds: number) =>
  priceUsage(gateway.services.media.cardFor("whisper-1", undefined, "audio", "transcription"), undefined, { seconds }, gateway.services.feeBps).finalAmount;

const dataUrl = (bytes: Uint8Array, mime = "audio/mpeg") => `data:${mime};base64,${bytesToBase64(bytes)}`;
const post = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  new Request("http://gw.test/v1/audio/transcriptions", {
    method: "POST",
    headers: Object.assign({ "content-type": "application/json" }, headers),
    body: JSON.stringify(Object.assign({ model: "whisper-1" }, body)),
  });

async function keyWith(budgetLimit: bigint) {
  const res = await gateway.fetch(
    new Request("http://gw.test/api/keys", {
      method: "POST",
      headers: { "x-session-user-address": env.payer.address, "x-internal-secret": INTERNAL_SECRET, "content-type": "application/json" },
      body: JSON.stringify({ budgetLimit: budgetLimit.toString(), expiresAt: Date.now() + 3_600_000, networkId: env.node.chainId, purpose: "api" }),
    }),
  );
  const created = (await res.json()) as { token: string; keyId: string };
  expect(res.status, JSON.stringify(created)).toBe(201);
  return created;
}

async function transcribeWithKey(token: string, file: Uint8Array, extra: Record<string, unknown> = {}) {
  const res = await gateway.fetch(post(Object.assign({ file: dataUrl(file) }, extra), { authorization: `Bearer ${token}` }));
  return { res, body: (await res.json()) as any };
}

beforeAll(async () => {
  env = await startX402Env();
  upstream = createServer(async (req, res) => {
    const body = await readAll(req);
    heardCalls++;
    const noDuration = body.includes("no-duration");
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify(Object.assign({ task: "transcribe", text: "a tone" }, noDuration ? {} : { duration: heardSeconds(body) })));
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  gateway = createGateway({
    sweepIntervalMs: 0,
    internalSecret: INTERNAL_SECRET,
    video: { pollerIntervalMs: 0 },
    chains: [{ chainId: env.node.chainId, rpcUrl: env.node.rpcUrl, usdc: env.usdc }],
    x402: { payTo: env.payTo, networks: [{ chainId: env.node.chainId, facilitator: { type: "local" as const, privateKey: env.facilitator.privateKey } }] },
    media: { providers: { openai: { type: "openai-compatible", baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1` } } },
  });
});
afterAll(async () => {
  await gateway?.close();
  await new Promise<void>((r) => upstream?.close(() => r()));
  await env?.stop();
});

describe("transcription billed on what the upstream hears", () => {
  const quoted = (MP3.length * 8) / ESTIMATE_BITS_PER_SECOND; // an MP3's length is estimated at 128 kbit/s: 1.27 s for this 16 kbit/s file
  const boundOf = (file: Uint8Array) => (file.length * 8) / MIN_AUDIO_BITS_PER_SECOND;

  it("a key reserves the file's bound, down to the quote, and settles what was heard", async () => {
    const key = await keyWith(1_000_000n);
    const { res, body } = await transcribeWithKey(key.token, MP3);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.text).toBe("a tone");
    // Before, the settled amount was capped at the 1.27 s quote: a sixteenth of the ten seconds heard.
    expect(BigInt(body.receipt.finalAmountWei)).toBe(price(10));
    expect(res.headers.get("x-key-budget-used")).toBe(price(10).toString());
    expect(res.headers.get("x-key-budget-reserved")).toBe("0");
    expect(price(boundOf(MP3))).toBeGreaterThan(price(30));
  });

  it("a key pays for all three files joined behind one header: the upstream heard 30 s", async () => {
    const key = await keyWith(1_000_000n);
    const { res, body } = await transcribeWithKey(key.token, thrice(MP3));
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(BigInt(body.receipt.finalAmountWei)).toBe(price(30));
    expect(res.headers.get("x-key-budget-used")).toBe(price(30).toString());
  });

  it("a key that affords the quote but not the bound reserves what it has and settles no more", async () => {
    const limit = price(15);
    const key = await keyWith(limit);
    const { res, body } = await transcribeWithKey(key.token, thrice(MP3));
    expect(res.status, JSON.stringify(body)).toBe(200);
    const charged = BigInt(body.receipt.finalAmountWei);
    expect(charged).toBeLessThanOrEqual(limit);
    expect(charged).toBeGreaterThanOrEqual(price(15 - 0.001)); // all it reserved, to the millisecond
    expect(res.headers.get("x-key-budget-used")).toBe(charged.toString());
    expect(res.headers.get("x-key-budget-reserved")).toBe("0");
  });

  it("a key that cannot afford the quote is refused before the upstream is called", async () => {
    const key = await keyWith(price(quoted) - 1n);
    const calls = heardCalls;
    const { res, body } = await transcribeWithKey(key.token, MP3);
    expect(res.status).toBe(402);
    expect(body.error.code).toBe("budget_exhausted");
    expect(heardCalls).toBe(calls);
    expect(res.headers.get("x-key-budget-used")).toBe("0");
  });

  it("a heard length past the bound settles the bound: a small file heard as hours pays for its bound only", async () => {
    const tiny = MP3.subarray(0, 1_000); // with four more copies of the fixture's head: 1,256 bytes, heard as 50 s
    const key = await keyWith(1_000_000n);
    const { res, body } = await transcribeWithKey(key.token, new Uint8Array(Buffer.concat([tiny, MARK, MARK, MARK, MARK])));
    expect(res.status, JSON.stringify(body)).toBe(200);
    const file = 1_000 + 4 * MARK.length;
    expect(BigInt(body.receipt.finalAmountWei)).toBe(price((file * 8) / MIN_AUDIO_BITS_PER_SECOND)); // heard 50 s, bound 20.1 s
  });

  it("an upstream that reports no length settles the quote (the residual: report the length)", async () => {
    const key = await keyWith(1_000_000n);
    const { res, body } = await transcribeWithKey(key.token, MP3, { prompt: "no-duration" });
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(BigInt(body.receipt.finalAmountWei)).toBe(price(quoted));
  });

  it("x402 (exact) pays the quote and gets the transcript: the residual of a price fixed before anything decodes the file", async () => {
    const challenge = await gateway.fetch(post({ file: dataUrl(MP3) }));
    expect(challenge.status).toBe(402);
    const amount = BigInt(((await challenge.json()) as any).accepts[0].amount);
    expect(amount).toBe(price(quoted));
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(env.payer.privateKey) });
    client.setSpendControls({ allowedAssets: true });
    const pay = wrapFetchWithPayment((input: RequestInfo | URL, init?: RequestInit) => gateway.fetch(new Request(input, init)), client);
    const before = await env.balances();
    const res = await pay("http://gw.test/v1/audio/transcriptions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "whisper-1", file: dataUrl(MP3) }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).text).toBe("a tone");
    expect(before.payer - (await env.balances()).payer).toBe(amount);
  });
});
