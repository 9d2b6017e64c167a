/**
 * The wire shapes of `POST /v1/chat/completions`: OpenAI's chat-completions request, completion
 * and chunk, plus what the gateway adds (the `provider` selector, the `receipt` member). Only the
 * common fields are typed; the request takes any other field and the gateway passes it to the
 * upstream untouched.
 */
import type { Receipt } from "./common.js";

/** A text part of a message's content. */
export interface ChatCompletionContentPartText {
  type: "text";
  text: string;
}

/** An image part of a user message: an `https:` or `data:` URL. */
export interface ChatCompletionContentPartImage {
  type: "image_url";
  image_url: { url: string; detail?: "auto" | "low" | "high" };
}

/** An audio part of a user message: base64 audio. */
export interface ChatCompletionContentPartInputAudio {
  type: "input_audio";
  input_audio: { data: string; format: "wav" | "mp3" };
}

/** A file part of a user message: base64 `file_data` or an uploaded `file_id`. */
export interface ChatCompletionContentPartFile {
  type: "file";
  file: { file_data?: string; file_id?: string; filename?: string };
}

/** One part of a user message's content. */
export type ChatCompletionContentPart =
  ChatCompletionContentPartText | ChatCompletionContentPartImage | ChatCompletionContentPartInputAudio | ChatCompletionContentPartFile;

/** A system message: instructions. */
export interface ChatCompletionSystemMessageParam {
  role: "system";
  content: string | ChatCompletionContentPartText[];
  name?: string;
}

/** A developer message: instructions, the newer name of `system` for reasoning models. */
export interface ChatCompletionDeveloperMessageParam {
  role: "developer";
  content: string | ChatCompletionContentPartText[];
  name?: string;
}

/** A user message: text, or parts (text, images, audio, files). */
export interface ChatCompletionUserMessageParam {
  role: "user";
  content: string | ChatCompletionContentPart[];
  name?: string;
}

/** A tool call the assistant made (in an answer, or replayed in a later request's history). */
export interface ChatCompletionMessageToolCall {
  /** Quote it in the `tool` message that answers the call. */
  id: string;
  type: "function";
  /** `arguments` is JSON text written by the model: parse it, it may be invalid. */
  function: { name: string; arguments: string };
}

/** An earlier assistant turn, replayed in the history: text, or tool calls. */
export interface ChatCompletionAssistantMessageParam {
  role: "assistant";
  content?: string | ChatCompletionContentPartText[] | null;
  tool_calls?: ChatCompletionMessageToolCall[];
  refusal?: string | null;
  name?: string;
}

/** The result of a tool call, answering the assistant's call `tool_call_id`. */
export interface ChatCompletionToolMessageParam {
  role: "tool";
  content: string | ChatCompletionContentPartText[];
  tool_call_id: string;
}

/** A function result (OpenAI's deprecated `functions` API). */
export interface ChatCompletionFunctionMessageParam {
  role: "function";
  content: string | null;
  name: string;
}

/** One message of `messages`; the gateway checks `role` (one of these six) and passes the rest. */
export type ChatCompletionMessageParam =
  | ChatCompletionSystemMessageParam
  | ChatCompletionDeveloperMessageParam
  | ChatCompletionUserMessageParam
  | ChatCompletionAssistantMessageParam
  | ChatCompletionToolMessageParam
  | ChatCompletionFunctionMessageParam;

/** A function the model may call. `parameters` is a JSON Schema object. */
export interface ChatCompletionTool {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

/** Whether and which tool the model calls: `auto` (default with tools), `none`, `required`, or a named function. */
export type ChatCompletionToolChoiceOption = "none" | "auto" | "required" | { type: "function"; function: { name: string } };

/** The answer's format: text, any JSON object, or JSON matching a schema. */
export type ChatCompletionResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null } };

/** Streaming options. */
export interface ChatCompletionStreamOptions {
  /**
   * Asks for the usage-only chunk (`choices: []`, `usage` set) before the end of the stream. The
   * gateway always bills the usage; this only decides whether the chunk reaches you.
   */
  include_usage?: boolean | null;
}

/**
 * The body of `chat.completions.create`: OpenAI's chat-completions request. The common fields are
 * typed; any other field (vendor extensions, newer OpenAI fields) is sent as given, and the gateway
 * passes every field it does not own (`model`, `provider`, `stream`, `stream_options`) to the
 * upstream untouched.
 *
 * Billing: the gateway reserves the prompt plus the output cap (`max_completion_tokens`, else
 * `max_tokens`, else the model's maximum output) for each of the `n` choices, and settles the usage
 * the upstream reports. A key that cannot afford the whole cap gets a lowered one (see
 * {@link OutputCap}); 402 `budget_exhausted` only when not even the prompt and one output token fit.
 */
