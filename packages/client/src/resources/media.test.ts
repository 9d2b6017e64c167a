/**
 * `client.images`, `client.audio`, `client.embeddings` against a real gateway on a port with the
 * local provider, billed to a service key; the failure statuses of paid routes (402, 404, 400,
 * 413, 502, 504) from the gateway itself, with an upstream stub that fails or hangs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BadGatewayError,
  BadRequestError,
  GatewayTimeoutError,
  NotFoundError,
  PayloadTooLargeError,
  PaymentRequiredError,
  ServiceUnavailableError,
  type Receipt,
  type ResponseMeta,
  type TollgateClient,
} from "../index.js";
import { DAY, startGateway, startStub, thrown, type Seen, type Stub, type TestGateway } from "../testing/harness.js";

type Client = TollgateClient & { calls: Seen[] };

let gw: TestGateway;
let failing: TestGateway;
let hanging: TestGateway;
let upstream: Stub;

beforeAll(async () => {
  upstream = await startStub((req) => (req.url.startsWith("/fail") ? { status: 500, json: { error: { message: "upstream broke" } } } : "hang"));
  const openai = (mode: string) => ({ media: { providers: { openai: { type: "openai-compatible" as const, baseUrl: `${upstream.url}/${mode}`, apiKey: "sk-stub", timeoutMs: 1000 } } } });
  [gw, failing, hanging] = await Promise.all([startGateway({ limits: { mediaBodyBytes: 1024 * 1024 } }), startGateway(openai("fail")), startGateway(openai("hang"))]);
});
afterAll(async () => {
  await Promise.all([gw?.close(), failing?.close(), hanging?.close()]);
  await upstream?.close();
});

/** A client billing a fresh key of 100 USDC on `on`. */
async function payer(on: TestGateway = gw): Promise<{ client: Client; keyId: string; token: string }> {
  const key = await (await on.signedIn()).keys.create({ budgetLimit: 100_000_000n, expiresAt: on.clock.now() + DAY, purpose: "api" });
  return { client: on.client({ apiKey: key.token }), keyId: key.keyId, token: key.token };
}

/** Asserts a key-billed answer: the receipt in the body (when given) equals `X-Receipt`, and the budget moved by exactly its amount. */
function expectCharged(meta: ResponseMeta, subject: string, usedBefore: bigint, bodyReceipt?: Receipt): Receipt {
  const receipt = meta.receipt!;
  expect(receipt).toEqual({
    id: expect.stringMatching(/^rcpt_/),
    paymentIntentId: meta.paymentIntentId,
    subject,
    lineItems: expect.any(Array),
    providerAmountWei: expect.stringMatching(/^\d+$/),
    platformFeeWei: expect.stringMatching(/^\d+$/),
    finalAmountWei: expect.stringMatching(/^[1-9]\d*$/),
    settlement: { status: "queued" },
  });
  if (bodyReceipt) expect(bodyReceipt).toEqual(receipt);
  expect(meta.paymentIntentId).toMatch(/^pi_/);
  expect(meta.budget?.used).toBe(usedBefore + BigInt(receipt.finalAmountWei));
  expect(meta.budget?.reserved).toBe(0n);
  return receipt;
}

const used = async (p: { client: Client; keyId: string; token: string }) => BigInt((await p.client.keys.get(p.keyId)).budgetUsed);
const PNG = [0x89, 0x50, 0x4e, 0x47];

