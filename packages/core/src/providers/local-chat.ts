/**
 * Chat on the offline `local` provider: deterministic answers, no model. Enough to see chat
 * completions, tool calls, streaming and metering work end to end on a fresh `npm start`.
 *
 * - With `tools` (and `tool_choice` not `"none"`) and a user message last: one tool call to the
 *   named tool (`tool_choice.function.name`) or the first one; its arguments fill each required
 *   string property of the tool's JSON schema with the last user text.
 * - Otherwise text: after a tool result, `The tool returned: <result>`; else
 *   `This is the local provider answering offline. You wrote: <last user text>`.
 * - The output stops at the cap (`max_completion_tokens`, else `max_tokens`): `finish_reason`
 *   `"length"` when cut, `"tool_calls"` for a tool call, else `"stop"`. `n` choices, all alike.
 * - Usage: the prompt counted as the gateway counts it (metering/tokens.ts) and the output's tokens.
 * - Streaming: a role chunk, one chunk per word, a finish chunk, then the usage chunk (`choices: []`),
 *   `chunkDelayMs` apart (0: one event-loop turn apart).
 */
import { invalidRequest } from "../errors.js";
import { countPrompt, tokenCounter, type TokenCounter } from "../metering/tokens.js";
import { fnv1a } from "./bytes.js";
import type { ChatCompletionResult, ChatRequest, ChatStreamChunk, ChatUsage } from "./types.js";

type Message = { role?: unknown; content?: unknown };
type Tool = { type?: unknown; function?: { name?: unknown; parameters?: { properties?: Record<string, { type?: unknown }>; required?: unknown } } };

/** The answer to a chat request, before it is shaped as a completion or chunks. */
interface Answer {
  readonly id: string;
  readonly words: string[];
  readonly toolCall?: { id: string; name: string; arguments: string };
  readonly finish: "stop" | "length" | "tool_calls";
  readonly choices: number;
  readonly usage: ChatUsage;
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p) => (p && typeof p === "object" && typeof (p as { text?: unknown }).text === "string" ? (p as { text: string }).text : "")).join(" ")
      : "";

function toolFor(tools: Tool[], choice: unknown): Tool | undefined {
  if (choice === "none" || tools.length === 0) return undefined;
  const named = (choice as { function?: { name?: unknown } } | undefined)?.function?.name;
  return (named && tools.find((t) => t.function?.name === named)) || tools[0];
}

function answer(counter: TokenCounter, body: Record<string, unknown>): Answer {
  const messages = Array.isArray(body.messages) ? (body.messages as Message[]) : [];
  if (messages.length === 0) throw invalidRequest("messages must not be empty", "messages");
  const last = messages[messages.length - 1]!;
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const userText = textOf(lastUser?.content).trim();
  const cap = Number(body.max_completion_tokens ?? body.max_tokens ?? Number.MAX_SAFE_INTEGER);
  const choices = typeof body.n === "number" ? body.n : 1;
  const promptTokens = countPrompt(counter, { messages, extras: [body.tools, body.functions, body.response_format, body.tool_choice] });
  const id = `chatcmpl-local-${fnv1a(JSON.stringify(messages)).toString(16)}`;
  const tools = Array.isArray(body.tools) ? (body.tools as Tool[]) : [];
  const tool = last.role === "user" ? toolFor(tools, body.tool_choice) : undefined;
  if (tool && typeof tool.function?.name === "string") {
    const params = tool.function.parameters;
    const required = Array.isArray(params?.required) ? (params.required as unknown[]) : [];
    const args: Record<string, string> = {};
    for (const name of required) if (typeof name === "string" && params?.properties?.[name]?.type === "string") args[name] = userText;
    const toolCall = { id: `call_${fnv1a(userText, 7).toString(16)}`, name: tool.function.name, arguments: JSON.stringify(args) };
    return { id, words: [], toolCall, finish: "tool_calls", choices, usage: { promptTokens, completionTokens: counter.count(toolCall.name + toolCall.arguments) * choices } };
  }
  const text = last.role === "tool" ? `The tool returned: ${textOf(last.content)}` : `This is the local provider answering offline. You wrote: ${userText}`;
  const words: string[] = [];
  let used = 0;
  let finish: Answer["finish"] = "stop";
  for (const [i, word] of text.split(/\s+/).filter(Boolean).entries()) {
    const piece = i === 0 ? word : ` ${word}`;
    const n = counter.count(piece);
    if (used + n > cap) {
      finish = "length";
      break;
    }
    used += n;
    words.push(piece);
  }
  return { id, words, finish, choices, usage: { promptTokens, completionTokens: used * choices } };
}

const usageJson = (u: ChatUsage) => ({ prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.promptTokens + u.completionTokens });
const encoder = new TextEncoder();
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Rejects with the signal's reason once it is aborted. */
function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason;
}

/** The local provider's `chat`. */
export async function localChat(req: ChatRequest, created: number): Promise<ChatCompletionResult> {
  checkSignal(req.signal);
  const a = answer(await tokenCounter(), req.body);
  const content = a.words.join("");
  const message = a.toolCall
    ? { role: "assistant", content: null, tool_calls: [{ id: a.toolCall.id, type: "function", function: { name: a.toolCall.name, arguments: a.toolCall.arguments } }] }
    : { role: "assistant", content };
  const completion = {
    id: a.id,
    object: "chat.completion",
    created,
    model: String(req.body.model),
    choices: range(a.choices).map((index) => ({ index, message, finish_reason: a.finish, logprobs: null })),
    usage: usageJson(a.usage),
  };
  const outputText = (a.toolCall ? a.toolCall.name + a.toolCall.arguments : content).repeat(a.choices);
  return { raw: encoder.encode(JSON.stringify(completion)), usage: a.usage, outputText };
}

/** The local provider's `chatStream`. */
export async function localChatStream(req: ChatRequest, created: number, chunkDelayMs: number): Promise<AsyncIterable<ChatStreamChunk>> {
  checkSignal(req.signal);
  const a = answer(await tokenCounter(), req.body);
  const model = String(req.body.model);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ id: a.id, object: "chat.completion.chunk", created, model, choices, ...extra });
  const all = (delta: Record<string, unknown>, finish: string | null = null) => range(a.choices).map((index) => ({ index, delta, finish_reason: finish }));
  const signal = req.signal;
  async function* events(): AsyncGenerator<ChatStreamChunk> {
    const pause = () => new Promise<void>((resolve) => (chunkDelayMs > 0 ? setTimeout(resolve, chunkDelayMs) : setImmediate(resolve)));
    yield { data: chunk(all({ role: "assistant", content: "" })), outputText: "", empty: false };
    if (a.toolCall) {
      const call = { index: 0, id: a.toolCall.id, type: "function", function: { name: a.toolCall.name, arguments: a.toolCall.arguments } };
      yield { data: chunk(all({ tool_calls: [call] })), outputText: (a.toolCall.name + a.toolCall.arguments).repeat(a.choices), empty: false };
    }
    for (const word of a.words) {
      await pause();
      checkSignal(signal);
      yield { data: chunk(all({ content: word })), outputText: word.repeat(a.choices), empty: false };
    }
    yield { data: chunk(all({}, a.finish)), outputText: "", empty: false };
    yield { data: chunk([], { usage: usageJson(a.usage) }), outputText: "", usage: a.usage, empty: true };
  }
  return events();
}
