/**
 * Chat fields the gateway does not read, and upstreams that do not honour the output cap, on a real
 * port with a real SQLite file and a local upstream that behaves as each vendor documents:
 * - `/groq` bills Groq's `documents` (context the model reads) as prompt tokens;
 * - `/ollama` reads only `max_tokens` (its OpenAI layer knows no `max_completion_tokens`);
 * - `/llamacpp` lets `n_predict` override `max_tokens`;
 * - `/vllm` honours the cap, and sends its reasoning in both `reasoning` and `reasoning_content`.
 * A field the upstream reads into the prompt is reserved for; a field that may override the cap is
 * refused; an answer past the cap is not served beyond what the call paid for, and is billed the cap.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway, countPrompt, tokenCounter, NATIVE_CATALOG } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { serve, type RunningServer } from "./server.js";
import { meteredPrice, withJsonBody } from "./testing/served-key.js";

const OWNER = "0x00000000000000000000000000000000000000c7";
const SECRET = "chat-fields-internal-secret-0123456789";
const dir = mkdtempSync(join(tmpdir(), "tollgate-chat-fields-"));
const OLLAMA_CARD = {
  modelId: "llama3.1:8b",
  provider: "ollama",
  name: "Llama 3.1 8B (self-hosted)",
  description: "Llama 3.1 8B Instruct on our own Ollama server.",
  modalities: { input: ["text"], output: ["text"] },
  operations: [{ modality: "text", operation: "chat" }],
  contextWindow: 131072,
  pricing: [
    { key: "input_tokens", unit: "usd_per_1m_tokens", unitPriceUsd: "0.05" },
    { key: "output_tokens", unit: "usd_per_1m_tokens", unitPriceUsd: "0.10" },
  ],
};
const LLAMACPP_CARD = Object.assign({}, OLLAMA_CARD, { modelId: "qwen2.5-7b", provider: "llamacpp", name: "Qwen 2.5 7B (llama.cpp)" });
const VLLM_CARD = Object.assign({}, OLLAMA_CARD, { modelId: "qwen3-32b", provider: "vllm", name: "Qwen3 32B (vLLM)" });
const WORDS = 3000;

let upstream: http.Server;
let running: RunningServer;
let key: { keyId: string; token: string };
const seen: Record<string, unknown>[] = [];

const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify(Object.assign({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices }, extra))}\n\n`;

beforeAll(async () => {
  const counter = await tokenCounter();
  upstream = http.createServer(
    withJsonBody((req, res, body) => {
      seen.push(body);
      const vendor = req.url!.split("/")[1];
      const docs = vendor === "groq" && Array.isArray(body.documents) ? body.documents.map((d: { text: string }) => ({ role: "user", content: d.text })) : [];
      const prompt = countPrompt(counter, { messages: [...body.messages, ...docs] });
      // The cap each server really honours (-1: none, it writes on).
      const cap =
        vendor === "ollama"
          ? (body.max_tokens ?? -1)
          : vendor === "llamacpp"
            ? (body.n_predict ?? body.max_tokens ?? -1)
            : (body.max_completion_tokens ?? body.max_tokens);
      // One token a word, as the upstream counts (vLLM's are one o200k token each too: " ok").
      const words = Array.from({ length: cap === -1 ? WORDS : Math.min(cap, WORDS) }, (_, i) => (vendor === "vllm" ? " ok" : ` w${i}`));
      const usage = { prompt_tokens: prompt, completion_tokens: words.length, total_tokens: prompt + words.length };
      // vLLM: most of the answer is reasoning, sent under both of its names.
      const thought = vendor === "vllm" ? Math.floor(words.length * 0.95) : 0;
      const part = (from: number, to: number) => {
        const reasoning = words.slice(from, Math.min(to, thought)).join("");
        const content = words.slice(Math.max(from, thought), to).join("");
        return vendor === "vllm" ? { content, reasoning, reasoning_content: reasoning } : { content };
      };
      if (body.stream !== true) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "x",
            object: "chat.completion",
            choices: [{ index: 0, message: Object.assign({ role: "assistant" }, part(0, words.length)), finish_reason: "stop" }],
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 0; i < words.length; i += 5) res.write(chunk([{ index: 0, delta: part(i, i + 5) }]));
      res.write(chunk([{ index: 0, delta: {}, finish_reason: "stop" }]));
      res.write(chunk([], { usage }));
      res.end("data: [DONE]\n\n");
    }),
  );
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const gateway = createGateway({
    store: createSqliteStore({ filename: join(dir, "gateway.db") }),
    sweepIntervalMs: 0,
    internalSecret: SECRET,
    catalog: { native: [...NATIVE_CATALOG, OLLAMA_CARD, LLAMACPP_CARD, VLLM_CARD] as never },
    media: {
      providers: {
        groq: { type: "openai-compatible", baseUrl: `${url}/groq`, apiKey: "gsk-upstream-secret" },
        // An Ollama entry without outputCapField: the cap goes in max_completion_tokens, which Ollama ignores.
        ollama: { type: "openai-compatible", baseUrl: `${url}/ollama` },
        llamacpp: { type: "openai-compatible", baseUrl: `${url}/llamacpp`, outputCapField: "max_tokens" },
        vllm: { type: "openai-compatible", baseUrl: `${url}/vllm` },
      },
    },
  });
  running = await serve(gateway, { port: 0 });
  const res = await fetch(`${running.url}/api/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-session-user-address": OWNER, "x-internal-secret": SECRET },
    body: JSON.stringify({ budgetLimit: "100000000000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" }),
  });
  key = (await res.json()) as typeof key;
});

afterAll(async () => {
  await running?.close({ graceMs: 100 });
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** The key's spend once no reservation is open. */
async function used(): Promise<bigint> {
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${running.url}/api/keys/${key.keyId}`, { headers: { authorization: `Bearer ${key.token}` } });
    const v = (await r.json()) as { budgetUsed: string; budgetReserved: string };
    if (v.budgetReserved === "0") return BigInt(v.budgetUsed);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the reservation was never given back");
}

const meter = (modelId: string, provider: string, promptTokens: number, completionTokens: number): Promise<bigint> =>
  meteredPrice(running.url, { modelId, provider, modality: "text" }, { usage: { promptTokens, completionTokens } });

const chat = (body: Record<string, unknown>) =>
  fetch(`${running.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key.token}` },
    body: JSON.stringify(body),
  });

const DOCS = Array.from({ length: 10 }, (_, i) => ({ text: `Document ${i}: ` + "The quick brown fox jumps over the lazy dog. ".repeat(150) }));
const WRITE = [{ role: "user", content: "Write a lot." }];

it("a field the upstream reads into the prompt (Groq's documents) is reserved for, and its usage billed in full", async () => {
  const before = await used();
  const res = await chat({
    model: "llama-3.3-70b-versatile",
    messages: [{ role: "user", content: "Summarize the documents." }],
    max_tokens: 16,
    documents: DOCS,
  });
  expect(res.status).toBe(200);
  const out = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
  expect(seen.at(-1)!.documents).toEqual(DOCS);
  expect(out.usage.prompt_tokens).toBeGreaterThan(10_000);
  const metered = await meter("llama-3.3-70b-versatile", "groq", out.usage.prompt_tokens, out.usage.completion_tokens);
  expect((await used()) - before).toBe(metered);
});

it("fields that may override the output cap are refused before anything is reserved: listed, vendor, nested, or a known name in other case", async () => {
  const before = await used();
  const fields: [string, unknown][] = [
    ["n_predict", -1],
    ["num_predict", 4096],
    ["max_new_tokens", 4096],
    ["ignore_eos", true],
    ["options", { num_predict: -1 }],
    ["max_gen_len", 4096],
    ["max_tokens_to_sample", 4096],
    ["extra_body", { max_tokens: 4096 }],
    ["generation_config", { max_output_tokens: 4096 }],
    ["N_PREDICT", -1],
    ["MAX_TOKENS", 100_000],
    ["Max_Completion_Tokens", 100_000],
    ["Messages", []],
  ];
  for (const [field, value] of fields) {
    const res = await chat({ model: "qwen2.5-7b", messages: WRITE, max_tokens: 1, [field]: value });
    expect(res.status, field).toBe(400);
    expect(((await res.json()) as { error: { code: string; param: string } }).error).toMatchObject({ code: "invalid_request", param: field });
  }
  expect(await used()).toBe(before);
  // A parameter sent as null is absent, and vLLM's stop_token_ids only ends an answer sooner.
  expect((await chat({ model: "qwen2.5-7b", max_tokens: 1, messages: WRITE, web_search_options: null, audio: null, stop_token_ids: [2] })).status).toBe(200);
  // The cap the upstream gets is the one the call pays for.
  expect((await chat({ model: "qwen2.5-7b", max_tokens: 2, messages: WRITE, temperature: 0 })).status).toBe(200);
  expect(seen.at(-1)!.max_tokens).toBe(2);
});

it("an honest reasoning answer within the cap, its reasoning sent under two names, is served whole", async () => {
  const before = await used();
  const streamed = await chat({ model: "qwen3-32b", messages: WRITE, max_completion_tokens: 400, stream: true });
  const text = await streamed.text();
  expect(text).not.toContain("upstream_error");
  expect(text).toContain("[DONE]");
  const whole = await chat({ model: "qwen3-32b", messages: WRITE, max_completion_tokens: 400 });
  expect(whole.status).toBe(200);
  const out = (await whole.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
  expect(out.usage.completion_tokens).toBe(400);
  expect((await used()) - before).toBe(2n * (await meter("qwen3-32b", "vllm", out.usage.prompt_tokens, 400)));
});

it("a streamed answer past the cap (an upstream that ignores it) is cut and billed the cap", async () => {
  const before = await used();
  const res = await chat({ model: "llama3.1:8b", messages: WRITE, max_completion_tokens: 1, stream: true });
  expect(res.status).toBe(200);
  expect(res.headers.get("x-output-cap")).toBe("1");
  const text = await res.text();
  const relayed = (text.match(/ w\d+/g) ?? []).length;
  expect(relayed).toBeGreaterThan(0);
  // The bound is 1.5 × the cap + 64 tokens; each word is two tokens.
  expect(relayed).toBeLessThan(40);
  expect(text).toContain('"code":"upstream_error"');
  expect(text).toContain('"receipt"');
  const paid = (await used()) - before;
  const prompt = countPrompt(await tokenCounter(), { messages: WRITE });
  expect(paid).toBeGreaterThan(0n);
  expect(paid).toBeLessThan(await meter("llama3.1:8b", "ollama", prompt, 100));
});

it("an answer not streamed past the cap is not served, and is billed the cap", async () => {
  const before = await used();
  const res = await chat({ model: "llama3.1:8b", messages: WRITE, max_completion_tokens: 1 });
  expect(res.status).toBe(502);
  const body = await res.text();
  expect(body).toContain("upstream_error");
  expect(body).not.toContain(" w100");
  const prompt = countPrompt(await tokenCounter(), { messages: WRITE });
  const paid = (await used()) - before;
  expect(paid).toBeGreaterThan(0n);
  expect(paid).toBeLessThan(await meter("llama3.1:8b", "ollama", prompt, 100));
  // Within the cap (the server reads max_tokens), the answer is served and billed its usage.
  const ok = await chat({ model: "llama3.1:8b", messages: WRITE, max_tokens: 3 });
  expect(ok.status).toBe(200);
  const out = (await ok.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
  expect(out.usage.completion_tokens).toBe(3);
  expect((await used()) - before - paid).toBe(await meter("llama3.1:8b", "ollama", out.usage.prompt_tokens, 3));
});
