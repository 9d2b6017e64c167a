/** Helpers of the chat route suites: posting chat requests, reading SSE answers, expected prices. */
import { expect } from "vitest";
import { countPrompt, tokenCounter } from "@tollgate/core";
import { bearer, type Harness } from "./gateway-suite-fixtures.js";
import { headerReceipt } from "./gateway-suite-media-helpers.js";

/** The chat model the suites bill (priced high enough that every token shows in atoms). */
export const CHAT_MODEL = "gpt-4o";
/** A chat model whose card takes `reasoning_effort`: it thinks in tokens it never streams. */
export const REASONING_MODEL = "o4-mini";
export const HELLO = [{ role: "user", content: "Say hello to the metered world." }];

/** POST /v1/chat/completions through `gateway.fetch`. */
export function postChat(h: Harness, body: Record<string, unknown>, init: { token?: string; signal?: AbortSignal } = {}): Promise<Response> {
  return h.gateway.fetch(
    new Request("http://gateway.test/v1/chat/completions", {
      method: "POST",
      headers: { ...(init.token ? bearer(init.token) : {}), "content-type": "application/json" },
      body: JSON.stringify(body),
      ...(init.signal ? { signal: init.signal } : {}),
    }),
  );
}

/** A streamed answer read to its end: each `data:` payload, in order. */
export async function readEvents(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((f) => f.trim() !== "")
    .map((f) =>
      f
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n"),
    );
}

/** The receipt chunk of a stream (the event before `[DONE]`, or the one before an error). */
export function streamReceipt(events: string[]): any {
  const found = events.map((e) => (e === "[DONE]" ? undefined : JSON.parse(e))).filter((e) => e?.receipt);
  expect(found, "one receipt chunk").toHaveLength(1);
  expect(found[0].choices).toEqual([]);
  expect(found[0].object).toBe("chat.completion.chunk");
  return found[0].receipt;
}

/** What `POST /api/payments/meter/model` prices a usage at: the exact amount a receipt must show. */
export async function meterChat(
  h: Harness,
  usage: { promptTokens: number; completionTokens: number },
  model = CHAT_MODEL,
  provider = "openai",
): Promise<string> {
  const r = await h.call("POST", "/api/payments/meter/model", { body: { modelId: model, provider, modality: "text", usage } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.finalAmountWei;
}

/** The prompt tokens the gateway counts for `messages` (what is billed when the upstream reports no usage). */
export async function promptCount(messages: unknown[], extras: unknown[] = []): Promise<number> {
  return countPrompt(await tokenCounter(), { messages, extras });
}

/** The tokens of a text, as the gateway counts delivered output. */
export async function textCount(text: string): Promise<number> {
  return (await tokenCounter()).count(text);
}

/** The key's used and reserved budget. */
export async function spent(h: Harness, key: { keyId: string; token: string }): Promise<{ used: string; reserved: string }> {
  const view = await h.inspect(key.token, key.keyId);
  return { used: view.budgetUsed, reserved: view.budgetReserved };
}

/** Waits until the key holds no reservation (a stream cut by its client is billed as it unwinds). */
export async function settledKey(h: Harness, key: { keyId: string; token: string }): Promise<{ used: string; reserved: string }> {
  for (let i = 0; i < 200; i++) {
    const s = await spent(h, key);
    if (s.reserved === "0") return s;
    await new Promise((r) => setTimeout(r, 10));
  }
  return spent(h, key);
}

/** The receipt of a non-streamed answer: the body's `receipt`, equal to the `X-Receipt` header. */
export function bodyReceipt(res: Response, body: any): any {
  expect(headerReceipt({ status: res.status, headers: res.headers, body })).toEqual(body.receipt);
  return body.receipt;
}
