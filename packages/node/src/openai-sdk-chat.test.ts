/**
 * Chat completions with the official OpenAI npm SDK against the gateway on a real port, on a real
 * SQLite file: non-streamed, streamed (the receipt chunk rides along as one more chunk the SDK
 * yields), a tool-call round trip, the SDK's own `stream()` helper, and a stream the client aborts
 * after a few chunks. Upstreams: the offline `local` provider and a local OpenAI-compatible stub
 * server. After every call the key's `budgetUsed` grew by exactly the receipt and nothing is reserved.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countOutput, countPrompt, createGateway, quoteChat, tokenCounter, type Gateway, type GatewayServices } from "@tollgate/core";
import { startChatStub, STUB_USAGE, STUB_WORDS, type ChatStub } from "@tollgate/testing";
import { createSqliteStore } from "@tollgate/sqlite";
import { serve, type RunningServer } from "./server.js";

const OWNER = "0x00000000000000000000000000000000000000c4";
const INTERNAL_SECRET = "openai-sdk-chat-test-internal-secret";
const dir = mkdtempSync(join(tmpdir(), "tollgate-chat-sdk-"));
let running: RunningServer;
let stub: ChatStub;
let key: { keyId: string; token: string };
let local: OpenAI;
let stubbed: OpenAI;
let used = 0n;

type Receipt = { finalAmountWei: string; subject: string; paymentIntentId: string };
const headerReceipt = (headers: Headers): Receipt => JSON.parse(Buffer.from(headers.get("x-receipt") ?? "", "base64url").toString("utf8"));

/** Asserts the key paid exactly `receipt` since the last call and holds no reservation. */
let gateway: Gateway<GatewayServices>;

async function expectPaid(receipt: Receipt): Promise<void> {
  const res = await fetch(`${running.url}/api/keys/${key.keyId}`, { headers: { authorization: `Bearer ${key.token}` } });
  const view = (await res.json()) as { budgetUsed: string; budgetReserved: string };
  used += BigInt(receipt.finalAmountWei);
  expect(BigInt(receipt.finalAmountWei)).toBeGreaterThan(0n);
  expect(view).toMatchObject({ budgetUsed: used.toString(), budgetReserved: "0" });
}

