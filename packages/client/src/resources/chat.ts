/**
 * `client.chat.completions`: OpenAI's chat completions (`POST /v1/chat/completions`), streamed or
 * not, billed per token to the client's service key or paid with an x402 `paymentSignature`
 * (docs/chat.md).
 */
import type { APIPromise } from "../api-promise.js";
import { ChatCompletionStream } from "../chat-stream.js";
import type { Caller } from "../http/caller.js";
import type { PaidRequestOptions } from "../options.js";
import type { ChatCompletion, ChatCompletionCreateParams, ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from "../types/chat.js";
import { paidOptions, paidPost } from "./media.js";

/** The `client.chat.completions` group. */
export interface ChatCompletionsResource {
  /**
   * A chat completion, answered as one JSON body: OpenAI's `chat.completion` with the gateway's
   * `receipt`. `.withResponse()` gives the metadata too: `meta.receipt` (`X-Receipt`, equal to the
   * body's), `meta.paymentIntentId`, `meta.outputCap` (the cap the upstream was sent, and
   * `reason: "budget"` when the key could not afford the requested one) and `meta.budget` (the
   * key's budget after the call). Errors are the client's typed errors: 402 `budget_exhausted`
   * (not even the prompt and one output token fit) or `payment_required` (no credential), 400
   * `invalid_request`, 404 `model_not_found`, 502 `upstream_error` (nothing charged)… Sent once
   * unless the gateway answers 408, 429 or 503 (a paid call is never repeated after it may have
   * gone through).
   */
  create(params: ChatCompletionCreateParamsNonStreaming, options?: PaidRequestOptions): APIPromise<ChatCompletion>;
  /**
   * A streamed chat completion (`stream: true`): a {@link ChatCompletionStream}, an AsyncIterable
   * of `chat.completion.chunk`s whose request starts with the loop; the receipt is
   * `stream.receipt` once the loop ended. `timeoutMs` bounds the wait for the stream's headers
   * only; `signal`, `break` or `stream.abort()` cancel the request.
   */
  create(params: ChatCompletionCreateParamsStreaming, options?: PaidRequestOptions): ChatCompletionStream;
  /** Either, as `params.stream` says (`true`: a stream; else a completion). */
  create(params: ChatCompletionCreateParams, options?: PaidRequestOptions): APIPromise<ChatCompletion> | ChatCompletionStream;
}

/** The `client.chat` group. */
export interface ChatResource {
  /** Chat completions. */
  readonly completions: ChatCompletionsResource;
}

/** Builds `client.chat`. */
export function chatResource(caller: Caller): ChatResource {
  const path = "/v1/chat/completions";
  function create(params: ChatCompletionCreateParamsNonStreaming, options?: PaidRequestOptions): APIPromise<ChatCompletion>;
  function create(params: ChatCompletionCreateParamsStreaming, options?: PaidRequestOptions): ChatCompletionStream;
  function create(params: ChatCompletionCreateParams, options?: PaidRequestOptions): APIPromise<ChatCompletion> | ChatCompletionStream;
  function create(params: ChatCompletionCreateParams, options?: PaidRequestOptions): APIPromise<ChatCompletion> | ChatCompletionStream {
    if (params?.stream === true) return new ChatCompletionStream(() => caller.open(paidPost(path, params), paidOptions(options)));
    return caller.call<ChatCompletion>(paidPost(path, params), paidOptions(options));
  }
  return { completions: { create } };
}
