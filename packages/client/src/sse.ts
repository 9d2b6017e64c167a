/**
 * The video status stream as an AsyncIterable: server-sent events parsed with eventsource-parser
 * (docs/media.md "Video jobs"): `video.status` frames, `svc.error` on failure or stream timeout, then
 * `data: [DONE]`. Breaking out of the loop (or `abort()`) cancels the HTTP body, so the gateway
 * stops polling the job.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { ConnectionError, TollgateError } from "./errors.js";
import type { ResponseMeta } from "./http/meta.js";
import type { OpenStream } from "./http/request.js";

/** States of a video job; `completed` and `failed` are terminal. */
export type VideoJobStatus = "queued" | "processing" | "completed" | "failed";

/** A `video.status` event (`compose.video.status` on a compose-compatible gateway): the job's state after a change. */
export interface VideoStatusEvent {
  type: "status";
  /** The SSE event name as sent. */
  event: string;
  data: { jobId: string; status: VideoJobStatus; progress?: number; url?: string; error?: string };
}

/** An `svc.error` event (`compose.error`): the job failed (`video_failed`) or the stream timed out (`stream_timeout`). The stream ends after it. */
export interface VideoErrorEvent {
  type: "error";
  event: string;
  data: { code: string; message: string };
}

/** One event of {@link VideoStream}. Other event names are skipped; `[DONE]` ends the iteration. */
export type VideoStreamEvent = VideoStatusEvent | VideoErrorEvent;

const STATUS_EVENTS = new Set(["video.status", "compose.video.status"]);
const ERROR_EVENTS = new Set(["svc.error", "compose.error"]);

function toEvent(message: EventSourceMessage, meta: ResponseMeta): VideoStreamEvent | undefined {
  const name = message.event ?? "message";
  const type = STATUS_EVENTS.has(name) ? "status" : ERROR_EVENTS.has(name) ? "error" : undefined;
  if (type === undefined) return undefined;
  try {
    return { type, event: name, data: JSON.parse(message.data) } as VideoStreamEvent;
  } catch (cause) {
    throw new TollgateError(`The ${name} event does not carry JSON data.`, { code: "invalid_response", requestId: meta.requestId, headers: meta.headers, body: message.data, cause });
  }
}

/**
 * A single-use AsyncIterable of the events of one video job. The request starts when iteration
 * starts; an error answer (e.g. 404 `job_not_found`) is thrown from the first step of the loop,
 * after the client's retries. Iteration ends after `[DONE]`; a body that ends without it throws
 * {@link ConnectionError}; the call's `signal` aborts it with `UserAbortError`.
 *
 * ```ts
 * for await (const e of client.videos.stream(job.id)) {
 *   if (e.type === "status") console.log(e.data.status, e.data.progress);
 * }
 * ```
 */
export class VideoStream implements AsyncIterable<VideoStreamEvent> {
  readonly #open: () => Promise<OpenStream>;
  #stream: OpenStream | undefined;
  #used = false;
  #aborted = false;

  /** Wraps the function that opens the stream. */
  constructor(open: () => Promise<OpenStream>) {
    this.#open = open;
  }

  /** The metadata of the answer once its headers arrived (request id, headers). */
  get meta(): ResponseMeta | undefined {
    return this.#stream?.meta;
  }

  /** Stops the stream: cancels the HTTP body (or keeps it from starting); the loop ends without error. */
  abort(): void {
    this.#aborted = true;
    this.#stream?.attempt.abort();
  }

  [Symbol.asyncIterator](): AsyncIterator<VideoStreamEvent> {
    if (this.#used) throw new TypeError("A VideoStream can be iterated once; call client.videos.stream() again.");
    this.#used = true;
    return this.#events();
  }

  async *#events(): AsyncGenerator<VideoStreamEvent> {
    if (this.#aborted) return;
    const stream = (this.#stream = await this.#open());
    if (this.#aborted) return stream.attempt.abort();
    for await (const message of sseMessages(stream, () => this.#aborted)) {
      if (message.data === "[DONE]") return;
      const event = toEvent(message, stream.meta);
      if (event) yield event;
    }
  }
}

/**
 * The server-sent events of an open stream, parsed with eventsource-parser, `data: [DONE]`
 * included (the caller ends its loop there). A body that ends (after the last event) throws
 * {@link ConnectionError}: every stream of the gateway ends with `[DONE]` or an error event the
 * caller throws. A failed read throws the attempt's error (the caller's abort as
 * `UserAbortError`, else `ConnectionError`), unless `quiet()` says the stream was stopped on
 * purpose: then the loop just ends. However the loop ends (return, break, throw), the body is
 * cancelled — the gateway sees the client go — and the attempt released.
 */
export async function* sseMessages(stream: OpenStream, quiet: () => boolean): AsyncGenerator<EventSourceMessage> {
  const body = stream.response.body;
  if (!body) {
    stream.attempt.done();
    throw new ConnectionError("The stream answer has no body.");
  }
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => void queue.push(message) });
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (cause) {
        if (quiet()) return;
        throw stream.attempt.failure(cause);
      }
      if (chunk.done) throw new ConnectionError("The stream ended before data: [DONE].");
      parser.feed(decoder.decode(chunk.value, { stream: true }));
      while (queue.length > 0) yield queue.shift()!;
    }
  } finally {
    // Cancelling the body closes the connection: the gateway sees the client go and stops its work.
    await reader.cancel().catch(() => undefined);
    stream.attempt.abort();
    stream.attempt.done();
  }
}
