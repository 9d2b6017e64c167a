/**
 * A streamed chat call whose client leaves after the last content chunk, on a card without
 * `tokenizer` (Mistral here; Llama, Command, Nova, Gemini 2.0… alike), through the OpenAI SDK on a
 * real port: it pays the usage the upstream already reported (what the upstream bills), and when
 * none came, the prompt and the output at their bounds (that vendor may count several times o200k),
 * not the gateway's own o200k count.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway, createMemoryStore, countOutput, countPrompt, quoteChat, tokenCounter } from "@tollgate/core";
import { serve, type RunningServer } from "./server.js";

const OWNER = "0x00000000000000000000000000000000000000c4";
const SECRET = "chat-cut-internal-secret-0123456789";
// Tamil text: o200k counts it at a fraction of what other vendors' tokenizers count (docs/chat.md: up to 4.28x).
const PROMPT = "தமிழ் மொழி உலகின் மிகப் பழமையான மொழிகளில் ஒன்றாகும். ".repeat(200);
const MESSAGES = [{ role: "user" as const, content: PROMPT }];
const WORDS = ["Hello", " from", " the", " upstream", "."];
let REPORTED_PROMPT = 0; // set in beforeAll: what the upstream reports (4x the o200k count)

/** When set, the upstream sends no usage at all. */
let silent = false;
let bound = 0;
let upstream: http.Server;
let upstreamUrl = "";
let running: RunningServer;
let key: { keyId: string; token: string };

const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices, ...extra })}\n\n`;

beforeAll(async () => {
  REPORTED_PROMPT = 4 * countPrompt(await tokenCounter(), { messages: MESSAGES });
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on("end", async () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk([{ index: 0, delta: { role: "assistant", content: "" } }]));
      for (const w of WORDS) res.write(chunk([{ index: 0, delta: { content: w } }]));
      res.write(chunk([{ index: 0, delta: {}, finish_reason: "stop" }]));
      // The usage chunk (what the upstream bills) arrives at once; [DONE] a moment later.
      if (!silent) res.write(chunk([], { usage: { prompt_tokens: REPORTED_PROMPT, completion_tokens: 5, total_tokens: REPORTED_PROMPT + 5 } }));
      await new Promise((r) => setTimeout(r, 400));
      if (!res.destroyed) res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const gateway = createGateway({
    store: createMemoryStore(),
    sweepIntervalMs: 0,
    internalSecret: SECRET,
    media: { providers: { mistral: { type: "openai-compatible", baseUrl: upstreamUrl, apiKey: "sk-upstream" } } },
  });
  running = await serve(gateway, { port: 0 });
  bound = quoteChat(gateway.services.catalog.get("mistral-large-2411")!, await tokenCounter(), { messages: MESSAGES, extras: [] }, 100).promptBound;
  const res = await fetch(`${running.url}/api/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-session-user-address": OWNER, "x-internal-secret": SECRET },
    body: JSON.stringify({ budgetLimit: "100000000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" }),
  });
  key = (await res.json()) as typeof key;
});

afterAll(async () => {
  await running?.close({ graceMs: 100 });
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

async function keyView() {
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${running.url}/api/keys/${key.keyId}`, { headers: { authorization: `Bearer ${key.token}` } });
    const v = (await r.json()) as { budgetUsed: string; budgetReserved: string };
    if (v.budgetReserved === "0") return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("reservation never cleared");
}

async function meter(promptTokens: number, completionTokens: number): Promise<bigint> {
  const r = await fetch(`${running.url}/api/payments/meter/model`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ modelId: "mistral-large-2411", provider: "mistral", modality: "text", usage: { promptTokens, completionTokens } }),
  });
  return BigInt(((await r.json()) as { finalAmountWei: string }).finalAmountWei);
}

/** Reads the stream to its finish chunk, waits for what follows to arrive, and leaves. */
async function readAndLeave(): Promise<string> {
  const openai = new OpenAI({ apiKey: key.token, baseURL: `${running.url}/v1`, maxRetries: 0 });
  const stream = await openai.chat.completions.create({ model: "mistral-large-2411", messages: MESSAGES, stream: true });
  let text = "";
  for await (const c of stream) {
    text += c.choices[0]?.delta?.content ?? "";
    if (c.choices[0]?.finish_reason) {
      await new Promise((r) => setTimeout(r, 150));
      stream.controller.abort();
      break;
    }
  }
  return text;
}

it("a client that reads the whole answer and leaves before [DONE] pays the usage the upstream already reported", async () => {
  expect(await readAndLeave()).toBe(WORDS.join("")); // the client got the whole answer
  const used = BigInt((await keyView()).budgetUsed);
  // The upstream reported 4× the gateway's own count (as other vendors' tokenizers may): that is what it bills.
  expect(used).toBe(await meter(REPORTED_PROMPT, 5));
});

it("the same stream read to its end pays the reported usage (control)", async () => {
  const before = BigInt((await keyView()).budgetUsed);
  const openai = new OpenAI({ apiKey: key.token, baseURL: `${running.url}/v1`, maxRetries: 0 });
  const stream = await openai.chat.completions.create({ model: "mistral-large-2411", messages: MESSAGES, stream: true });
  for await (const _c of stream) void _c;
  const used = BigInt((await keyView()).budgetUsed) - before;
  expect(used).toBe(await meter(REPORTED_PROMPT, 5));
});

it("with no usage from the upstream, the same client pays the prompt and the output at their bounds (the vendor's count may be several times o200k's)", async () => {
  silent = true;
  try {
    const before = BigInt((await keyView()).budgetUsed);
    expect(await readAndLeave()).toBe(WORDS.join(""));
    const counted = countPrompt(await tokenCounter(), { messages: MESSAGES });
    expect(bound).toBeGreaterThan(counted);
    const used = BigInt((await keyView()).budgetUsed) - before;
    expect(used).toBe(await meter(bound, countOutput(await tokenCounter(), WORDS.join(""), true)));
  } finally {
    silent = false;
  }
});
