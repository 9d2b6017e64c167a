/**
 * What a chat call is billed when the gateway counts the output itself: a stream whose client read
 * everything and left before the upstream's usage chunk, or an upstream that reports no usage. Every
 * kind of output relayed must be counted (a `custom` tool call's input, Mistral's `thinking` parts),
 * on another vendor's card at the bound its tokenizer may reach (digits one by one), and a long answer
 * by its tokens rather than its bytes. Also: a `prediction` is reserved as the output it is billed as.
 * Real SQLite store, the gateway, a real local HTTP upstream; fair prices come from the gateway's own
 * `POST /api/payments/meter/model`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withGateway, type Harness } from "@tollgate/testing";
import { countPrompt, tokenCounter } from "@tollgate/core";
import { tempSqliteStores } from "./temp-stores.js";

const createStore = tempSqliteStores("chat-counted-output");
const MESSAGES = [{ role: "user", content: "Write the whole file." }];
const CODE = "const value = computeSomethingUseful(input, options); // line of generated code\n".repeat(4);
const DIGITS = "31415926535897932384626433832795028841971693993751".repeat(10);
const PROSE = " information international organization development".repeat(60);
const PREDICTION = "export function add(a: number, b: number): number { return a + b; }\n".repeat(400);
/** Pieces streamed before the upstream pauses (the last tokens being made) and then sends its usage. */
const PIECES = 40;

const sse = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const chunk = (delta: unknown, finish: string | null = null) =>
  sse({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });

/** Each mode's streamed delta for piece `i`. */
const DELTAS: Record<string, (i: number) => unknown> = {
  custom: (i) => ({
    tool_calls: [{ index: 0, ...(i === 0 ? { id: "call_1", type: "custom" } : {}), custom: i === 0 ? { name: "patch", input: CODE } : { input: CODE } }],
  }),
  thinking: () => ({ content: [{ type: "thinking", thinking: [{ type: "text", text: CODE }] }] }),
  digits: () => ({ content: DIGITS }),
  long: () => ({ content: PROSE.repeat(2) }),
};

let upstream: http.Server;
let url = "";
let predictionTokens = 0;

beforeAll(async () => {
  predictionTokens = (await tokenCounter()).count(PREDICTION);
  upstream = http.createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", async () => {
      const mode = req.url!.split("/")[1]!;
      const body = JSON.parse(text) as { stream?: boolean; prediction?: unknown; model: string };
      if (mode === "prediction") {
        // As OpenAI: the prediction's rejected tokens are billed as completion tokens.
        const rejected = body.prediction ? predictionTokens : 0;
        const usage = {
          prompt_tokens: 30,
          completion_tokens: 16 + rejected,
          total_tokens: 46 + rejected,
          completion_tokens_details: { rejected_prediction_tokens: rejected },
        };
        const message = { role: "assistant", content: "Rewritten entirely." };
        return void res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "x",
            object: "chat.completion",
            created: 1,
            model: body.model,
            choices: [{ index: 0, message, finish_reason: "length" }],
            usage,
          }),
        );
      }
      if (body.stream !== true) {
        // Not streamed, and no usage (a self-hosted server): a custom tool call.
        const message = {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "custom", custom: { name: "patch", input: CODE.repeat(PIECES) } }],
        };
        return void res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ id: "x", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message, finish_reason: "tool_calls" }] }));
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ role: "assistant", content: null }));
      for (let i = 0; i < PIECES; i++) {
        if (res.destroyed) return;
        res.write(chunk(DELTAS[mode]!(i)));
        await new Promise((r) => setTimeout(r, 3));
      }
      await new Promise((r) => setTimeout(r, 400));
      if (res.destroyed) return;
      res.write(chunk({}, "stop"));
      res.write(
        sse({
          id: "c1",
          object: "chat.completion.chunk",
          created: 1,
          model: "m",
          choices: [],
          usage: { prompt_tokens: 20, completion_tokens: 99_999, total_tokens: 100_019 },
        }),
      );
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(
  () =>
    new Promise<void>((r) => {
      upstream.closeAllConnections();
      upstream.close(() => r());
    }),
);

/** Every chat provider of the catalog's vendors used here, pointed at the stub in `mode`. */
const providers = (mode: string) => {
  const p = { type: "openai-compatible" as const, baseUrl: `${url}/${mode}`, apiKey: "sk-up" };
  return { media: { providers: { openai: p, mistral: p, google: p } } };
};

/** Runs `fn` on a gateway whose upstreams are the stub in `mode`, with a key of a large budget. */
async function onStub(mode: string, fn: (h: Harness, key: { keyId: string; token: string }) => Promise<void>): Promise<void> {
  await withGateway({ createStore }, async (h) => fn(h, await h.createKey({ budgetLimit: "100000000" })), providers(mode));
}

/** The key's view once its call is billed (nothing reserved). */
async function settled(h: Harness, key: { keyId: string; token: string }) {
  for (let i = 0; i < 300; i++) {
    const v = await h.inspect(key.token, key.keyId);
    if (v.budgetReserved === "0") return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  return h.inspect(key.token, key.keyId);
}

/** Streams, reads every piece of output, and leaves while the upstream finishes (before its usage). */
async function readAllThenLeave(h: Harness, token: string, model: string, extra: Record<string, unknown> = {}): Promise<string> {
  const abort = new AbortController();
  const res = await h.gateway.fetch(
    new Request("http://gateway.test/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: MESSAGES, stream: true, ...extra }),
      signal: abort.signal,
    }),
  );
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while ((text.match(/\n\n/g) ?? []).length < PIECES + 1) text += decoder.decode((await reader.read()).value!, { stream: true });
  abort.abort();
  await reader.cancel().catch(() => undefined);
  return text;
}