export interface ChatCompletionCreateParamsBase {
  /** Public catalog model id (e.g. `gpt-4o`). */
  model: string;
  /** Selects the provider for a public id served by several. */
  provider?: string;
  /** The conversation, at least one message. */
  messages: ChatCompletionMessageParam[];
  /** Streams the answer as server-sent chunks (see `ChatCompletionStream`). */
  stream?: boolean | null;
  stream_options?: ChatCompletionStreamOptions | null;
  /** Output cap per choice (1..100000000); the gateway may lower it to what the key affords. */
  max_completion_tokens?: number | null;
  /** Older name of the output cap; some upstreams only know this one. */
  max_tokens?: number | null;
  /** Choices to generate (1..16), each billed. @default 1 */
  n?: number | null;
  tools?: ChatCompletionTool[];
  tool_choice?: ChatCompletionToolChoiceOption;
  parallel_tool_calls?: boolean;
  response_format?: ChatCompletionResponseFormat;
  temperature?: number | null;
  top_p?: number | null;
  stop?: string | string[] | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  logit_bias?: Record<string, number> | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  seed?: number | null;
  /** For reasoning models. */
  reasoning_effort?: "minimal" | "low" | "medium" | "high" | null;
  /** An end-user id for the upstream's abuse monitoring. */
  user?: string;
  metadata?: Record<string, string> | null;
  /** Any other field passes through to the upstream. */
  [field: string]: unknown;
}

/** A request answered as one JSON completion (`stream` absent or false). */
export interface ChatCompletionCreateParamsNonStreaming extends ChatCompletionCreateParamsBase {
  stream?: false | null;
}

/** A request answered as a stream of chunks. */
export interface ChatCompletionCreateParamsStreaming extends ChatCompletionCreateParamsBase {
  stream: true;
}

/** Either kind of request. */
export type ChatCompletionCreateParams = ChatCompletionCreateParamsNonStreaming | ChatCompletionCreateParamsStreaming;

/** Why a choice stopped: done, the output cap, a tool call, a content filter, a (deprecated) function call. */
export type ChatCompletionFinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "function_call";

/** Token counts as the upstream reports them (the gateway's receipt prices these). */
export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number } | null;
  completion_tokens_details?: {
    reasoning_tokens?: number;
    audio_tokens?: number;
    accepted_prediction_tokens?: number;
    rejected_prediction_tokens?: number;
  } | null;
}

/** The assistant's message of a choice: text (`content`), tool calls, or a refusal. */
export interface ChatCompletionMessage {
  role: "assistant";
  content: string | null;
  refusal?: string | null;
  tool_calls?: ChatCompletionMessageToolCall[];
  [field: string]: unknown;
}

/** One choice of a completion. */
export interface ChatCompletionChoice {
  index: number;
  message: ChatCompletionMessage;
  finish_reason: ChatCompletionFinishReason | null;
  logprobs?: unknown;
}

/**
 * A non-streamed answer: OpenAI's `chat.completion` as the upstream sent it, plus the gateway's
 * `receipt` (what the call cost, equal to the `X-Receipt` header).
 */
export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  /** Unix seconds. */
  created: number;
  /** The model as the upstream names it. */
  model: string;
  choices: ChatCompletionChoice[];
  usage?: CompletionUsage;
  system_fingerprint?: string | null;
  service_tier?: string | null;
  receipt: Receipt;
  [field: string]: unknown;
}

/** A piece of a tool call in a chunk: the first piece of call `index` carries `id` and the name, later ones more `arguments` text. */
export interface ChatCompletionChunkToolCall {
  index: number;
  id?: string;
  type?: "function";
  function?: { name?: string; arguments?: string };
}

/** What a chunk adds to a choice's message. */
export interface ChatCompletionChunkDelta {
  role?: "assistant";
  content?: string | null;
  refusal?: string | null;
  tool_calls?: ChatCompletionChunkToolCall[];
  [field: string]: unknown;
}

/** One choice of a chunk. */
export interface ChatCompletionChunkChoice {
  index: number;
  delta: ChatCompletionChunkDelta;
  finish_reason: ChatCompletionFinishReason | null;
  logprobs?: unknown;
}

/**
 * One streamed `chat.completion.chunk`, relayed as the upstream sent it. The usage-only chunk has
 * `choices: []` and `usage` set (only with `stream_options.include_usage`).
 */
export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  /** Unix seconds. */
  created: number;
  model: string;
  choices: ChatCompletionChunkChoice[];
  usage?: CompletionUsage | null;
  system_fingerprint?: string | null;
  [field: string]: unknown;
}
