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
import { anvilRpc } from "@tollgate/testing";
import { officialPaymentHeader, startX402Env, type X402Env } from "../x402/test-fixtures.js";
import { get, sample } from "../observability/test-fixtures.js";

const INTERNAL_SECRET = "transcription-test-secret";
// A byte before the MP3's tags: a decoder still finds its frames, the gateway reads no header, so
// it is quoted at 128 kbit/s (1.3 s) and the cases below can hear more than the quote (a file whose
// headers are read is quoted their length: transcription-headers.test.ts).
const MP3 = new Uint8Array(Buffer.concat([Buffer.of(0), audioFixture("tone-10s-16k.mp3")]));
const MARK = Buffer.from(MP3.subarray(0, 64));

let env: X402Env;
let gateway: Gateway<GatewayServices>;
let upstream: Server;
let heardCalls = 0;

/** Copies of the MP3 fixture's head in the upload: ten seconds of audio each, as a decoder would count them. */
function copiesIn(body: Buffer): number {
  let copies = 0;
  for (let at = body.indexOf(MARK); at >= 0; at = body.indexOf(MARK, at + 1)) copies++;
  return copies;
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
  return { res, body: (res.headers.get("content-type")?.startsWith("text/plain") ? await res.text() : await res.json()) as any };
}

