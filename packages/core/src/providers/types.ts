/**
 * The provider ports (docs/providers.md): upstream AI services sit behind
 * {@link InferenceProvider} and {@link VideoProvider}; the media and video services look them up by
 * a card's `provider` name in a {@link ProviderRegistry}.
 *
 * Error contract shared by every method below, unless its JSDoc says more:
 * - 400 `invalid_request` (with `param`) when the request cannot be served as asked;
 * - 502 `upstream_error` when the upstream answers a non-2xx status (`details: { upstreamStatus,
 *   upstreamMessage? }`), answers malformed JSON or an unexpected shape, or cannot be reached;
 * - 504 `upstream_timeout` when the upstream does not answer within the provider's deadline;
 * - when the caller's `signal` aborts, the promise rejects with `signal.reason` (not wrapped).
 * Error messages name the upstream host, never a credential.
 */

/** Request of {@link InferenceProvider.embeddings}. */
export interface EmbeddingsRequest {
  model: string;
  /** One text or a batch; the answer's `data` has one entry per input, in order. */
  input: string | string[];
  /** Vector length, when the model supports choosing it. */
  dimensions?: number;
  /** `"float"` (default) → `number[][]`; `"base64"` → little-endian float32 bytes in base64, one string per input. */
  encodingFormat?: "float" | "base64";
  signal?: AbortSignal;
}

/** Answer of {@link InferenceProvider.embeddings}. */
export interface EmbeddingsResult {
  /** `number[][]` for `encodingFormat: "float"`, `string[]` for `"base64"`; one entry per input. Empty when `raw` is set. */
  data: number[][] | string[];
  /**
   * The upstream's JSON answer (OpenAI's embeddings shape), to forward as it is: the provider read
   * only its `usage`. When set, `data` is empty and the route answers these bytes.
   */
  raw?: Uint8Array;
  /** Tokens billed by the upstream. */
  usage: { promptTokens: number; totalTokens: number };
}

/** Token usage some image models report (gpt-image-1); absent when the upstream bills per image. */
export interface ImageUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** The prompt's share of `inputTokens` (`input_tokens_details.text_tokens`), when reported: an edit's input also counts its images. */
  textTokens?: number;
  /** The input images' share of `inputTokens` (`input_tokens_details.image_tokens`), when reported: an edit's `image`(s) and `mask`. */
  imageTokens?: number;
}

/** One generated image: inline base64 PNG/JPEG bytes, or a URL. */
export type ImageDatum = { b64_json: string } | { url: string };

/** Request of {@link InferenceProvider.generateImages}. */
export interface ImageGenerationRequest {
  model: string;
  prompt: string;
  /** Number of images, 1..10. */
  n: number;
  /** `"WxH"`, e.g. `"1024x1024"`. */
  size?: string;
  quality?: string;
  /** Omitted → the upstream's default (OpenAI's gpt-image models always answer `b64_json`). */
  responseFormat?: "b64_json" | "url";
  /** Extra upstream body fields (model-specific parameters); never overrides the fields above. */
  extra?: Record<string, unknown>;
  signal?: AbortSignal;
}

/** Request of {@link InferenceProvider.editImages}. */
export interface ImageEditRequest {
  model: string;
  prompt: string;
  /** The source image's bytes (PNG, JPEG or WebP). */
  image: Uint8Array;
  /** MIME type of `image`; sniffed from its bytes when absent. */
  imageMime?: string;
  /**
   * Further source images after `image`, for models that edit several at once (GPT Image takes up
   * to 16; OpenAI's API reads them as repeated `image[]` parts). A `mime` is sniffed when absent.
   */
  moreImages?: ReadonlyArray<{ data: Uint8Array; mime?: string }>;
  /** Optional PNG mask whose transparent pixels mark the area to edit. */
  mask?: Uint8Array;
  n: number;
  size?: string;
  quality?: string;
  signal?: AbortSignal;
}

/** Answer of the image methods (OpenAI's `{created, data, usage?}`). */
export interface ImageResult {
  /** Unix seconds. */
  created: number;
  data: ImageDatum[];
  usage?: ImageUsage;
}

/** Audio formats of {@link InferenceProvider.speech}. */
export type SpeechFormat = "mp3" | "wav" | "pcm" | "opus" | "flac" | "aac";

/** Request of {@link InferenceProvider.speech}. */
export interface SpeechRequest {
  model: string;
  /** The text to speak. */
  input: string;
  voice?: string;
  responseFormat?: SpeechFormat;
  /** Playback speed, 0.25..4. */
  speed?: number;
  signal?: AbortSignal;
}

/** Answer of {@link InferenceProvider.speech}. */
export interface SpeechResult {
  audio: Uint8Array;
  /** MIME type of `audio`, as the upstream declared it. */
  contentType: string;
  /** Characters (Unicode code points) of the input — the quantity `usd_per_1k_characters` bills. */
  characters: number;
}

