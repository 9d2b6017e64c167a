/**
 * Chat completions of the OpenAI-compatible provider: `POST /chat/completions`, plain (the
 * answer's bytes forwarded as they are, only `usage` and the output text read) and streamed
 * (server-sent `data:` events parsed with eventsource-parser, each forwarded unchanged).
 */
import { createParser } from "eventsource-parser";
import { releasingIterable } from "../http/client.js";
import type { HttpClientResponse } from "../http/client.js";
import { countOf } from "./pass-through.js";
import { errorMessageOf } from "./openai-transport.js";
import type { OpenAITransport, OutputCapField } from "./openai-transport.js";
import type { ChatCompletionResult, ChatRequest, ChatStreamChunk, ChatUsage } from "./types.js";

/**
 * Largest event the stream parser buffers, in characters (a chunk carrying inline image data can
 * be megabytes); beyond it the stream fails with 502 instead of growing without bound.
 */
export const MAX_CHAT_EVENT_CHARS = 16 * 1024 * 1024;

/** After `[DONE]`, how many more body chunks are read (normally none arrive) so the connection can be reused before it is cut. */
const DRAIN_CHUNKS = 4;

const chatPath = "/chat/completions";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * `chat` and `chatStream` over a provider's transport (see `InferenceProvider` for the contract).
 * - `chat`: sends `req.body` with `stream: false`; answers the upstream's bytes unchanged, its
 *   `usage` and the output text. An answer that is not JSON, or not an object with a `choices`
 *   array → 502 `upstream_error` with `details.upstreamStatus`.
 * - `chatStream`: sends `req.body` with `stream: true` and `stream_options.include_usage: true`
 *   (other `stream_options` members kept), `accept: text/event-stream`, under the provider's
 *   `timeoutMs` as the header and idle deadline. Resolves on 2xx headers; a non-2xx answer
 *   rejects as `chat` does. Iteration yields each `data:` event (events with empty data are
 *   skipped) until `[DONE]` or the end of the body; it throws 502 on an event that is not a JSON
 *   object, on an object with a non-null `error` member (`details.upstreamMessage` its message,
 *   API key scrubbed) and on an event over {@link MAX_CHAT_EVENT_CHARS}; 502/504/the abort reason
 *   as the HTTP client reports a broken connection, an idle gap or an abort. Leaving the loop
 *   early, or any throw, cancels the upstream body; after `[DONE]` the rest of the body is read
 *   in the background so the connection can go back to the pool.
 * Usage (both): `prompt_tokens` and `completion_tokens` must be non-negative integers, else the
 * usage is undefined; `cached_tokens` / `reasoning_tokens` from their `_details` objects when
 * they are. Output text (both): over every choice, the content (a string, or the `text`/`refusal`
 * of its parts), `refusal`, and the `function.name` + `function.arguments` of each tool call (and
 * of a legacy `function_call`).
 */
export function createOpenAIChat(
  t: OpenAITransport,
  capField?: OutputCapField,
): {
  chat(req: ChatRequest): Promise<ChatCompletionResult>;
  chatStream(req: ChatRequest): Promise<AsyncIterable<ChatStreamChunk>>;
} {
  const bodyOf = (req: ChatRequest) => (capField === undefined ? req.body : capIn(req.body, capField));
  return {
    async chat(req) {
      const res = await t.send("POST", chatPath, { json: Object.assign({}, bodyOf(req), { stream: false }) }, req.signal);
      const raw = await t.read(() => res.bytes(), req.signal);
      let value: unknown;
      try {
        value = JSON.parse(new TextDecoder().decode(raw));
      } catch {
        throw t.fail(`${t.host} answered malformed JSON`, { upstreamStatus: res.status });
      }
      if (!isObject(value) || !Array.isArray(value.choices)) {
        throw t.fail(`${t.host} answered an unexpected shape (choices: expected an array)`, { upstreamStatus: res.status });
      }
      const usage = chatUsageOf(value.usage);
      return { raw, outputText: outputTextOf(value.choices, "message"), ...(usage ? { usage } : {}) };
    },

    async chatStream(req) {
      const streamOptions = isObject(req.body.stream_options) ? req.body.stream_options : {};
      const json = Object.assign({}, bodyOf(req), { stream: true, stream_options: Object.assign({}, streamOptions, { include_usage: true }) });
      const res = await t.send("POST", chatPath, { json }, req.signal, true);
      return chatEvents(t, res, req.signal);
    },
  };
}