describe("paid media calls billed to a key", () => {
  it("images.generate and images.edit (bytes in, base64 sent): OpenAI bodies, receipts, the key charged exactly", async () => {
    const p = await payer();
    const { data, meta } = await p.client.images.generate({ model: "dall-e-2", prompt: "a toll gate", size: "256x256" }).withResponse();
    expect(data.data).toHaveLength(1);
    const png = Uint8Array.from(atob(data.data[0]!.b64_json!), (c) => c.charCodeAt(0));
    expect([...png.subarray(0, 4)]).toEqual(PNG);
    const first = expectCharged(meta, "openai:dall-e-2", 0n, data.receipt);
    const edit = await p.client.images.edit({ model: "dall-e-2", prompt: "paint it blue", image: png, size: "256x256" }).withResponse();
    expect([...Uint8Array.from(atob(edit.data.data[0]!.b64_json!), (c) => c.charCodeAt(0)).subarray(0, 4)]).toEqual(PNG);
    expectCharged(edit.meta, "openai:dall-e-2", BigInt(first.finalAmountWei), edit.data.receipt);
    expect(JSON.parse(p.client.calls.at(-1)!.body!).image).toMatch(/^iVBORw0KGgo/);
  });

  it("audio.speech answers bytes with their content type; audio.transcribe reads them back (json and text formats)", async () => {
    const p = await payer();
    const { data: speech, meta } = await p.client.audio.speech({ model: "tts-1", input: "hello gateway", response_format: "wav" }).withResponse();
    expect(speech.contentType).toBe("audio/wav");
    expect(new TextDecoder().decode(speech.audio.subarray(0, 4))).toBe("RIFF");
    let before = BigInt(expectCharged(meta, "openai:tts-1", 0n).finalAmountWei);
    const json = await p.client.audio.transcribe({ model: "whisper-1", file: speech.audio }).withResponse();
    expect(json.data.text).toBe("hello gateway");
    before += BigInt(expectCharged(json.meta, "openai:whisper-1", before, json.data.receipt).finalAmountWei);
    const text = await p.client.audio.transcribe({ model: "whisper-1", file: speech.audio, response_format: "text" }).withResponse();
    expect(text.data).toEqual({ text: "hello gateway" });
    expectCharged(text.meta, "openai:whisper-1", before);
  });

  it("embeddings.create; a paymentSignature replaces the key (no Authorization sent)", async () => {
    const p = await payer();
    const { data, meta } = await p.client.embeddings.create({ model: "text-embedding-3-small", input: ["hello", "world"] }).withResponse();
    expect(data).toMatchObject({ object: "list", model: "text-embedding-3-small", usage: { prompt_tokens: 2, total_tokens: 2 } });
    expect(data.data.map((d) => [d.object, d.index, (d.embedding as number[]).length])).toEqual([
      ["embedding", 0, 1536],
      ["embedding", 1, 1536],
    ]);
    const receipt = expectCharged(meta, "openai:text-embedding-3-small", 0n, data.receipt);
    // x402 is off here: the signature gets 503 not_configured (definitive: sent once); the key configured on the client is neither sent nor charged.
    const before = p.client.calls.length;
    const e = await thrown(() => p.client.embeddings.create({ model: "text-embedding-3-small", input: "x" }, { paymentSignature: "bm90LXZhbGlk" }));
    expect(e).toBeInstanceOf(ServiceUnavailableError);
    expect([e.status, e.code]).toEqual([503, "not_configured"]);
    expect(p.client.calls.length - before).toBe(1);
    const sent = p.client.calls.at(-1)!;
    expect([sent.headers.authorization, sent.headers["payment-signature"]]).toEqual([undefined, "bm90LXZhbGlk"]);
    expect(await used(p)).toBe(BigInt(receipt.finalAmountWei));
  });

  it("402 without payment, 404 unknown model, 400 bad field, 413 over the media limit: typed, sent once, nothing charged", async () => {
    const p = await payer();
    const anonymous: Client = gw.client();
    const cases: [Client, () => Promise<unknown>, Function, number, string, string?][] = [
      [anonymous, () => anonymous.embeddings.create({ model: "text-embedding-3-small", input: "x" }), PaymentRequiredError, 402, "payment_required"],
      [p.client, () => p.client.images.generate({ model: "no-such-model", prompt: "x" }), NotFoundError, 404, "model_not_found", "model"],
      [p.client, () => p.client.audio.speech({ model: "tts-1", input: "" }), BadRequestError, 400, "invalid_request", "input"],
      [p.client, () => p.client.images.edit({ model: "dall-e-2", prompt: "x", image: new Uint8Array(1024 * 1024) }), PayloadTooLargeError, 413, "payload_too_large"],
    ];
    for (const [client, call, Class, status, code, param] of cases) {
      const before = client.calls.length;
      const e = await thrown(call);
      expect(e, code).toBeInstanceOf(Class);
      expect([e.status, e.code, e.param], code).toEqual([status, code, param]);
      expect(e.requestId, code).toBe(e.headers.get("x-request-id"));
      expect(client.calls.length - before, code).toBe(1);
    }
    expect(await used(p)).toBe(0n);
  });

  it("an upstream that fails is a 502, one that hangs a 504; a paid call is not retried and nothing is charged", async () => {
    for (const [on, Class, status, code] of [
      [failing, BadGatewayError, 502, "upstream_error"],
      [hanging, GatewayTimeoutError, 504, "upstream_timeout"],
    ] as const) {
      const p = await payer(on);
      const before = upstream.requests.length;
      const e = await thrown(() => p.client.embeddings.create({ model: "text-embedding-3-small", input: "hello" }, { maxRetries: 2 }));
      expect(e).toBeInstanceOf(Class);
      expect([e.status, e.code, e.type]).toEqual([status, code, "api_error"]);
      expect(p.client.calls.filter((c) => c.url.endsWith("/v1/embeddings"))).toHaveLength(1);
      expect(upstream.requests.length - before).toBe(1);
      expect(await used(p)).toBe(0n);
      expect((await p.client.keys.get(p.keyId)).budgetReserved).toBe("0");
    }
  });
});