beforeAll(async () => {
  stub = await startChatStub();
  gateway = createGateway({
    store: createSqliteStore({ filename: join(dir, "chat.db") }),
    sweepIntervalMs: 0,
    internalSecret: INTERNAL_SECRET,
    media: { providers: { stub: { type: "openai-compatible", baseUrl: `${stub.url}/tool`, apiKey: "sk-stub" }, stall: { type: "openai-compatible", baseUrl: `${stub.url}/stall-3`, timeoutMs: 400 }, slow: { type: "openai-compatible", baseUrl: `${stub.url}/slow-600` } }, routing: { anthropic: "stub", google: "stall", groq: "slow" } },
  });
  running = await serve(gateway, { port: 0 });
  const res = await fetch(`${running.url}/api/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-session-user-address": OWNER, "x-internal-secret": INTERNAL_SECRET },
    body: JSON.stringify({ budgetLimit: "100000000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" }),
  });
  expect(res.status).toBe(201);
  key = (await res.json()) as typeof key;
  local = new OpenAI({ apiKey: key.token, baseURL: `${running.url}/v1`, maxRetries: 0, timeout: 10_000 });
  stubbed = local;
});

afterAll(async () => {
  await running?.close({ graceMs: 100 });
  await stub?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the OpenAI SDK: chat completions", () => {
  it("chat.completions.create, not streamed: the answer, its usage, and a receipt in the body and X-Receipt", async () => {
    const { data, response } = await local.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi there" }] }).withResponse();
    expect(data.choices[0]!.message.content).toBe("This is the local provider answering offline. You wrote: Hi there");
    expect(data.usage!.prompt_tokens).toBe(countPrompt(await tokenCounter(), { messages: [{ role: "user", content: "Hi there" }] }));
    const receipt = headerReceipt(response.headers);
    expect((data as unknown as { receipt: Receipt }).receipt).toEqual(receipt);
    expect(receipt.subject).toBe("openai:gpt-4o-mini");
    await expectPaid(receipt);
  });

  it("stream: true: the SDK yields every chunk; the last one carries the receipt", async () => {
    const stream = await local.chat.completions.create({ model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: "stream please" }] });
    let text = "";
    let receipt: Receipt | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      receipt ??= (chunk as unknown as { receipt?: Receipt }).receipt;
    }
    expect(text).toBe("This is the local provider answering offline. You wrote: stream please");
    expect(receipt!.subject).toBe("openai:gpt-4o-mini");
    await expectPaid(receipt!);
  });

  it("a tool call round trip: the model calls the tool, the tool's answer comes back as text", async () => {
    const tools = [{ type: "function" as const, function: { name: "lookup", parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } } }];
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "find tollgate" }];
    const first = await local.chat.completions.create({ model: "gpt-4o-mini", messages, tools }).withResponse();
    const call = first.data.choices[0]!.message.tool_calls![0]!;
    expect(first.data.choices[0]!.finish_reason).toBe("tool_calls");
    expect(call.type === "function" && [call.function.name, JSON.parse(call.function.arguments)]).toEqual(["lookup", { query: "find tollgate" }]);
    await expectPaid(headerReceipt(first.response.headers));
    messages.push(first.data.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "42 results" });
    const second = await local.chat.completions.create({ model: "gpt-4o-mini", messages, tools }).withResponse();
    expect(second.data.choices[0]!.message.content).toBe("The tool returned: 42 results");
    await expectPaid(headerReceipt(second.response.headers));
  });

  it("a streamed tool call from an OpenAI-compatible upstream, through the SDK's stream() helper", async () => {
    const tools = [{ type: "function" as const, function: { name: "weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
    const runner = stubbed.chat.completions.stream({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "weather?" }], tools });
    let receipt: Receipt | undefined;
    runner.on("chunk", (chunk) => (receipt ??= (chunk as unknown as { receipt?: Receipt }).receipt));
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" && [call.function.name, call.function.arguments]).toEqual(["weather", '{"city":"Paris"}']);
    expect(receipt!.subject).toBe("anthropic:claude-sonnet-4-5");
    expect(stub.bodies.at(-1)).toMatchObject({ model: "claude-sonnet-4-5", stream: true, stream_options: { include_usage: true }, tools });
    await expectPaid(receipt!);
  });

  // The gateway reads on after the client leaves (for the upstream's usage); this upstream stalls, so its idle deadline ends the read.
  it("a client that aborts after 3 chunks of an upstream that then stalls pays the prompt (at its bound: Gemini counts with its own tokenizer) and the words it received, to the atom", async () => {
    const messages = [{ role: "user" as const, content: "count for me" }];
    const stream = await stubbed.chat.completions.create({ model: "gemini-2.5-pro", stream: true, messages });
    const closed = stub.closedStalls();
    let chunks = 0;
    for await (const _chunk of stream) if (++chunks === 4) break; // the role chunk and 3 words
    await closed;
    const counter = await tokenCounter();
    const meter = await fetch(`${running.url}/api/payments/meter/model`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ modelId: "gemini-2.5-pro", provider: "google", modality: "text", usage: { promptTokens: quoteChat(gateway.services.catalog.get("gemini-2.5-pro")!, counter, { messages, extras: [] }, 0).promptBound, completionTokens: countOutput(counter, STUB_WORDS.slice(0, 3).join(""), true) } }),
    });
    const expected = ((await meter.json()) as { finalAmountWei: string }).finalAmountWei;
    for (let i = 0; i < 200; i++) {
      const view = (await (await fetch(`${running.url}/api/keys/${key.keyId}`, { headers: { authorization: `Bearer ${key.token}` } })).json()) as { budgetReserved: string };
      if (view.budgetReserved === "0") break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await expectPaid({ finalAmountWei: expected, subject: "google:gemini-2.5-pro", paymentIntentId: "" });
  });

  it("a reasoning model whose client hangs up before the first byte: the upstream still answers, and the key pays its usage", async () => {
    // gpt-oss thinks in tokens it never streams (its card takes reasoning_effort); the stub answers after 600 ms.
    const model = "openai/gpt-oss-20b";
    const abort = new AbortController();
    const call = fetch(`${running.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key.token}` },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "think first" }], stream: true }),
      signal: abort.signal,
    });
    setTimeout(() => abort.abort(), 200);
    await call.catch(() => undefined);
    let view = { budgetUsed: "", budgetReserved: "" };
    for (let i = 0; i < 300; i++) {
      view = (await (await fetch(`${running.url}/api/keys/${key.keyId}`, { headers: { authorization: `Bearer ${key.token}` } })).json()) as typeof view;
      if (view.budgetReserved === "0" && BigInt(view.budgetUsed) > used) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const meter = await fetch(`${running.url}/api/payments/meter/model`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ modelId: model, provider: "groq", modality: "text", usage: { promptTokens: STUB_USAGE.prompt_tokens, completionTokens: STUB_USAGE.completion_tokens } }),
    });
    await expectPaid({ finalAmountWei: ((await meter.json()) as { finalAmountWei: string }).finalAmountWei, subject: `groq:${model}`, paymentIntentId: "" });
  });

  it("a budget too small for the prompt: the SDK raises a 402 with the gateway's error code", async () => {
    const res = await fetch(`${running.url}/api/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-session-user-address": OWNER, "x-internal-secret": INTERNAL_SECRET },
      body: JSON.stringify({ budgetLimit: "1", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" }),
    });
    const poor = (await res.json()) as { token: string };
    const client = new OpenAI({ apiKey: poor.token, baseURL: `${running.url}/v1`, maxRetries: 0 });
    const error = await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect([(error as InstanceType<typeof OpenAI.APIError>).status, (error as InstanceType<typeof OpenAI.APIError>).code]).toEqual([402, "budget_exhausted"]);
  });
});
