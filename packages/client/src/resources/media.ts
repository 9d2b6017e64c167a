/**
 * `client.images`, `client.audio`, `client.embeddings`: the paid media routes (docs/media.md),
 * billed to the client's service key or paid with an x402
 * `paymentSignature`. Bodies follow OpenAI; every answer carries its receipt (`meta.receipt`).
 */
import { APIPromise } from "../api-promise.js";
import type { Caller } from "../http/caller.js";
import { fileField } from "../http/encoding.js";
import type { RequestSpec } from "../http/request.js";
import type { PaidRequestOptions, RequestOptions } from "../options.js";
import type { Receipt } from "../types/common.js";

/** Fields every media call takes. */
export interface ModelSelection {
  /** Public catalog model id. */
  model: string;
  /** Selects another provider for a public id served by several. */
  provider?: string;
}

/** A file: raw bytes (sent base64), a base64 string, or a `data:<mime>;base64,…` URL. */
export type FileInput = Uint8Array | string;

/** The body of `images.generate`. */
export interface ImageGenerateParams extends ModelSelection {
  prompt: string;
  /** 1..10. @default 1 */
  n?: number;
  /** e.g. `1024x1024`; selects the price variant. */
  size?: string;
  quality?: string;
  response_format?: "b64_json" | "url";
  style?: string;
  background?: string;
}

/** The body of `images.edit`: `image` (or a data-URL `image_url`) and a prompt. */
export interface ImageEditParams extends ModelSelection {
  prompt: string;
  image?: FileInput;
  /** A `data:` URL (the gateway does not fetch remote images). */
  image_url?: string;
  mask?: FileInput;
  n?: number;
  size?: string;
  quality?: string;
  response_format?: "b64_json" | "url";
}

/** Generated images, as OpenAI answers them, with the receipt. */
export interface ImagesResponse {
  /** Unix seconds. */
  created: number;
  data: { b64_json?: string; url?: string }[];
  receipt: Receipt;
}

/** The body of `audio.speech`. */
export interface SpeechParams extends ModelSelection {
  /** 1..4096 characters. */
  input: string;
  voice?: string;
  response_format?: "mp3" | "wav" | "pcm" | "opus" | "flac" | "aac";
  /** 0.25..4. */
  speed?: number;
}

/** Speech audio bytes and their content type (the receipt is in `meta.receipt`). */
export interface SpeechAudio {
  audio: Uint8Array;
  /** e.g. `audio/wav`. */
  contentType: string;
}

/** The body of `audio.transcribe`. */
export interface TranscriptionParams extends ModelSelection {
  file: FileInput;
  language?: string;
  prompt?: string;
  /** `text` answers plain text; the client returns `{text}` either way. */
  response_format?: "json" | "text" | "verbose_json";
}

/** A transcription. `receipt` is absent for `response_format: "text"` (see `meta.receipt`). */
export interface Transcription {
  text: string;
  receipt?: Receipt;
}

/** The body of `embeddings.create`. */
export interface EmbeddingParams extends ModelSelection {
  input: string | string[];
  dimensions?: number;
  encoding_format?: "float" | "base64";
}

/** Embeddings, as OpenAI answers them, with the receipt. */
export interface EmbeddingsResponse {
  object: "list";
  /** `embedding` is a number array, or base64 of little-endian float32 for `encoding_format: "base64"`. */
  data: { object: "embedding"; embedding: number[] | string; index: number }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
  receipt: Receipt;
}

/** The `client.images` group. */
export interface ImagesResource {
  /** Generates images (billed per image by size/quality). */
  generate(params: ImageGenerateParams, options?: PaidRequestOptions): APIPromise<ImagesResponse>;
  /** Edits an image with a prompt (billed per image). */
  edit(params: ImageEditParams, options?: PaidRequestOptions): APIPromise<ImagesResponse>;
}

/** The `client.audio` group. */
export interface AudioResource {
  /** Speech audio bytes from text (billed per character). */
  speech(params: SpeechParams, options?: PaidRequestOptions): APIPromise<SpeechAudio>;
  /**
   * Transcribes audio, billed per second of audio. A key reserves up to the file's bound (its byte
   * length at 6 kbit/s, or what the key has left down to the quote) and settles the seconds the
   * upstream heard; a transcript of audio past what was paid is cut to the paid seconds (header
   * `x-transcript-cut-at`; empty when the upstream gave no timed segments). x402 pays the quote (a
   * WAV's length, else 128 kbit/s of the file).
   */
  transcribe(params: TranscriptionParams, options?: PaidRequestOptions): APIPromise<Transcription>;
}

/** The `client.embeddings` group. */
export interface EmbeddingsResource {
  /** Embeds text (billed per input token). */
  create(params: EmbeddingParams, options?: PaidRequestOptions): APIPromise<EmbeddingsResponse>;
}

/**
 * The request options of a paid call: an x402 `paymentSignature` is sent as `PAYMENT-SIGNATURE`
 * and the service key is left out, since the gateway bills a key first.
 */
export function paidOptions(options: PaidRequestOptions | undefined): RequestOptions | undefined {
  if (options?.paymentSignature === undefined) return options;
  const { paymentSignature, ...rest } = options;
  return { ...rest, apiKey: null, headers: { ...rest.headers, "payment-signature": paymentSignature } };
}

/** A paid POST: never repeated after it may have gone through (see ../http/retry.ts). */
export function paidPost(path: string, body: unknown, kind: RequestSpec["kind"] = "json"): RequestSpec {
  return { method: "POST", path, body, idempotent: false, kind };
}

const withFiles = <T extends object>(params: T, names: readonly string[]): T => {
  const out: Record<string, unknown> = { ...(params as Record<string, unknown>) };
  for (const name of names) if (out[name] !== undefined) out[name] = fileField(out[name] as FileInput);
  return out as T;
};

/** Builds `client.images`. */
export function imagesResource(caller: Caller): ImagesResource {
  return {
    generate: (params, options) => caller.call(paidPost("/v1/images/generations", params), paidOptions(options)),
    edit: (params, options) => caller.call(paidPost("/v1/images/edits", withFiles(params, ["image", "mask"])), paidOptions(options)),
  };
}

/** Builds `client.audio`. */
export function audioResource(caller: Caller): AudioResource {
  return {
    speech: (params, options) =>
      APIPromise.map(caller.call<Uint8Array>(paidPost("/v1/audio/speech", params, "bytes"), paidOptions(options)).withResponse(), (audio, meta) => ({
        audio,
        contentType: meta.headers.get("content-type") ?? "application/octet-stream",
      })),
    transcribe: (params, options) =>
      APIPromise.map(caller.call<Transcription | string | null>(paidPost("/v1/audio/transcriptions", withFiles(params, ["file"]), "jsonOrText"), paidOptions(options)).withResponse(), (body) =>
        typeof body === "string" || body === null ? { text: body ?? "" } : body,
      ),
  };
}

/** Builds `client.embeddings`. */
export function embeddingsResource(caller: Caller): EmbeddingsResource {
  return {
    create: (params, options) => caller.call(paidPost("/v1/embeddings", params), paidOptions(options)),
  };
}