/** The price of a usage on a card, as the gateway's meter prices it. */
async function meter(h: Harness, modelId: string, provider: string, usage: { promptTokens: number; completionTokens: number }): Promise<bigint> {
  const r = await h.call("POST", "/api/payments/meter/model", { body: { modelId, provider, modality: "text", usage } });
  expect(r.status).toBe(200);
  return BigInt(r.body.finalAmountWei as string);
}

describe("chat output the gateway counts itself (SQLite)", () => {
  it("a custom tool call's input, streamed and cut before the usage, is billed", async () => {
    await onStub("custom", async (h, key) => {
      const tools = [{ type: "custom", custom: { name: "patch", description: "apply a patch" } }];
      expect(await readAllThenLeave(h, key.token, "gpt-4o", { tools })).toContain("computeSomethingUseful");
      const view = await settled(h, key);
      const counter = await tokenCounter();
      const prompt = countPrompt(counter, { messages: MESSAGES, extras: [tools] });
      expect(BigInt(view.budgetUsed)).toBeGreaterThanOrEqual(
        await meter(h, "gpt-4o", "openai", { promptTokens: prompt, completionTokens: counter.count(CODE.repeat(PIECES)) }),
      );
    });
  });

  it("Magistral's thinking parts, streamed and cut before the usage, are billed", async () => {
    await onStub("thinking", async (h, key) => {
      expect(await readAllThenLeave(h, key.token, "magistral-medium-2509")).toContain("computeSomethingUseful");
      const view = await settled(h, key);
      const output = (await tokenCounter()).count(CODE.repeat(PIECES));
      expect(BigInt(view.budgetUsed)).toBeGreaterThanOrEqual(await meter(h, "magistral-medium-2509", "mistral", { promptTokens: 1, completionTokens: output }));
    });
  });

  it("a custom tool call not streamed, from an upstream without usage, is billed", async () => {
    await onStub("custom", async (h, key) => {
      const tools = [{ type: "custom", custom: { name: "patch" } }];
      const res = await h.call("POST", "/v1/chat/completions", {
        headers: { authorization: `Bearer ${key.token}` },
        body: { model: "gpt-4o", messages: MESSAGES, tools },
      });
      expect(res.status).toBe(200);
      const counter = await tokenCounter();
      const fair = await meter(h, "gpt-4o", "openai", {
        promptTokens: countPrompt(counter, { messages: MESSAGES, extras: [tools] }),
        completionTokens: counter.count(CODE.repeat(PIECES)),
      });
      expect(BigInt(res.body.receipt.finalAmountWei as string)).toBeGreaterThanOrEqual(fair);
    });
  });

  it("digits on Gemini, cut before the usage: billed at least one token a digit, as Gemini counts them (o200k groups three)", async () => {
    await onStub("digits", async (h, key) => {
      await readAllThenLeave(h, key.token, "gemini-2.0-flash", { max_tokens: 32_768 });
      const view = await settled(h, key);
      expect(BigInt(view.budgetUsed)).toBeGreaterThanOrEqual(
        await meter(h, "gemini-2.0-flash", "google", { promptTokens: 1, completionTokens: DIGITS.length * PIECES }),
      );
    });
  });

  it("an answer longer than 128 Ki characters, cut before the usage, is billed its tokens, not its bytes", async () => {
    await onStub("long", async (h, key) => {
      await readAllThenLeave(h, key.token, "gpt-4.1");
      const view = await settled(h, key);
      const counter = await tokenCounter();
      const tokens = PIECES * counter.count(PROSE.repeat(2));
      expect(PROSE.length * 2 * PIECES).toBeGreaterThan(128 * 1024);
      const fair = await meter(h, "gpt-4.1", "openai", { promptTokens: countPrompt(counter, { messages: MESSAGES }), completionTokens: tokens });
      const used = BigInt(view.budgetUsed);
      expect(used).toBeGreaterThanOrEqual(fair);
      expect(used).toBeLessThanOrEqual((fair * 101n) / 100n);
    });
  });

  it("a prediction is reserved as output: a rejected one is billed in full at the output price", async () => {
    await onStub("prediction", async (h, key) => {
      const body = {
        model: "gpt-4o",
        messages: [{ role: "user", content: "Rewrite it in Rust." }],
        max_completion_tokens: 16,
        prediction: { type: "content", content: PREDICTION },
      };
      const res = await h.call("POST", "/v1/chat/completions", { headers: { authorization: `Bearer ${key.token}` }, body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const usage = res.body.usage as { prompt_tokens: number; completion_tokens: number };
      expect(usage.completion_tokens).toBe(16 + predictionTokens);
      expect(BigInt(res.body.receipt.finalAmountWei as string)).toBe(
        await meter(h, "gpt-4o", "openai", { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens }),
      );
    });
  });
});
