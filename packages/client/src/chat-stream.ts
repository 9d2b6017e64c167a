/**
 * A streamed chat completion as an AsyncIterable of `chat.completion.chunk`s. The gateway's
 * stream (SSE, parsed with eventsource-parser): the upstream's chunks relayed as they come, the
 * usage-only chunk when `stream_options.include_usage` asked for it, then one more chunk with
 * `choices: []` and a `receipt` member, then `data: [DONE]`. When the upstream fails mid-stream,
 * the receipt chunk (if anything was billed) is followed by a `data: {"error":{…}}` event and the
 * stream ends without `[DONE]`.
 */
import type { EventSourceMessage } from "eventsource-parser";
import { ERROR_CLASSES, TollgateError } from "./errors.js";
import type { ResponseMeta } from "./http/meta.js";
import type { OpenStream } from "./http/request.js";
import { sseMessages } from "./sse.js";
import type { ChatCompletionChunk, CompletionUsage } from "./types/chat.js";
import type { OutputCap, Receipt } from "./types/common.js";

/**
 * The HTTP status the gateway answers each error code with, for the codes an error event can
 * carry once the stream has started (the answer itself was a 200).
 */
const STREAM_ERROR_STATUS: Readonly<Record<string, number>> = {
  upstream_error: 502,
  upstream_timeout: 504,
  internal_error: 500,
  not_configured: 503,
  overloaded: 503,
  rate_limited: 429,
  invalid_request: 400,
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/**
 * The error of an in-stream `{"error":{code,message,type,requestId,details?}}` event: the class
 * and `status` of the code as the gateway would have answered it before the stream started
 * (`upstream_error` → `BadGatewayError` 502, `upstream_timeout` → `GatewayTimeoutError` 504, …;
 * an unknown code → a plain `TollgateError` without status). `headers` are the stream's.
 */
export function streamErrorOf(envelope: Record<string, unknown>, meta: ResponseMeta, body: unknown): TollgateError {
  const code = str(envelope["code"]);
  const status = code === undefined ? undefined : STREAM_ERROR_STATUS[code];
  const Class = (status === undefined ? undefined : ERROR_CLASSES[status]) ?? TollgateError;
  const message = str(envelope["message"]) ?? "The stream failed.";
  return new Class(`${status ? `${status} ` : ""}${code ?? "stream_error"}: ${message} (mid-stream)`, {
    status,
    code,
    type: str(envelope["type"]),
    param: str(envelope["param"]),
    requestId: str(envelope["requestId"]) ?? meta.requestId,
    details: isObject(envelope["details"]) ? envelope["details"] : undefined,
    headers: meta.headers,
    body,
  });
}

/**
 * A single-use AsyncIterable of the chunks of one streamed chat completion, returned by
 * `client.chat.completions.create({ …, stream: true })`.
 *
 * - The request starts when iteration starts (or at {@link ChatCompletionStream.response});
 *   an answer that is not a stream — 402 `budget_exhausted`, 400, 404, 502… — is thrown as the
 *   client's typed error from the first step of the loop. Paid calls are not retried after they
 *   may have gone through (only 408, 429 and 503).
 * - The loop yields every `chat.completion.chunk` the upstream sent, the usage-only chunk
 *   (`choices: []`) only when `stream_options.include_usage` asked for it. The gateway's receipt
 *   chunk is not yielded: it sets {@link ChatCompletionStream.receipt}. `data: [DONE]` ends the loop.
 * - An error event (the upstream failed mid-stream) is thrown as the typed error of its code
 *   (`BadGatewayError` for `upstream_error`…); {@link ChatCompletionStream.receipt} then holds
 *   what the chunks already received cost, if anything was billed. A body that ends without
 *   `[DONE]` or an error event throws `ConnectionError`.
 * - `break` (or `return`/`throw`) out of the loop, or {@link ChatCompletionStream.abort}, cancels
 *   the HTTP request: the gateway stops the upstream and bills the key for the prompt and what was
 *   relayed so far (no receipt reaches the client then; the key's budget shows the charge). The
 *   call's `signal` does the same but makes the loop throw `UserAbortError`.
 *
 * ```ts
 * const stream = client.chat.completions.create({ model: "gpt-4o", messages, stream: true });
 * for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta.content ?? "");
 * console.log(stream.receipt?.finalAmountWei, stream.outputCap);
 * ```
 */
export class ChatCompletionStream implements AsyncIterable<ChatCompletionChunk> {
  readonly #open: () => Promise<OpenStream>;
  #opening: Promise<OpenStream> | undefined;
  #stream: OpenStream | undefined;
  #used = false;
  #aborted = false;
  #receipt: Receipt | undefined;
  #usage: CompletionUsage | undefined;

  /** Wraps the function that opens the stream (called once, when the request starts). */
  constructor(open: () => Promise<OpenStream>) {
    this.#open = open;
  }

  /**
   * The metadata of the answer once its headers arrived: request id, `paymentIntentId`,
   * `outputCap`, every header. Undefined before (or when the request failed).
   */
  get meta(): ResponseMeta | undefined {
    return this.#stream?.meta;
  }

  /** The output cap the upstream was sent and why (`x-output-cap`, `x-output-cap-reason`), once the headers arrived. */
  get outputCap(): OutputCap | undefined {
    return this.#stream?.meta.outputCap;
  }

  /**
   * What the call cost, from the gateway's receipt chunk: set once the loop has read it (just
   * before `[DONE]`, or before an error event when anything was billed). Undefined before, and
   * for a stream stopped early (its charge shows in the key's budget only).
   */
  get receipt(): Receipt | undefined {
    return this.#receipt;
  }

  /** The usage of the last chunk that carried one (the usage-only chunk of `stream_options.include_usage`). */
  get usage(): CompletionUsage | undefined {
    return this.#usage;
  }

  /**
   * Starts the request if the loop has not yet, and resolves with the answer's metadata once its
   * headers arrived — to read {@link ChatCompletionStream.outputCap} or handle a 402 before
   * reading any chunk. Rejects with the typed error of an answer that is not a stream (the loop
   * then throws the same error). After it resolves, iterate the stream or `abort()` it: the body
   * stays open until one of them.
   */
  response(): Promise<ResponseMeta> {
    return this.#start().then((s) => s.meta);
  }

  /**
   * Stops the stream: cancels the HTTP request (or keeps it from starting); a loop in progress
   * ends without error. The gateway bills what it relayed before it saw the client go.
   */
  abort(): void {
    this.#aborted = true;
    this.#stream?.attempt.abort();
    this.#stream?.attempt.done();
  }

  /** The chunks, once: a second iteration throws `TypeError` (call `create` again). */
  [Symbol.asyncIterator](): AsyncIterator<ChatCompletionChunk> {
    if (this.#used) throw new TypeError("A ChatCompletionStream can be iterated once; call client.chat.completions.create() again.");
    this.#used = true;
    return this.#chunks();
  }

  #start(): Promise<OpenStream> {
    return (this.#opening ??= this.#open().then((stream) => {
      this.#stream = stream;
      if (this.#aborted) stream.attempt.abort();
      return stream;
    }));
  }

  async *#chunks(): AsyncGenerator<ChatCompletionChunk> {
    if (this.#aborted && this.#opening === undefined) return;
    const stream = await this.#start();
    if (this.#aborted) {
      await stream.response.body?.cancel().catch(() => undefined);
      stream.attempt.done();
      return;
    }
    for await (const message of sseMessages(stream, () => this.#aborted)) {
      if (message.data === "[DONE]") return;
      const chunk = this.#parse(message, stream.meta);
      if (chunk) yield chunk;
    }
  }

  /** A chunk to yield, or undefined for the receipt chunk and events of other names; throws on an error event. */
  #parse(message: EventSourceMessage, meta: ResponseMeta): ChatCompletionChunk | undefined {
    const name = message.event ?? "message";
    if (name !== "message" && name !== "error") return undefined;
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch (cause) {
      throw new TollgateError("A chat stream event does not carry JSON data.", {
        code: "invalid_response",
        requestId: meta.requestId,
        headers: meta.headers,
        body: message.data,
        cause,
      });
    }
    if (!isObject(data))
      throw new TollgateError("A chat stream event is not a JSON object.", {
        code: "invalid_response",
        requestId: meta.requestId,
        headers: meta.headers,
        body: data,
      });
    if (isObject(data["error"])) throw streamErrorOf(data["error"], meta, data);
    if (name === "error")
      throw new TollgateError(`The stream failed: ${message.data.slice(0, 500)}`, {
        code: "stream_error",
        requestId: meta.requestId,
        headers: meta.headers,
        body: data,
      });
    if (isObject(data["receipt"])) {
      this.#receipt = data["receipt"] as unknown as Receipt;
      return undefined;
    }
    const chunk = data as ChatCompletionChunk;
    if (isObject(chunk.usage)) this.#usage = chunk.usage;
    return chunk;
  }
}
