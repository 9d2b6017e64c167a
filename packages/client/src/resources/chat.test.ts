/**
 * `client.chat.completions.create` against a real gateway on a port: the offline `local` provider
 * (deterministic text, word-by-word streams, tool calls) billed to a service key, and an
 * OpenAI-compatible stub upstream that fails mid-stream. Non-streamed answers with receipt and
 * output cap; streams assembled, with the usage chunk when asked, the receipt, the key charged
 * exactly; errors before the stream and in it; `break`, `abort()` and the signal cancel the request.
 */
import { startChatStub, type ChatStub } from "@tollgate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BadGatewayError,
  BadRequestError,
  ChatCompletionStream,
  NotFoundError,
  PaymentRequiredError,
  ServiceUnavailableError,
  UserAbortError,
  type ChatCompletionChunk,
  type Receipt,
  type TollgateClient,
} from "../index.js";
import { DAY, startGateway, thrown, type Seen, type TestGateway } from "../testing/harness.js";

type Payer = { client: TollgateClient & { calls: Seen[] }; keyId: string };

const MODEL = "gpt-4o";
const LOCAL = "This is the local provider answering offline. You wrote: ";
const WEATHER = {
  type: "function" as const,
  function: { name: "weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};

let gw: TestGateway;
/** Streams one word every 40 ms, so a client can leave mid-answer. */
let slow: TestGateway;
/** The upstream streams two words, then an error event. */
let failing: TestGateway;
let stub: ChatStub;

beforeAll(async () => {
  stub = await startChatStub();
  [gw, slow, failing] = await Promise.all([
    startGateway(),
    startGateway({ media: { providers: { local: { type: "local", chatChunkDelayMs: 40 } } } }),
    startGateway({ media: { providers: { openai: { type: "openai-compatible", baseUrl: `${stub.url}/errevent`, apiKey: "sk-stub" } } } }),
  ]);
});
afterAll(async () => {
  await Promise.all([gw?.close(), slow?.close(), failing?.close()]);
  await stub?.close();
});

/** A client billing a fresh key of `budget` atomic units (default 100 USDC) on `on`. */
async function payer(on: TestGateway = gw, budget: bigint = 100_000_000n): Promise<Payer> {
  const key = await (await on.signedIn()).keys.create({ budgetLimit: budget, expiresAt: on.clock.now() + DAY, purpose: "api" });
  return { client: on.client({ apiKey: key.token }), keyId: key.keyId };
}

const spent = async (p: Payer) => {
  const key = await p.client.keys.get(p.keyId);
  return { used: key.budgetUsed, reserved: key.budgetReserved };
};

/** Waits (up to ~2 s) until the key holds no reservation: a stream cut by its client is billed as the gateway unwinds it. */
async function settled(p: Payer): Promise<{ used: string; reserved: string }> {
  for (let i = 0; i < 40; i++) {
    const s = await spent(p);
    if (s.reserved === "0") return s;
    await new Promise((r) => setTimeout(r, 50));
  }
  return spent(p);
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}

const text = (chunks: ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");

/** What `payments.meter` prices a chat usage at: the amount a receipt for that usage must show. */
async function priced(usage: { prompt_tokens: number; completion_tokens: number }): Promise<string> {
  const meter = await gw
    .client()
    .payments.meter({
      modelId: MODEL,
      provider: "openai",
      modality: "text",
      usage: { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens },
    });
  return meter.finalAmountWei;
}

function expectReceipt(receipt: Receipt | undefined, intentId: string | undefined): Receipt {
  expect(receipt).toEqual({
    id: expect.stringMatching(/^rcpt_/),
    paymentIntentId: intentId,
    subject: `openai:${MODEL}`,
    lineItems: expect.any(Array),
    providerAmountWei: expect.stringMatching(/^\d+$/),
    platformFeeWei: expect.stringMatching(/^\d+$/),
    finalAmountWei: expect.stringMatching(/^[1-9]\d*$/),
    settlement: { status: "queued" },
  });
  expect(intentId).toMatch(/^pi_/);
  return receipt!;
}

describe("chat.completions.create, not streamed", () => {
  it("answers OpenAI's chat.completion with its receipt (body = X-Receipt), the output cap and the key's budget; the key pays exactly the receipt", async () => {
    const p = await payer();
    const { data, meta } = await p.client.chat.completions
      .create({ model: MODEL, messages: [{ role: "user", content: "hello gateway" }], temperature: 0.2 })
      .withResponse();
    expect(data).toMatchObject({
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: `${LOCAL}hello gateway` }, finish_reason: "stop" }],
    });
    const receipt = expectReceipt(meta.receipt, meta.paymentIntentId);
    expect(data.receipt).toEqual(receipt);
    expect(receipt.finalAmountWei).toBe(await priced(data.usage!));
    expect(meta.outputCap).toEqual({ tokens: 16384, reason: "model" });
    expect(meta.budget).toEqual({
      limit: 100_000_000n,
      used: BigInt(receipt.finalAmountWei),
      reserved: 0n,
      remaining: 100_000_000n - BigInt(receipt.finalAmountWei),
    });
    const sent = p.client.calls.at(-1)!;
    expect([sent.method, new URL(sent.url).pathname, sent.headers.authorization?.startsWith("Bearer svc-")]).toEqual(["POST", "/v1/chat/completions", true]);
    expect(JSON.parse(sent.body!)).toEqual({ model: MODEL, messages: [{ role: "user", content: "hello gateway" }], temperature: 0.2 });

    const capped = await p.client.chat.completions
      .create({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_completion_tokens: 5 })
      .withResponse();
    expect(capped.meta.outputCap).toEqual({ tokens: 5, reason: "request" });
    expect(capped.data.choices[0]!.finish_reason).toBe("length");
    expect(await spent(p)).toEqual({ used: String(BigInt(receipt.finalAmountWei) + BigInt(capped.data.receipt.finalAmountWei)), reserved: "0" });
  });

  it("a key that cannot afford the whole output cap gets a lowered one: reason budget", async () => {
    const p = await payer(gw, 10_000n);
    const { data, meta } = await p.client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hello" }] }).withResponse();
    expect(meta.outputCap?.reason).toBe("budget");
    expect(meta.outputCap!.tokens).toBeGreaterThan(1);
    expect(meta.outputCap!.tokens).toBeLessThan(16384);
    expect(data.choices[0]!.message.content).toBe(`${LOCAL}hello`);
    expect(await spent(p)).toEqual({ used: data.receipt.finalAmountWei, reserved: "0" });
  });

  it("a tool call: the assistant's tool_calls, finish_reason tool_calls; extra fields pass through", async () => {
    const p = await payer();
    const completion = await p.client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "Paris" }],
      tools: [WEATHER],
      tool_choice: "auto",
      some_vendor_field: { a: 1 },
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
    ]);
    expect(JSON.parse(p.client.calls.at(-1)!.body!).some_vendor_field).toEqual({ a: 1 });
    // The tool's result goes back in the history; the local provider answers it as text.
    const answer = await p.client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: "user", content: "Paris" },
        { role: "assistant", content: null, tool_calls: choice.message.tool_calls! },
        { role: "tool", tool_call_id: choice.message.tool_calls![0]!.id, content: "sunny" },
      ],
      tools: [WEATHER],
    });
    expect(answer.choices[0]!.message.content).toBe("The tool returned: sunny");
    expect(await spent(p)).toEqual({ used: String(BigInt(completion.receipt.finalAmountWei) + BigInt(answer.receipt.finalAmountWei)), reserved: "0" });
  });
});