/** `body` with its output cap (`max_completion_tokens`, else `max_tokens`) in `field` only. */
export function capIn(body: Json, field: OutputCapField): Json {
  const cap = body.max_completion_tokens ?? body.max_tokens;
  const out = Object.assign({}, body);
  delete out.max_tokens;
  delete out.max_completion_tokens;
  if (cap != null) out[field] = cap;
  return out;
}

/** The events of a streamed answer as {@link ChatStreamChunk}s (see {@link createOpenAIChat}). */
function chatEvents(t: OpenAITransport, res: HttpClientResponse, signal: AbortSignal | undefined): AsyncIterableIterator<ChatStreamChunk> {
  // A client without chunks() (see HttpClientResponse) still works: the body arrives as one chunk.
  const body = (res.chunks?.() ?? wholeBody(res))[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  const events: string[] = [];
  let overflow = false;
  const parser = createParser({
    maxBufferSize: MAX_CHAT_EVENT_CHARS,
    onEvent: (event) => void events.push(event.data),
    onError: (error) => {
      if (error.type === "max-buffer-size-exceeded") overflow = true;
    },
  });
  let ended = false;
  const feed = (text: string) => {
    if (!overflow) parser.feed(text);
    if (overflow) throw t.fail(`${t.host} sent a stream event over ${MAX_CHAT_EVENT_CHARS} characters`);
  };

  return releasingIterable<ChatStreamChunk>(
    async () => {
      for (;;) {
        const data = events.shift();
        if (data === "[DONE]") return { done: true, value: undefined };
        if (data !== undefined) {
          if (data.trim() === "") continue;
          return { done: false, value: toChunk(t, data) };
        }
        if (ended) return { done: true, value: undefined };
        let next: IteratorResult<Uint8Array>;
        try {
          next = await body.next();
        } catch (error) {
          throw t.rethrow(error, signal);
        }
        if (next.done) {
          ended = true;
          feed(decoder.decode());
        } else {
          feed(decoder.decode(next.value, { stream: true }));
        }
      }
    },
    (completed) => {
      if (completed) void drain(body);
      else void body.return?.().catch(() => undefined);
    },
  );
}

/** One `data:` text as a chunk; 502 when it is not a JSON object or is an upstream error event. */
function toChunk(t: OpenAITransport, data: string): ChatStreamChunk {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw t.fail(`${t.host} sent a stream event that is not JSON`);
  }
  if (!isObject(value)) throw t.fail(`${t.host} sent a stream event that is not a JSON object`);
  if (value.error !== undefined && value.error !== null) {
    const message = errorMessageOf(value);
    throw t.fail(`${t.host} sent an error event mid-stream`, message ? { upstreamMessage: t.scrub(message) } : undefined);
  }
  const usage = chatUsageOf(value.usage);
  return {
    data,
    outputText: outputTextOf(value.choices, "delta"),
    ...(usage ? { usage } : {}),
    empty: !Array.isArray(value.choices) || value.choices.length === 0,
  };
}

/** Reads what follows `[DONE]` (normally just the end of the body) so the socket is reused; cuts it after {@link DRAIN_CHUNKS}. */
async function drain(body: AsyncIterator<Uint8Array>): Promise<void> {
  try {
    for (let i = 0; i < DRAIN_CHUNKS; i++) if ((await body.next()).done) return;
    await body.return?.();
  } catch {
    // The body failed or timed out after [DONE]: the client has released it; nothing is lost.
  }
}