/** A gateway on the upstream stub whose x402 payments settle through `facilitator` (an unsure settle is checked for 1 s). */
const gatewayWith = (facilitator: { type: "local"; privateKey: `0x${string}` } | { type: "http"; url: string }) =>
  createGateway({
    sweepIntervalMs: 0,
    internalSecret: INTERNAL_SECRET,
    video: { pollerIntervalMs: 0 },
    chains: [{ chainId: env.node.chainId, rpcUrl: env.node.rpcUrl, usdc: env.usdc }],
    x402: { payTo: env.payTo, networks: [{ chainId: env.node.chainId, facilitator }], settleCheckSeconds: 1 },
    media: { providers: { openai: { type: "openai-compatible", baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1` } } },
  });

beforeAll(async () => {
  env = await startX402Env();
  upstream = createServer(async (req, res) => {
    const body = await readAll(req);
    heardCalls++;
    // verbose_json: the text, the duration and a segment per copy; the prompt "no-duration" or "no-segments" leaves one out, as some upstreams do.
    const copies = copiesIn(body);
    const segments = Array.from({ length: copies }, (_, i) => ({ start: i * 10, end: (i + 1) * 10, text: ` tone ${i + 1}.` }));
    const answer: Record<string, unknown> = {
      task: "transcribe",
      text: segments
        .map((x) => x.text)
        .join("")
        .trim(),
    };
    if (!body.includes("no-duration")) answer.duration = copies * 10;
    if (!body.includes("no-segments")) answer.segments = segments;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  gateway = gatewayWith({ type: "local", privateKey: env.facilitator.privateKey });
});
afterAll(async () => {
  await gateway?.close();
  await new Promise<void>((r) => upstream?.close(() => r()));
  await env?.stop();
});

describe("transcription billed on what the upstream hears", () => {
  const quoteOf = (file: Uint8Array) => (file.length * 8) / ESTIMATE_BITS_PER_SECOND; // a compressed file's length is estimated at 128 kbit/s
  const boundOf = (file: Uint8Array) => (file.length * 8) / MIN_AUDIO_BITS_PER_SECOND;
  const JOINED = thrice(MP3); // plays 30 s; quoted 3.8 s, bounded at 81.5 s

  it("a key reserves the file's bound, down to the quote, and settles what was heard", async () => {
    const key = await keyWith(1_000_000n);
    const { res, body } = await transcribeWithKey(key.token, MP3);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.text).toBe("tone 1.");
    // Before, the settled amount was capped at the 1.27 s quote: an eighth of the ten seconds heard.
    expect(BigInt(body.receipt.finalAmountWei)).toBe(price(10));
    expect(res.headers.get("x-key-budget-used")).toBe(price(10).toString());
    expect(res.headers.get("x-key-budget-reserved")).toBe("0");
    expect(res.headers.get("x-transcript-cut-at")).toBeNull();
  });

  it("a key pays for all three files joined behind one header: the upstream heard 30 s", async () => {
    const key = await keyWith(1_000_000n);
    const { res, body } = await transcribeWithKey(key.token, JOINED);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.text).toBe("tone 1. tone 2. tone 3.");
    expect(BigInt(body.receipt.finalAmountWei)).toBe(price(30));
    expect(res.headers.get("x-key-budget-used")).toBe(price(30).toString());
  });

  it("a key that affords the quote but not the bound pays its whole reservation and gets the seconds it paid for", async () => {
    const limit = price(15);
    const key = await keyWith(limit);
    const { res, body } = await transcribeWithKey(key.token, JOINED);
    expect(res.status, JSON.stringify(body)).toBe(200);
    const charged = BigInt(body.receipt.finalAmountWei);
    expect(charged).toBeLessThanOrEqual(limit);
    expect(charged).toBeGreaterThanOrEqual(price(15 - 0.001)); // all it reserved, to the millisecond
    expect(res.headers.get("x-key-budget-used")).toBe(charged.toString());
    expect(res.headers.get("x-key-budget-reserved")).toBe("0");
    expect(Number(res.headers.get("x-transcript-cut-at"))).toBeCloseTo(15, 2);
    expect(body.text).toBe("tone 1."); // the segment ending at 10 s; the one ending at 20 s was not paid for
  });

  it("a key holder who blocks the bound with a reservation of their own pays the quote and gets no more than it bought", async () => {
    const key = await keyWith(price(100));
    const quote = price(quoteOf(JOINED));
    const blocker = await gateway.fetch(
      new Request("http://gw.test/api/payments/prepare", {
        method: "POST",
        headers: { authorization: `Bearer ${key.token}`, "x-network-id": String(env.node.chainId), "content-type": "application/json" },
        body: JSON.stringify({
          service: "inference",
          action: "hold",
          resource: "https://example.test/hold",
          method: "POST",
          maxAmountWei: (price(100) - quote).toString(),
        }),
      }),
    );
    expect(blocker.status).toBe(200);
    const { res, body } = await transcribeWithKey(key.token, JOINED);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(BigInt(body.receipt.finalAmountWei)).toBe(quote);
    expect(Number(res.headers.get("x-transcript-cut-at"))).toBeCloseTo(quoteOf(JOINED), 1); // the whole ms its reservation pays: 3.83 s
    expect(body.text).toBe(""); // no segment ends within the 3.8 s paid for
  });

  it("a key that cannot afford the quote is refused before the upstream is called", async () => {
    const key = await keyWith(price(quoteOf(MP3)) - 1n);
    const calls = heardCalls;
    const { res, body } = await transcribeWithKey(key.token, MP3);
    expect(res.status).toBe(402);
    expect(body.error.code).toBe("budget_exhausted");
    expect(heardCalls).toBe(calls);
    expect(res.headers.get("x-key-budget-used")).toBe("0");
  });

  it("audio past the bound settles the bound, and the transcript stops there", async () => {
    const file = new Uint8Array(Buffer.concat([MP3.subarray(0, 20_000), MARK, MARK, MARK, MARK, MARK])); // 20,320 bytes heard as 60 s
    const key = await keyWith(1_000_000n);
    const { res, body } = await transcribeWithKey(key.token, file, { response_format: "text" });
    expect(res.status).toBe(200);
    expect(BigInt(JSON.parse(Buffer.from(res.headers.get("x-receipt")!, "base64url").toString()).finalAmountWei)).toBe(price(boundOf(file)));
    expect(Number(res.headers.get("x-transcript-cut-at"))).toBeCloseTo(boundOf(file), 6); // 27.1 s
    expect(body).toBe("tone 1. tone 2.");
  });

  it("an upstream without segments cannot be cut: past what was paid its transcript is withheld, within it delivered whole", async () => {
    const key = await keyWith(price(15));
    const withheld = await transcribeWithKey(key.token, JOINED, { prompt: "no-segments" });
    expect(withheld.res.status).toBe(200);
    expect(withheld.body.text).toBe("");
    expect(Number(withheld.res.headers.get("x-transcript-cut-at"))).toBeCloseTo(15, 2);
    expect(BigInt(withheld.body.receipt.finalAmountWei)).toBeLessThanOrEqual(price(15));
    const paid = await keyWith(1_000_000n);
    const whole = await transcribeWithKey(paid.token, JOINED, { prompt: "no-segments" });
    expect(whole.body.text).toBe("tone 1. tone 2. tone 3.");
    expect(BigInt(whole.body.receipt.finalAmountWei)).toBe(price(30));
  });

  it("segments tell what was heard when the duration is missing; with neither the quote settles (the residual)", async () => {
    const key = await keyWith(1_000_000n);
    const timed = await transcribeWithKey(key.token, JOINED, { prompt: "no-duration" });
    expect(timed.res.status, JSON.stringify(timed.body)).toBe(200);
    expect(BigInt(timed.body.receipt.finalAmountWei)).toBe(price(30));
    const { res, body } = await transcribeWithKey(key.token, JOINED, { prompt: "no-duration no-segments" });
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(BigInt(body.receipt.finalAmountWei)).toBe(price(quoteOf(JOINED)));
    expect(body.text).toBe("tone 1. tone 2. tone 3.");
  });

  /** The official x402 client paying through `gw` (the gateway of this file unless given). */
  function payer(gw: Gateway = gateway) {
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(env.payer.privateKey) });
    client.setSpendControls({ allowedAssets: true });
    const pay = wrapFetchWithPayment((input: RequestInfo | URL, init?: RequestInit) => gw.fetch(new Request(input, init)), client);
    const transcribe = (file: Uint8Array) =>
      pay("http://gw.test/v1/audio/transcriptions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "whisper-1", file: dataUrl(file) }),
      });
    return { transcribe };
  }

  it("x402 (exact) pays the quote and gets the whole transcript when the upstream heard no more than the quote", async () => {
    const file = new Uint8Array(Buffer.concat([MARK, Buffer.alloc(160_000 - MARK.length, 0x55)])); // quoted 10 s, heard 10 s
    const challenge = await gateway.fetch(post({ file: dataUrl(file) }));
    const amount = BigInt(((await challenge.json()) as any).accepts[0].amount);
    expect(amount).toBe(price(10));
    const before = await env.balances();
    const calls = heardCalls;
    const res = await payer().transcribe(file);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).text).toBe("tone 1.");
    expect(heardCalls).toBe(calls + 1);
    expect(before.payer - (await env.balances()).payer).toBe(amount);
  });

  it("x402: past what the quote pays for, the transcript is cut; the same request sent again is quoted the rest and answered whole, without a second upstream call", async () => {
    const quote = price(quoteOf(JOINED)); // 3.8 s estimated at 128 kbit/s; the upstream hears 30 s
    const before = await env.balances();
    const calls = heardCalls;
    const { transcribe } = payer();
    const cut = await transcribe(JOINED);
    expect(cut.status).toBe(200);
    const cutBody = (await cut.json()) as any;
    const cutAt = Number(cut.headers.get("x-transcript-cut-at"));
    expect(cutAt).toBeCloseTo(quoteOf(JOINED), 1); // the whole ms the quote pays for: 3.83 s
    expect(cutBody.text).toBe(""); // no segment ends within the 3.8 s paid for
    expect(BigInt(cutBody.receipt.finalAmountWei)).toBe(quote);
    expect(heardCalls).toBe(calls + 1);
    expect(before.payer - (await env.balances()).payer).toBe(quote);

    // Before any payment, the same request is quoted the seconds heard beyond those paid for.
    const rest = price(30 - cutAt);
    const probe = await gateway.fetch(post({ file: dataUrl(JOINED) }));
    expect(BigInt(((await probe.json()) as any).accepts[0].amount)).toBe(rest);
    const whole = await transcribe(JOINED);
    expect(whole.status).toBe(200);
    const body = (await whole.json()) as any;
    expect(body.text).toBe("tone 1. tone 2. tone 3.");
    expect(whole.headers.get("x-transcript-cut-at")).toBeNull();
    expect(BigInt(body.receipt.finalAmountWei)).toBe(rest);
    expect(heardCalls).toBe(calls + 1); // the upstream was called once for both
    const paid = before.payer - (await env.balances()).payer;
    expect(paid).toBe(quote + rest);
    expect(paid - price(30)).toBeGreaterThanOrEqual(0n); // 30 s in all, rounded up once per payment
    expect(paid - price(30)).toBeLessThanOrEqual(2n);

    // The rest was taken: the request is a new call again, quoted from its bytes.
    const again = await gateway.fetch(post({ file: dataUrl(JOINED) }));
    expect(BigInt(((await again.json()) as any).accepts[0].amount)).toBe(quote);
  });

  it("x402: a rest is offered only for the same file with the same options, and never to a service key", async () => {
    const file = new Uint8Array(Buffer.concat([JOINED, Buffer.from("options")]));
    const calls = heardCalls;
    expect((await payer().transcribe(file)).headers.get("x-transcript-cut-at")).not.toBeNull();
    const restOf = async (extra: Record<string, unknown>) =>
      BigInt(((await (await gateway.fetch(post(Object.assign({ file: dataUrl(file) }, extra)))).json()) as any).accepts[0].amount);
    const quote = price(quoteOf(file));
    expect(await restOf({})).toBeLessThan(price(30)); // this request's rest
    expect(await restOf({})).not.toBe(quote);
    expect(await restOf({ prompt: "another prompt" })).toBe(quote);
    expect(await restOf({ language: "en" })).toBe(quote);
    expect(await restOf({ file: `data:audio/ogg;base64,${bytesToBase64(file)}` })).toBe(quote);
    // A key pays for its own call as ever: the bound reserved, the 30 s heard settled, the upstream asked again.
    const key = await keyWith(1_000_000n);
    const { res, body } = await transcribeWithKey(key.token, file);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(BigInt(body.receipt.finalAmountWei)).toBe(price(30));
    expect(body.text).toBe("tone 1. tone 2. tone 3.");
    expect(heardCalls).toBe(calls + 2);
    expect(await restOf({})).not.toBe(quote); // and the x402 rest is still there
  });

  /** The 402 challenge of `file` (no credential) on `gw`, and its amount. */
  async function challengeFor(file: Uint8Array, gw: Gateway = gateway) {
    const res = await gw.fetch(post({ file: dataUrl(file) }));
    expect(res.status).toBe(402);
    const body = (await res.json()) as any;
    return { body, amount: BigInt(body.accepts[0].amount) };
  }

  it("x402: of two concurrent payments of a rest one is served, the other refused and moves nothing; a rest whose payment may still land is not sold again", async () => {
    const file = new Uint8Array(Buffer.concat([JOINED, Buffer.from("taken once")]));
    const { transcribe } = payer();
    expect((await transcribe(file)).headers.get("x-transcript-cut-at")).not.toBeNull();
    const { body: challenge, amount: rest } = await challengeFor(file);
    expect(rest).not.toBe(price(quoteOf(file)));
    const calls = heardCalls;
    // Upstream calls as the metrics count them: neither answer below is one.
    const upstreamCalls = async () => {
      const text = await (await get(gateway, "/metrics")).text();
      return ["ok", "error"].map((outcome) => sample(text, "tollgate_upstream_duration_seconds_count", { provider: "openai", outcome }) ?? 0);
    };
    const counted = await upstreamCalls();
    const before = await env.balances();
    const [h1, h2] = await Promise.all([officialPaymentHeader(challenge, env.payer.privateKey), officialPaymentHeader(challenge, env.payer.privateKey)]);
    const answers = await Promise.all([h1, h2].map((h) => gateway.fetch(post({ file: dataUrl(file) }, { "payment-signature": h }))));
    const bodies = (await Promise.all(answers.map((a) => a.json()))) as any[];
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(bodies[answers.findIndex((a) => a.status === 200)].text).toBe("tone 1. tone 2. tone 3.");
    expect(bodies[answers.findIndex((a) => a.status === 409)].error.code).toBe("invalid_state");
    expect(before.payer - (await env.balances()).payer).toBe(rest); // one payment of the rest
    expect(heardCalls).toBe(calls);
    expect(await upstreamCalls()).toEqual(counted);

    // The facilitator's wallet has no gas: its send fails after signing, so the transfer may yet
    // land (it is watched for). The rest is not offered again, or it could be paid twice.
    const other = new Uint8Array(Buffer.concat([JOINED, Buffer.from("unsure")]));
    expect((await transcribe(other)).headers.get("x-transcript-cut-at")).not.toBeNull();
    expect((await challengeFor(other)).amount).not.toBe(price(quoteOf(other)));
    const beforeUnsure = await env.balances();
    await anvilRpc(env.node, "anvil_setBalance", [env.facilitator.address, "0x0"]);
    const failed = await transcribe(other).finally(() => anvilRpc(env.node, "anvil_setBalance", [env.facilitator.address, "0x8ac7230489e80000"]));
    expect(failed.status).toBe(502);
    expect(((await failed.json()) as any).error.details).toMatchObject({ settlementUnsure: true });
    expect((await env.balances()).payer).toBe(beforeUnsure.payer);
    expect((await challengeFor(other)).amount).toBe(price(quoteOf(other)));
  });

  it("x402: a rest whose payment the facilitator refused (nothing moved) is offered again", async () => {
    // A remote facilitator that settles, then refuses once (a payer whose funds moved meanwhile).
    let refuse = false;
    const facilitator = createServer(async (req, res) => {
      const request = JSON.parse((await readAll(req)).toString("utf8")) as { paymentPayload: { payload: { authorization: { from: string } } } };
      const payer = request.paymentPayload.payload.authorization.from;
      const network = `eip155:${env.node.chainId}`;
      const answer =
        req.url === "/verify"
          ? { isValid: true, payer }
          : refuse
            ? { success: false, errorReason: "insufficient_funds", transaction: "", network, payer }
            : { success: true, transaction: `0x${"cd".repeat(32)}`, network, payer };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
    await new Promise<void>((r) => facilitator.listen(0, "127.0.0.1", r));
    const remote = gatewayWith({ type: "http", url: `http://127.0.0.1:${(facilitator.address() as AddressInfo).port}` });
    try {
      const file = new Uint8Array(Buffer.concat([JOINED, Buffer.from("refused")]));
      const { transcribe } = payer(remote);
      expect((await transcribe(file)).headers.get("x-transcript-cut-at")).not.toBeNull();
      const rest = (await challengeFor(file, remote)).amount;
      expect(rest).not.toBe(price(quoteOf(file)));
      const calls = heardCalls;
      refuse = true;
      const refused = await transcribe(file);
      expect(refused.status).toBe(502);
      expect(((await refused.json()) as any).error.details).toMatchObject({ settlementUnsure: false });
      expect((await challengeFor(file, remote)).amount).toBe(rest);
      refuse = false;
      const whole = await transcribe(file);
      expect(whole.status).toBe(200);
      expect(((await whole.json()) as any).text).toBe("tone 1. tone 2. tone 3.");
      expect(heardCalls).toBe(calls);
    } finally {
      await remote.close();
      await new Promise<void>((r) => facilitator.close(() => r()));
    }
  });
});
