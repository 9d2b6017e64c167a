/**
 * The chat route suite: `POST /v1/chat/completions` through `gateway.fetch` on a real store,
 * billed by a service key, against a local OpenAI-compatible upstream (./chat-stub.ts) and the
 * offline `local` provider. Every answer's receipt is priced exactly as `meter/model` prices the
 * usage, the key pays exactly the receipts, and nothing stays reserved — on success, on upstream
 * failure before or during the stream, on a stream without usage, and when the client leaves.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayOptions } from "@tollgate/core";
import { startChatStub, STUB_USAGE, STUB_WORDS, type ChatStub } from "./chat-stub.js";
import { bearer, expectError, UNKNOWN_TOKEN, withGateway, type GatewaySuiteOptions, type Harness } from "./gateway-suite-fixtures.js";
import { expectUncharged, richKey } from "./gateway-suite-media-helpers.js";
import { bodyReceipt, CHAT_MODEL, HELLO, meterChat, postChat, promptCount, readEvents, spent, streamReceipt, textCount } from "./gateway-suite-chat-helpers.js";
import { runChatBudgetSuite } from "./gateway-suite-chat-budget.js";
import { runChatCutSuite } from "./gateway-suite-chat-cuts.js";

const STUB_TEXT = STUB_WORDS.join("");
/** A chat card with a 100-token window (a card may stop short of its model's own, where long prompts cost more). */
const TINY_CONTEXT = {
  modelId: "tiny-context",
  provider: "openai",
  name: "Tiny context",
  description: "A chat card whose window holds 100 tokens.",
  modalities: { input: ["text", "image"], output: ["text"] },
  operations: [{ modality: "text", operation: "chat" }],
  contextWindow: 100,
  pricing: [
    { key: "input_tokens", unit: "usd_per_1m_tokens", unitPriceUsd: "1.00" },
    { key: "output_tokens", unit: "usd_per_1m_tokens", unitPriceUsd: "2.00" },
  ],
  params: { max_tokens: { type: "integer", required: false, minimum: 1, maximum: 50 } },
};
/** A PDF file part: a few compressed bytes the upstream bills as its extracted text and page images. */
const PDF_PART = { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0xLjQK" } };
const AUDIO_PART = { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } };
/** What OpenAI bills a prompt of two high-detail images on GPT-4o mini: 2 × (2,833 + 8 × 5,667) and the text. */
const IMAGE_HEAVY_PROMPT = 2 * 48_169 + 14;