/** Request of {@link InferenceProvider.transcribe}. */
export interface TranscriptionRequest {
  model: string;
  /** The audio file's bytes. */
  file: Uint8Array;
  filename?: string;
  mime?: string;
  /** ISO-639-1 language hint. */
  language?: string;
  /** Context hint for the model. */
  prompt?: string;
  signal?: AbortSignal;
}

/** Answer of {@link InferenceProvider.transcribe}. */
export interface TranscriptionResult {
  text: string;
  /**
   * Length of the audio in seconds — the quantity `usd_per_second`/`usd_per_minute` bill. Taken
   * from the upstream when it reports it (the length it decoded); else read from the WAV header
   * when the file is a WAV; else ESTIMATED (`audioSeconds`: the byte length at 128 kbit/s, or the
   * length the file's headers declare when longer). A paid call settles this, at most what it
   * reserved (docs/media.md).
   */
  durationSeconds: number;
  /** The transcript's timed pieces, when the upstream gives them (OpenAI's `verbose_json` segments): a paid call that covered less than the audio delivers the pieces it paid for. */
  segments?: readonly TranscriptSegment[];
}

/** A piece of a transcript: its text and where in the audio it starts and ends, in seconds. */
export interface TranscriptSegment {
  start: number;
  end: number;
  text: string;
}

/** Token usage of a chat completion, as the upstream reported it (OpenAI's `usage`). */
export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  /** `prompt_tokens_details.cached_tokens`, when reported. */
  cachedInputTokens?: number;
  /** `completion_tokens_details.reasoning_tokens`, when reported (already part of `completionTokens`). */
  reasoningTokens?: number;
}

/**
 * Request of {@link InferenceProvider.chat} and {@link InferenceProvider.chatStream}: an OpenAI
 * chat-completions body, `model` already the upstream's id, every other field (tools,
 * response_format, temperature…) passed to the upstream untouched. The provider sets `stream` itself
 * (`chatStream` also asks for `stream_options.include_usage`).
 */
export interface ChatRequest {
  body: Record<string, unknown>;
  signal?: AbortSignal;
}

/** Answer of {@link InferenceProvider.chat}. */
export interface ChatCompletionResult {
  /** The upstream's JSON answer (OpenAI's `chat.completion` shape), forwarded to the client as these bytes. */
  raw: Uint8Array;
  /** The usage it reported; undefined when the upstream sent none (the gateway counts it then). */
  usage?: ChatUsage;
  /** The assistant's output text (content, refusal and tool-call arguments of every choice), for counting when `usage` is missing. */
  outputText: string;
}

/** One `data:` event of a streamed chat completion (a `chat.completion.chunk`). */
export interface ChatStreamChunk {
  /** The event's data text, forwarded to the client unchanged. */
  data: string;
  /** The output text this chunk adds (delta content, refusal and tool-call arguments of every choice). */
  outputText: string;
  /** Set on the chunk carrying `usage` (OpenAI sends it last, with `choices: []`, when `include_usage` is on). */
  usage?: ChatUsage;
  /** True when the chunk has no choices (a usage-only chunk the client may not have asked for). */
  empty: boolean;
}

/**
 * An upstream serving inference. Every method is optional: a provider implements what it serves,
 * and the caller answers 4xx for a card whose provider lacks the operation. See the module JSDoc
 * for the error contract every method follows.
 */
