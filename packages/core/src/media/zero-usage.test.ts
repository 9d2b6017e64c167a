/**
 * An upstream that reports a usage of 0 (some self-hosted servers do) is not believed where the
 * gateway saw tokens: embeddings are billed the inputs as counted, chat the prompt and output as
 * counted. A real HTTP upstream, keys on the memory store.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway } from "../gateway.js";
import type { Gateway } from "../gateway-types.js";
import type { GatewayServices } from "../services.js";
import { createMemoryStore } from "../store/memory.js";
import { countPrompt, tokenCounter } from "../metering/tokens.js";
import { priceUsage } from "../metering/usage.js";
import { priceChat } from "../chat/quote.js";

const SECRET = "zero-usage-s3cret-s3cret";
const OWNER = "0x00000000000000000000000000000000000000a1";
const ANSWER = "Counted by the gateway, since the upstream said zero.";
const ZERO = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

let upstream: http.Server;
let gateway: Gateway<GatewayServices>;
let token: string;

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString("utf8")));
    req.on("end", () => {
      const body = JSON.parse(text) as { stream?: boolean; input?: string[] };
      if (req.url === "/embeddings") {
        const data = (body.input ?? []).map((_, index) => ({ object: "embedding", index, embedding: [0.1, 0.2] }));
        return void res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ object: "list", data, usage: { prompt_tokens: 0, total_tokens: 0 } }));
      }
      if (!body.stream) {
        const choices = [{ index: 0, message: { role: "assistant", content: ANSWER }, finish_reason: "stop" }];
        return void res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ id: "c", object: "chat.completion", choices, usage: ZERO }));
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: ANSWER } }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [], usage: ZERO })}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gateway = createGateway({
    store: createMemoryStore(),
    sweepIntervalMs: 0,
    internalSecret: SECRET,
    media: { providers: { openai: { type: "openai-compatible", baseUrl } } },
  });
  const key = await call(
    "POST",
    "/api/keys",
    { budgetLimit: "100000000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" },
    { "x-session-user-address": OWNER, "x-internal-secret": SECRET },
  );
  token = (await key.json()).token;
});
afterAll(async () => {
  await gateway?.close();
  await new Promise((r) => upstream?.close(r));
});

async function call(method: string, path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${token}` }): Promise<Response> {
  return gateway.fetch(
    new Request(`http://gw.test${path}`, { method, headers: Object.assign({ "content-type": "application/json" }, headers), body: JSON.stringify(body) }),
  );
}

describe("a usage of 0 from the upstream", () => {
  it("embeddings: the inputs are billed as the gateway counts them", async () => {
    const input = ["a sentence of several tokens to embed", "and another one, a little longer than the first"];
    // Once the tokenizer is loaded (the first call after start falls back to the byte bound, never less).
    const counter = await tokenCounter();
    const res = await call("POST", "/v1/embeddings", { model: "text-embedding-3-small", input });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    const tokens = input.reduce((n, s) => n + counter.count(s), 0);
    expect(tokens).toBeGreaterThan(10);
    const card = gateway.services.catalog.get("text-embedding-3-small");
    expect(body.receipt.finalAmountWei).toBe(priceUsage(card, { promptTokens: tokens }, undefined, gateway.services.feeBps).finalAmount.toString());
  });

  it("chat, streamed and not: the prompt and the output as counted", async () => {
    const messages = [{ role: "user", content: "Say something the gateway can count." }];
    const counter = await tokenCounter();
    const card = gateway.services.catalog.get("gpt-4o-mini");
    const expected = priceChat(
      card,
      { promptTokens: countPrompt(counter, { messages }), completionTokens: counter.count(ANSWER) },
      gateway.services.feeBps,
    ).finalAmount.toString();
    const plain = await call("POST", "/v1/chat/completions", { model: "gpt-4o-mini", messages });
    const body = (await plain.json()) as any;
    expect(plain.status, JSON.stringify(body)).toBe(200);
    expect(body.receipt.finalAmountWei).toBe(expected);
    const streamed = await call("POST", "/v1/chat/completions", { model: "gpt-4o-mini", messages, stream: true });
    const events = (await streamed.text()).split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(JSON.parse(events.at(-2)!.slice("data: ".length)).receipt.finalAmountWei).toBe(expected);
  });
});