/** Registers the chat route suite for the store `name` in the current vitest file. */
export function runChatRouteSuite(name: string, options: GatewaySuiteOptions): void {
  let stub: ChatStub;
  const upstream = (mode: string, timeoutMs?: number, outputCapField?: "max_tokens" | "max_completion_tokens"): Partial<GatewayOptions> => ({
    media: {
      providers: {
        openai: {
          type: "openai-compatible",
          baseUrl: `${stub.url}/${mode}`,
          apiKey: "sk-stub",
          ...(timeoutMs ? { timeoutMs } : {}),
          ...(outputCapField ? { outputCapField } : {}),
        },
      },
    },
  });
  const test = (title: string, fn: (h: Harness) => Promise<void>, extra: () => Partial<GatewayOptions> = () => ({})) =>
    it(title, () => withGateway(options, fn, extra()));

  describe(`chat completions: ${name}`, () => {
    beforeAll(async () => void (stub = await startChatStub()));
    afterAll(() => stub.close());

    test(
      "non-streamed: the upstream's answer with a receipt (body and X-Receipt); fields pass through; the key pays exactly the receipt",
      async (h) => {
        const key = await richKey(h);
        const tools = [{ type: "function", function: { name: "weather", parameters: { type: "object", properties: {} } } }];
        // Fields the gateway does not own: they reach the upstream untouched.
        const forwarded = { temperature: 0.3, tools, response_format: { type: "text" }, user: "u-1", seed: 7 };
        const sent = Object.assign({ model: CHAT_MODEL, provider: "openai", messages: HELLO }, forwarded);
        const res = await postChat(h, sent, { token: key.token });
        const body = await res.json();
        expect(res.status, JSON.stringify(body)).toBe(200);
        expect(body.choices[0].message.content).toBe(STUB_TEXT);
        expect(body.usage).toEqual(STUB_USAGE);
        const receipt = bodyReceipt(res, body);
        expect(receipt.finalAmountWei).toBe(await meterChat(h, { promptTokens: 21, completionTokens: 9 }));
        expect(receipt.subject).toBe(`openai:${CHAT_MODEL}`);
        expect(res.headers.get("x-payment-intent-id")).toBe(receipt.paymentIntentId);
        expect([res.headers.get("x-output-cap"), res.headers.get("x-output-cap-reason")]).toEqual(["16384", "model"]);
        // The upstream got every field the gateway does not own, untouched, and the output cap.
        const got = stub.bodies.at(-1)!;
        expect(got).toEqual(Object.assign({ model: CHAT_MODEL, messages: HELLO }, forwarded, { max_completion_tokens: 16384, stream: false }));
        expect(await spent(h, key)).toEqual({ used: receipt.finalAmountWei, reserved: "0" });
      },
      () => upstream("ok"),
    );

    test(
      "a provider that reads only max_tokens gets the cap there, whichever field the client used, streamed or not",
      async (h) => {
        const key = await richKey(h);
        for (const [sent, stream] of [
          [{ max_completion_tokens: 300 }, false],
          [{}, true],
          [{ max_tokens: 200, max_completion_tokens: 300 }, false],
        ] as const) {
          const res = await postChat(h, Object.assign({ model: CHAT_MODEL, messages: HELLO, stream }, sent), { token: key.token });
          expect(res.status).toBe(200);
          await res.arrayBuffer();
          const got = stub.bodies.at(-1)!;
          expect(got.max_completion_tokens).toBeUndefined();
          expect(got.max_tokens).toBe(Number(res.headers.get("x-output-cap")));
        }
        expect(await spent(h, key)).toMatchObject({ reserved: "0" });
      },
      () => upstream("ok", undefined, "max_tokens"),
    );

    test(
      "a prompt longer than the card's context window is a 400 before any payment; images count by size there, not by their bound",
      async (h) => {
        const key = await richKey(h);
        const long = [{ role: "user", content: "word ".repeat(200) }];
        const res = await postChat(h, { model: TINY_CONTEXT.modelId, provider: "openai", messages: long }, { token: key.token });
        expectError({ status: res.status, headers: res.headers, body: await res.json() }, 400, "invalid_request", "messages");
        await expectUncharged(h, key);
        // Three images reserve 3 × 4,096 tokens, far past the window, but are not that long.
        const image = { type: "image_url", image_url: { url: "https://example.com/cat.png" } };
        const pictures = [{ role: "user", content: [{ type: "text", text: "Compare." }, image, image, image] }];
        const ok = await postChat(h, { model: TINY_CONTEXT.modelId, provider: "openai", messages: pictures }, { token: key.token });
        expect(ok.status).toBe(200);
        await ok.arrayBuffer();
      },
      () => Object.assign(upstream("ok"), { catalog: { native: [TINY_CONTEXT] } }),
    );

    test(
      "images are reserved at the most the card's provider bills one image as: GPT-4o mini's image-heavy prompt pays the upstream's whole usage",
      async (h) => {
        const key = await richKey(h);
        const image = { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "high" } };
        const messages = [{ role: "user", content: [{ type: "text", text: "Compare these two." }, image, image] }];
        const res = await postChat(h, { model: "gpt-4o-mini", provider: "openai", messages }, { token: key.token });
        const body = await res.json();
        expect(res.status, JSON.stringify(body)).toBe(200);
        // Two high-detail images at GPT-4o mini's 2,833 + 8 × 5,667 tokens each, and the text.
        const billed = await meterChat(h, { promptTokens: IMAGE_HEAVY_PROMPT, completionTokens: 9 }, "gpt-4o-mini");
        expect(bodyReceipt(res, body).finalAmountWei).toBe(billed);
        expect(await spent(h, key)).toEqual({ used: billed, reserved: "0" });
      },
      () => upstream(`prompt-${IMAGE_HEAVY_PROMPT}`),
    );

    test(
      "streamed: chunks relayed verbatim, the usage chunk asked of the upstream but not passed on, a receipt chunk, then [DONE]",
      async (h) => {
        const key = await richKey(h);
        const res = await postChat(h, { model: CHAT_MODEL, messages: HELLO, stream: true, max_tokens: 100 }, { token: key.token });
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
        expect([res.headers.get("x-output-cap"), res.headers.get("x-output-cap-reason")]).toEqual(["100", "request"]);
        const events = await readEvents(res);
        expect(events.at(-1)).toBe("[DONE]");
        const chunks = events.slice(0, -2).map((e) => JSON.parse(e));
        expect(chunks.map((c) => c.choices[0].delta.content ?? "").join("")).toBe(STUB_TEXT);
        expect(chunks.every((c) => c.usage === undefined)).toBe(true);
        const receipt = streamReceipt(events);
        expect(receipt.finalAmountWei).toBe(await meterChat(h, { promptTokens: 21, completionTokens: 9 }));
        const got = stub.bodies.at(-1)!;
        expect([got.stream, got.stream_options, got.max_tokens, got.max_completion_tokens]).toEqual([true, { include_usage: true }, 100, undefined]);
        expect(await spent(h, key)).toEqual({ used: receipt.finalAmountWei, reserved: "0" });
      },
      () => upstream("ok"),
    );

    test(
      "streamed with include_usage: the usage chunk reaches the client before the receipt",
      async (h) => {
        const key = await richKey(h);
        const res = await postChat(h, { model: CHAT_MODEL, messages: HELLO, stream: true, stream_options: { include_usage: true } }, { token: key.token });
        const events = await readEvents(res);
        const usage = JSON.parse(events.at(-3)!);
        expect([usage.choices, usage.usage]).toEqual([[], STUB_USAGE]);
        expect(streamReceipt(events).finalAmountWei).toBe(await meterChat(h, { promptTokens: 21, completionTokens: 9 }));
      },
      () => upstream("ok"),
    );

    test(
      "an upstream that reports no usage: billed on the counted prompt and output, streamed or not",
      async (h) => {
        const key = await richKey(h);
        const expected = await meterChat(h, { promptTokens: await promptCount(HELLO), completionTokens: await textCount(STUB_TEXT) });
        const plain = await postChat(h, { model: CHAT_MODEL, messages: HELLO }, { token: key.token });
        expect(bodyReceipt(plain, await plain.json()).finalAmountWei).toBe(expected);
        const streamed = await postChat(h, { model: CHAT_MODEL, messages: HELLO, stream: true }, { token: key.token });
        expect(streamReceipt(await readEvents(streamed)).finalAmountWei).toBe(expected);
        expect(await spent(h, key)).toEqual({ used: String(2n * BigInt(expected)), reserved: "0" });
      },
      () => upstream("nousage"),
    );

    test(
      "upstream failure before the first byte: 502 and nothing charged, streamed or not",
      async (h) => {
        const key = await richKey(h);
        for (const stream of [false, true]) {
          const res = await postChat(h, { model: CHAT_MODEL, messages: HELLO, stream }, { token: key.token });
          const e = expectError({ status: res.status, headers: res.headers, body: await res.json() }, 502, "upstream_error");
          expect(e.details.upstreamStatus).toBe(500);
        }
        await expectUncharged(h, key);
      },
      () => upstream("fail500"),
    );

    for (const mode of ["midfail", "errevent"]) {
      test(
        `upstream failure mid-stream (${mode}): the words relayed are billed, then a receipt and an error event`,
        async (h) => {
          const key = await richKey(h);
          const res = await postChat(h, { model: CHAT_MODEL, messages: HELLO, stream: true }, { token: key.token });
          expect(res.status).toBe(200);
          const events = await readEvents(res);
          const error = JSON.parse(events.at(-1)!);
          expect(error.error.code).toBe("upstream_error");
          if (mode === "errevent") expect(JSON.stringify(error.error)).toContain("stub failed mid-stream");
          const receipt = streamReceipt(events);
          const delivered = STUB_WORDS.slice(0, 2).join("");
          expect(receipt.finalAmountWei).toBe(await meterChat(h, { promptTokens: await promptCount(HELLO), completionTokens: await textCount(delivered) }));
          expect(await spent(h, key)).toEqual({ used: receipt.finalAmountWei, reserved: "0" });
        },
        () => upstream(mode),
      );
    }

    runChatCutSuite(test, upstream, () => stub);

    test(
      "an upstream slower than its deadline: 504 and nothing charged",
      async (h) => {
        const key = await richKey(h);
        const res = await postChat(h, { model: CHAT_MODEL, messages: HELLO, stream: true }, { token: key.token });
        expectError({ status: res.status, headers: res.headers, body: await res.json() }, 504, "upstream_timeout");
        await expectUncharged(h, key);
      },
      () => upstream("slow-600", 150),
    );

    test(
      "a tool call passes through, streamed and not, and is billed",
      async (h) => {
        const key = await richKey(h);
        const tools = [{ type: "function", function: { name: "weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
        const plain = await postChat(h, { model: CHAT_MODEL, messages: HELLO, tools }, { token: key.token });
        const body = await plain.json();
        expect(body.choices[0].message.tool_calls[0].function).toEqual({ name: "weather", arguments: '{"city":"Paris"}' });
        const first = bodyReceipt(plain, body);
        const streamed = await readEvents(await postChat(h, { model: CHAT_MODEL, messages: HELLO, tools, stream: true }, { token: key.token }));
        expect(JSON.parse(streamed[1]!).choices[0].delta.tool_calls[0].function.name).toBe("weather");
        const second = streamReceipt(streamed);
        expect(await spent(h, key)).toEqual({ used: String(BigInt(first.finalAmountWei) + BigInt(second.finalAmountWei)), reserved: "0" });
      },
      () => upstream("tool"),
    );

    test("the offline local provider answers, streams word by word, and reports usage the receipt prices", async (h) => {
      const key = await richKey(h);
      const messages = [{ role: "user", content: "hello <|endoftext|> there" }];
      const plain = await postChat(h, { model: CHAT_MODEL, messages }, { token: key.token });
      const body = await plain.json();
      expect(body.choices[0].message.content).toBe("This is the local provider answering offline. You wrote: hello <|endoftext|> there");
      expect(body.usage.prompt_tokens).toBe(await promptCount(messages));
      expect(bodyReceipt(plain, body).finalAmountWei).toBe(
        await meterChat(h, { promptTokens: body.usage.prompt_tokens, completionTokens: body.usage.completion_tokens }),
      );
      const events = await readEvents(await postChat(h, { model: CHAT_MODEL, messages, stream: true, max_completion_tokens: 5 }, { token: key.token }));
      const words = events
        .slice(0, -2)
        .map((e) => JSON.parse(e).choices[0]?.delta.content ?? "")
        .join("");
      expect(words).toBe("This is the local provider");
      expect(JSON.parse(events.at(-3)!).choices[0].finish_reason).toBe("length");
      streamReceipt(events);
    });

    test(
      "a stream that outlives the default intent lifetime is still billed: its reservation lasts an hour",
      async (h) => {
        const key = await richKey(h);
        const res = await postChat(h, { model: CHAT_MODEL, messages: HELLO, stream: true }, { token: key.token });
        const reader = res.body!.getReader();
        await reader.read();
        h.clock.advance(20 * 60_000); // past the 15-minute default, mid-stream
        let text = "";
        for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
        const receipt = streamReceipt(
          text
            .split("\n\n")
            .filter((f) => f.startsWith("data: "))
            .map((f) => f.slice(6)),
        );
        expect(await spent(h, key)).toEqual({ used: receipt.finalAmountWei, reserved: "0" });
      },
      () => ({ media: { providers: { local: { type: "local", chatChunkDelayMs: 2 } } } }),
    );

    test(
      "the stream's intent id is no lever: public settle and abort of it are 403 (no credential, or the owner's key), and the stream is still billed in full",
      async (h) => {
        const key = await richKey(h);
        const res = await postChat(h, { model: CHAT_MODEL, messages: HELLO, stream: true }, { token: key.token });
        const intentId = res.headers.get("x-payment-intent-id")!;
        expect(intentId).toMatch(/^pi_[0-9a-f]{44}$/);
        const reader = res.body!.getReader();
        await reader.read();
        // Mid-stream: release the reservation, or settle it at 0, as the caller who read the header.
        const refused = [
          await h.abort({ paymentIntentId: intentId }),
          await h.settle({ paymentIntentId: intentId, finalAmountWei: "0" }),
          await h.abort({ paymentIntentId: intentId }, bearer(key.token)),
          await h.settle({ paymentIntentId: intentId, finalAmountWei: "0" }, bearer(key.token)),
        ];
        for (const r of refused) expectError(r, 403, "forbidden", "paymentIntentId");
        let text = "";
        for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
        const receipt = streamReceipt(
          text
            .split("\n\n")
            .filter((f) => f.startsWith("data: "))
            .map((f) => f.slice(6)),
        );
        expect(receipt.paymentIntentId).toBe(intentId);
        expect(BigInt(receipt.finalAmountWei)).toBeGreaterThan(0n);
        expect(await spent(h, key)).toEqual({ used: receipt.finalAmountWei, reserved: "0" });
        // Finished, it stays the gateway's: no replay of its settlement through the public route either.
        expectError(await h.settle({ paymentIntentId: intentId, finalAmountWei: receipt.finalAmountWei }), 403, "forbidden");
      },
      () => ({ media: { providers: { local: { type: "local", chatChunkDelayMs: 2 } } } }),
    );

    test("check order: fields (400), model (404, 400 for a non-chat model), then payment (401/402)", async (h) => {
      const key = await richKey(h);
      const cases: [Record<string, unknown>, number, string, string | undefined][] = [
        [{ model: CHAT_MODEL }, 400, "invalid_request", "messages"],
        [{ model: CHAT_MODEL, messages: [] }, 400, "invalid_request", "messages"],
        [{ model: CHAT_MODEL, messages: [{ role: "robot", content: "x" }] }, 400, "invalid_request", "messages.0.role"],
        [{ model: CHAT_MODEL, messages: HELLO, max_tokens: 0 }, 400, "invalid_request", "max_tokens"],
        [{ model: CHAT_MODEL, messages: HELLO, n: 17 }, 400, "invalid_request", "n"],
        [{ model: CHAT_MODEL, messages: HELLO, stream: "yes" }, 400, "invalid_request", "stream"],
        // Options the upstream bills above the card's token prices.
        [{ model: CHAT_MODEL, messages: HELLO, service_tier: "priority" }, 400, "invalid_request", "service_tier"],
        [{ model: CHAT_MODEL, messages: HELLO, web_search_options: {} }, 400, "invalid_request", "web_search_options"],
        [{ model: CHAT_MODEL, messages: HELLO, audio: { voice: "alloy", format: "wav" } }, 400, "invalid_request", "audio"],
        [{ model: CHAT_MODEL, messages: HELLO, modalities: ["text", "audio"] }, 400, "invalid_request", "modalities.1"],
        [{ model: CHAT_MODEL, messages: HELLO, tools: [{ type: "web_search_20250305", name: "web_search" }] }, 400, "invalid_request", "tools.0.type"],
        [{ model: CHAT_MODEL, messages: HELLO, plugins: [{ id: "web" }] }, 400, "invalid_request", "plugins"],
        [{ model: CHAT_MODEL, messages: HELLO, models: ["gpt-4o", "o3"] }, 400, "invalid_request", "models"],
        // Parts billed on what the upstream extracts (a PDF's text and pages, audio) cannot be quoted.
        [
          { model: CHAT_MODEL, messages: [{ role: "user", content: [{ type: "text", text: "Sum up" }, PDF_PART] }] },
          400,
          "invalid_request",
          "messages.0.content.1.type",
        ],
        [
          { model: CHAT_MODEL, messages: [HELLO[0], { role: "tool", tool_call_id: "c", content: [AUDIO_PART] }] },
          400,
          "invalid_request",
          "messages.1.content.0.type",
        ],
        [{ model: CHAT_MODEL, messages: [{ role: "user", content: [{ file: PDF_PART.file }] }] }, 400, "invalid_request", "messages.0.content.0.type"],
        ...[PDF_PART.file.file_data, ` DATA:application/pdf;base64,JVBERi0xLjQK`].map((url): [Record<string, unknown>, number, string, string] => [
          { model: CHAT_MODEL, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url } }] }] },
          400,
          "invalid_request",
          "messages.0.content.0.image_url",
        ]),
        [{ model: "no-such-model", messages: HELLO }, 404, "model_not_found", undefined],
        [{ model: "text-embedding-3-small", messages: HELLO }, 400, "invalid_request", "model"],
      ];
      for (const [body, status, code, param] of cases) {
        const res = await postChat(h, body, { token: key.token });
        expectError({ status: res.status, headers: res.headers, body: await res.json() }, status, code, param);
      }
      const unknown = await postChat(h, { model: CHAT_MODEL, messages: HELLO }, { token: UNKNOWN_TOKEN });
      expectError({ status: unknown.status, headers: unknown.headers, body: await unknown.json() }, 401, "invalid_key");
      const none = await postChat(h, { model: CHAT_MODEL, messages: HELLO });
      expect(none.status).toBe(402);
      await expectUncharged(h, key);
    });

    runChatBudgetSuite(
      test,
      () => upstream("ok"),
      () => stub,
    );
  });
}