describe("chat.completions.create, streamed", () => {
  it("yields the chunks (text assembles, no receipt chunk); stream.receipt, outputCap and meta; the key pays exactly the receipt", async () => {
    const p = await payer();
    const stream = p.client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "stream me please" }], stream: true, max_tokens: 100 });
    expect(stream).toBeInstanceOf(ChatCompletionStream);
    expect([stream.meta, stream.receipt, p.client.calls.length]).toEqual([undefined, undefined, 0]);
    const chunks = await collect(stream);
    expect(text(chunks)).toBe(`${LOCAL}stream me please`);
    expect(chunks.length).toBeGreaterThan(10);
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.choices.length === 1 && c.usage == null && !("receipt" in c))).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
    expect(stream.meta?.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(stream.meta?.requestId).toMatch(/^req_/);
    expect(stream.outputCap).toEqual({ tokens: 100, reason: "request" });
    const receipt = expectReceipt(stream.receipt, stream.meta?.paymentIntentId);
    expect(stream.usage).toBeUndefined();
    expect(await spent(p)).toEqual({ used: receipt.finalAmountWei, reserved: "0" });
    const sent = p.client.calls.find((c) => c.url.endsWith("/v1/chat/completions"))!;
    expect([sent.headers.accept, JSON.parse(sent.body!).stream]).toEqual(["text/event-stream", true]);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(TypeError);
  });

  it("stream_options.include_usage: the usage-only chunk is yielded last, and the receipt prices it", async () => {
    const p = await payer();
    const stream = p.client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "count me" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = await collect(stream);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) });
    expect(stream.usage).toEqual(last.usage);
    expect(text(chunks)).toBe(`${LOCAL}count me`);
    expect(stream.receipt!.finalAmountWei).toBe(await priced(last.usage!));
    expect(await spent(p)).toEqual({ used: stream.receipt!.finalAmountWei, reserved: "0" });
  });

  it("a streamed tool call: the first delta of the call carries its id and name", async () => {
    const p = await payer();
    const stream = p.client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Oslo" }], tools: [WEATHER], stream: true });
    const calls = (await collect(stream)).flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls).toEqual([{ index: 0, id: expect.stringMatching(/^call_/), type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }]);
    expect(await spent(p)).toEqual({ used: stream.receipt!.finalAmountWei, reserved: "0" });
  });

  it("errors before the stream are the typed errors, thrown from the loop or response(); sent once; nothing charged", async () => {
    const poor = await payer(gw, 1n);
    const e = await thrown(() => poor.client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }] }));
    expect(e).toBeInstanceOf(PaymentRequiredError);
    expect([e.status, e.code, e.type]).toEqual([402, "budget_exhausted", "insufficient_quota"]);
    const stream = poor.client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }], stream: true });
    const early = await thrown(() => stream.response());
    expect(early).toBeInstanceOf(PaymentRequiredError);
    expect(await thrown(() => collect(stream))).toBe(early);
    expect(early.code).toBe("budget_exhausted");
    expect(early.requestId).toBe(early.headers.get("x-request-id"));
    expect(poor.client.calls.filter((c) => c.url.endsWith("/v1/chat/completions"))).toHaveLength(2);
    expect(await spent(poor)).toEqual({ used: "0", reserved: "0" });

    const p = await payer();
    const missing = await thrown(() =>
      collect(p.client.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "hi" }], stream: true })),
    );
    expect([missing instanceof NotFoundError, missing.code]).toEqual([true, "model_not_found"]);
    const bad = await thrown(() => p.client.chat.completions.create({ model: MODEL, messages: [] }));
    expect([bad instanceof BadRequestError, bad.code, bad.param]).toEqual([true, "invalid_request", "messages"]);
    // A paymentSignature replaces the key (x402 is off here: 503 not_configured, and no Authorization sent).
    const x402 = await thrown(() =>
      collect(
        p.client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }], stream: true }, { paymentSignature: "bm90LXZhbGlk" }),
      ),
    );
    expect([x402 instanceof ServiceUnavailableError, x402.code]).toEqual([true, "not_configured"]);
    const sent = p.client.calls.at(-1)!;
    expect([sent.headers.authorization, sent.headers["payment-signature"]]).toEqual([undefined, "bm90LXZhbGlk"]);
    expect(await spent(p)).toEqual({ used: "0", reserved: "0" });
  });

  it("an upstream that fails mid-stream: the chunks, then the receipt of what was relayed, then BadGatewayError upstream_error", async () => {
    const p = await payer(failing);
    const stream = p.client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }], stream: true });
    const seen: ChatCompletionChunk[] = [];
    const e = await thrown(async () => {
      for await (const chunk of stream) seen.push(chunk);
    });
    expect(e).toBeInstanceOf(BadGatewayError);
    expect([e.status, e.code, e.type]).toEqual([502, "upstream_error", "api_error"]);
    expect(JSON.stringify(e.body)).toContain("stub failed mid-stream");
    expect(e.requestId).toBe(stream.meta?.requestId);
    expect(text(seen)).toBe("Hello from");
    const receipt = expectReceipt(stream.receipt, stream.meta?.paymentIntentId);
    expect(await spent(p)).toEqual({ used: receipt.finalAmountWei, reserved: "0" });
  });

  it("breaking out of the loop cancels the request: the gateway stops and bills the words relayed, nothing stays reserved", async () => {
    const p = await payer(slow);
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    // What the whole answer costs (the non-streamed answer is not slowed).
    const full = BigInt((await p.client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: words }] })).receipt.finalAmountWei);
    const before = BigInt((await spent(p)).used);
    const stream = p.client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: words }], stream: true });
    const seen: ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      seen.push(chunk);
      if (seen.length === 3) break;
    }
    expect(text(seen)).toBe("This is");
    // Left alone, the ~70 words would take ~2.8 s and be billed in full: billing less proves the stop.
    const after = await settled(p);
    expect(after.reserved).toBe("0");
    const charged = BigInt(after.used) - before;
    expect(charged).toBeGreaterThan(0n);
    expect(charged).toBeLessThan(full);
    expect(stream.receipt).toBeUndefined();
  });

  it("abort() ends the loop quietly; the call's signal throws UserAbortError; both cancel the request", async () => {
    const p = await payer(slow);
    const messages = [{ role: "user" as const, content: Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ") }];
    const stream = p.client.chat.completions.create({ model: MODEL, messages, stream: true });
    const quiet: ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      quiet.push(chunk);
      if (quiet.length === 2) stream.abort();
    }
    expect(quiet).toHaveLength(2);
    expect((await settled(p)).reserved).toBe("0");

    const controller = new AbortController();
    let n = 0;
    const e = await thrown(async () => {
      for await (const _ of p.client.chat.completions.create({ model: MODEL, messages, stream: true }, { signal: controller.signal }))
        if (++n === 2) controller.abort(new Error("user left"));
    });
    expect(e).toBeInstanceOf(UserAbortError);
    expect(e.cause).toEqual(new Error("user left"));
    expect((await settled(p)).reserved).toBe("0");

    // Aborted before it started: no request at all.
    const unsent = p.client.chat.completions.create({ model: MODEL, messages, stream: true });
    unsent.abort();
    const calls = p.client.calls.length;
    expect(await collect(unsent)).toEqual([]);
    expect(p.client.calls.length).toBe(calls);
  });
});