async function* wholeBody(res: HttpClientResponse): AsyncGenerator<Uint8Array> {
  yield await res.bytes();
}

/**
 * OpenAI's chat `usage` object as {@link ChatUsage}; undefined unless `prompt_tokens` and
 * `completion_tokens` are non-negative integers.
 */
export function chatUsageOf(usage: unknown): ChatUsage | undefined {
  if (!isObject(usage)) return undefined;
  const promptTokens = countOf(usage, "prompt_tokens");
  const completionTokens = countOf(usage, "completion_tokens");
  if (promptTokens === undefined || completionTokens === undefined) return undefined;
  const cached = isObject(usage.prompt_tokens_details) ? countOf(usage.prompt_tokens_details, "cached_tokens") : undefined;
  const reasoning = isObject(usage.completion_tokens_details) ? countOf(usage.completion_tokens_details, "reasoning_tokens") : undefined;
  const total = countOf(usage, "total_tokens");
  return {
    promptTokens,
    // OpenAI's completion tokens include the reasoning ones. Gemini reports its thoughts apart, and
    // adapters that map them only to `reasoning_tokens` (or leave them out but in `total_tokens`)
    // under-report what the vendor bills as output: the larger reading wins.
    completionTokens: Math.max(completionTokens, reasoning ?? 0, total === undefined ? 0 : total - promptTokens),
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
  };
}

/**
 * The output text of a chat answer's `choices` (`key` `"message"`) or of a stream chunk's
 * (`"delta"`): content (a string, or every string of each part but its `type` tag: `text`,
 * `refusal`, Mistral's `thinking` parts with their nested text; media parts are left out), refusal, reasoning, the name and
 * arguments of each `function` tool call and the name and input of each `custom` one, and a legacy
 * `function_call`, concatenated in choice order. What this misses is served unbilled whenever the
 * upstream reports no usage (a stream cut before it), so it reads every kind a model may emit.
 */
export function outputTextOf(choices: unknown, key: "message" | "delta"): string {
  if (!Array.isArray(choices)) return "";
  let out = "";
  for (const choice of choices) {
    const m = isObject(choice) ? choice[key] : undefined;
    if (!isObject(m)) continue;
    if (Array.isArray(m.content)) {
      for (const part of m.content) if (isObject(part) && !MEDIA_PARTS.has(str(part.type))) out += stringsOf(part, 0);
    } else {
      out += str(m.content);
    }
    // Reasoning some servers stream beside the content (DeepSeek's `reasoning_content`, OpenRouter's
    // `reasoning`); a server that sends both carries the same text twice, counted once.
    const reasoning = str(m.reasoning_content);
    const alias = str(m.reasoning);
    out += str(m.refusal) + (alias.length > reasoning.length ? alias : reasoning);
    if (Array.isArray(m.tool_calls))
      for (const call of m.tool_calls) if (isObject(call)) out += callText(call.function, "arguments") + callText(call.custom, "input");
    out += callText(m.function_call, "arguments");
  }
  return out;
}

/** A tool call's name and its `arguments` (a function) or `input` (a custom tool). */
const callText = (f: unknown, payload: "arguments" | "input"): string => (isObject(f) ? str(f.name) + str(f[payload]) : "");

/** Content parts that carry media (a URL or base64 data), not text: not counted as tokens. */
const MEDIA_PARTS = new Set(["image_url", "input_image", "image", "audio", "input_audio", "file"]);

/** The deepest content part nesting read; an upstream's parts nest two or three levels. */
const MAX_PART_DEPTH = 8;

/** Every string in `value` but `type` tags, depth first. */
function stringsOf(value: unknown, depth: number): string {
  if (typeof value === "string") return value;
  if (depth > MAX_PART_DEPTH || typeof value !== "object" || value === null) return "";
  let out = "";
  if (Array.isArray(value)) for (const v of value) out += stringsOf(v, depth + 1);
  else for (const [k, v] of Object.entries(value)) if (k !== "type") out += stringsOf(v, depth + 1);
  return out;
}