export interface InferenceProvider {
  /** Embeds one text or a batch. Rejects with 502 `upstream_error` (upstream non-2xx, malformed JSON, unreachable), 504 `upstream_timeout`, or the `signal`'s reason when it aborts; 400 `dimensions` / `input` when the provider cannot serve them. */
  embeddings?(req: EmbeddingsRequest): Promise<EmbeddingsResult>;
  /** Generates `n` images from a prompt. Rejects with 502 `upstream_error` (upstream non-2xx, malformed JSON, unreachable), 504 `upstream_timeout`, or the `signal`'s reason when it aborts; 400 `size` / `n`. */
  generateImages?(req: ImageGenerationRequest): Promise<ImageResult>;
  /** Edits an image with a prompt. Rejects with 502 `upstream_error` (upstream non-2xx, malformed JSON, unreachable), 504 `upstream_timeout`, or the `signal`'s reason when it aborts; 400 `image` / `size` / `n`. */
  editImages?(req: ImageEditRequest): Promise<ImageResult>;
  /** Speaks a text; answers audio bytes. Rejects with 502 `upstream_error` (upstream non-2xx, malformed JSON, unreachable), 504 `upstream_timeout`, or the `signal`'s reason when it aborts; 400 `response_format` / `speed` / `input`. */
  speech?(req: SpeechRequest): Promise<SpeechResult>;
  /** Transcribes audio. Rejects with 502 `upstream_error` (upstream non-2xx, malformed JSON, unreachable), 504 `upstream_timeout`, or the `signal`'s reason when it aborts; 400 `file` when the audio cannot be read. */
  transcribe?(req: TranscriptionRequest): Promise<TranscriptionResult>;
  /** A chat completion, not streamed. Rejects with 502 `upstream_error` (upstream non-2xx, malformed JSON, unreachable), 504 `upstream_timeout`, or the `signal`'s reason when it aborts. */
  chat?(req: ChatRequest): Promise<ChatCompletionResult>;
  /**
   * A streamed chat completion. Resolves once the upstream accepted the request (2xx headers, or
   * the first event for in-process providers); rejects before that as {@link chat} does, so a
   * failure before the first byte is distinguishable from one during the stream. Iterating yields
   * each `data:` event until `[DONE]` or the end of the body; mid-stream, iteration throws 502
   * `upstream_error` (broken connection, an `error` event, malformed JSON), 504 `upstream_timeout`
   * when no byte arrives for the provider's deadline, or the signal's reason on abort. Leaving
   * the loop early (`return()`) cancels the upstream request.
   */
  chatStream?(req: ChatRequest): Promise<AsyncIterable<ChatStreamChunk>>;
}

/** States of a video job (docs/media.md). */
export type VideoStatus = "queued" | "processing" | "completed" | "failed";

/** Request of {@link VideoProvider.createVideo}. */
export interface VideoCreateRequest {
  model: string;
  prompt: string;
  /** Clip length in seconds. */
  seconds?: number;
  /** `"WxH"`. */
  size?: string;
  /**
   * The params the model's price depends on, by the names its catalog card uses (e.g.
   * `{ resolution: "720p" }` or `{ ratio: "1280:768" }`), defaults included: sent upstream so
   * that the clip rendered is the one billed. `size` also comes in {@link size}.
   */
  priced?: Readonly<Record<string, string>>;
  /** Optional first frame / reference image bytes. */
  image?: Uint8Array;
  signal?: AbortSignal;
}

/** Answer of {@link VideoProvider.createVideo}. */
export interface VideoCreateResult {
  /** The upstream's job id; pass it to {@link VideoProvider.getVideo}. */
  upstreamId: string;
  status: VideoStatus;
  /** 0..100. */
  progress?: number;
}

/** Answer of {@link VideoProvider.getVideo}. */
export interface VideoJobState {
  status: VideoStatus;
  /** 0..100. */
  progress?: number;
  /** Where the finished video can be fetched; set when `status` is `"completed"`. */
  url?: string;
  /** Why the job failed; set when `status` is `"failed"`. */
  error?: string;
}

/** An upstream running asynchronous video jobs. */
export interface VideoProvider {
  /** Submits a job. Rejects with 502 `upstream_error` (upstream non-2xx, malformed JSON, unreachable), 504 `upstream_timeout`, or the `signal`'s reason when it aborts; 400 `seconds` / `size`. */
  createVideo(req: VideoCreateRequest): Promise<VideoCreateResult>;
  /**
   * Reads a job's current state. An id the upstream does not know → 502 `upstream_error` with
   * `details.upstreamStatus: 404`. Otherwise: Rejects with 502 `upstream_error` (upstream non-2xx, malformed JSON, unreachable), 504 `upstream_timeout`, or the `signal`'s reason when it aborts.
   */
  getVideo(upstreamId: string, signal?: AbortSignal): Promise<VideoJobState>;
  /**
   * Optional: the file of a completed job, as the upstream sends it (with the provider's own
   * credentials), so the gateway can relay it (`GET /v1/videos/{id}/content`). `range` is the
   * client's `Range` header, passed on. Rejects as {@link getVideo} does (an id the upstream does
   * not know → 502 with `details.upstreamStatus: 404`). Without it, a job's `url` is the upstream's.
   */
  videoContent?(upstreamId: string, options?: { range?: string; signal?: AbortSignal }): Promise<VideoContent>;
}

/** A video file as an upstream sends it: 200, or 206 for a range; headers by lower-case name; the bytes as they arrive. */
export interface VideoContent {
  status: 200 | 206;
  /** The upstream's response headers (lower-case names); the gateway passes on only those that describe the file. */
  headers: Record<string, string>;
  body: AsyncIterable<Uint8Array>;
}

/** Providers by name (a card's `provider`). */
export interface ProviderRegistry {
  /** The inference provider called `name`, or undefined. */
  inference(name: string): InferenceProvider | undefined;
  /** The video provider called `name`, or undefined (also when that provider serves no video). */
  video(name: string): VideoProvider | undefined;
  /** Every registered name, sorted. */
  names(): string[];
}
