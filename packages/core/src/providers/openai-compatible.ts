/**
 * The OpenAI-compatible HTTP provider (docs/providers.md): any base URL speaking
 * OpenAI's REST shapes for chat completions, embeddings, images, audio and the `/videos` job API,
 * over the injectable {@link HttpClient} (undici on Node, `fetch` on the edge).
 */
import { countOf, usageAtTail } from "./pass-through.js";
import { z } from "zod";
import { GatewayError } from "../errors.js";
import type { HttpClient } from "../http/client.js";
import { base64ToFloat32, float32ToBase64 } from "./bytes.js";
import { encodeMultipart } from "./multipart.js";
import type { MultipartFile } from "./multipart.js";
import { createOpenAIChat } from "./openai-chat.js";
import { createOpenAITransport } from "./openai-transport.js";
import type { OpenAIBody, OpenAICompatibleProviderOptions } from "./openai-transport.js";
import type { EmbeddingsResult, ImageDatum, ImageResult, InferenceProvider, VideoJobState, VideoProvider, VideoStatus } from "./types.js";
import { audioSeconds } from "./wav.js";
import { once } from "../iterables.js";

export type { OpenAICompatibleProviderOptions } from "./openai-transport.js";

const SPEECH_MIME: Record<string, string> = {
  mp3: "audio/mpeg",
  wav: "audio/wav",
  pcm: "audio/pcm",
  opus: "audio/opus",
  flac: "audio/flac",
  aac: "audio/aac",
};

const count = z.number().int().nonnegative();
const embeddingsSchema = z.object({
  data: z.array(z.object({ embedding: z.union([z.array(z.number()), z.string()]), index: count })),
  usage: z.object({ prompt_tokens: count, total_tokens: count.optional() }),
});
const imagesSchema = z.object({
  created: z.number().optional(),
  data: z.array(z.object({ b64_json: z.string().nullish(), url: z.string().nullish() })).min(1),
  usage: z
    .object({
      input_tokens: count,
      output_tokens: count,
      total_tokens: count,
      input_tokens_details: z.object({ text_tokens: count, image_tokens: count }).partial().nullish(),
    })
    .partial()
    .nullish(),
});
const transcriptionSchema = z.object({
  text: z.string(),
  duration: z.union([z.number(), z.string()]).nullish(),
  usage: z.object({ seconds: z.number().nullish() }).nullish(),
  // Segments another shape than OpenAI's are read as none (the answer's text is still whole).
  segments: z
    .array(z.object({ start: z.number(), end: z.number(), text: z.string() }))
    .nullish()
    .catch(undefined),
});
const videoSchema = z.object({
  id: z.string().min(1),
  status: z.string(),
  progress: z.number().nullish(),
  error: z.union([z.string(), z.object({ message: z.string().nullish(), code: z.string().nullish() })]).nullish(),
});

const VIDEO_STATUS: Record<string, VideoStatus> = {
  queued: "queued",
  pending: "queued",
  in_progress: "processing",
  processing: "processing",
  running: "processing",
  completed: "completed",
  succeeded: "completed",
  failed: "failed",
  cancelled: "failed",
  canceled: "failed",
  expired: "failed",
};

/** The most transcription model ids one provider remembers as taking `json` only (they come from the catalog, but a bound keeps memory fixed). */
const MAX_JSON_ONLY_MODELS = 256;

/** Whether `error` is an upstream's 400 about `response_format` (how OpenAI refuses `verbose_json` for its gpt-4o transcription models). */
function refusedVerboseJson(error: unknown): boolean {
  if (!(error instanceof GatewayError) || error.details?.upstreamStatus !== 400) return false;
  const message = error.details.upstreamMessage;
  return typeof message === "string" && /response_format|verbose_json/i.test(message);
}

/**
 * Creates a provider for an OpenAI-compatible API: `POST /chat/completions` (plain and streamed,
 * see `createOpenAIChat`), `POST /embeddings`, `/images/generations`, `/images/edits` (multipart;
 * several source images as repeated `image[]` parts), `/audio/speech` (binary answer, the upstream's content type),
 * `/audio/transcriptions` (multipart, `response_format: "verbose_json"` for `duration` and
 * segments; a model the upstream refuses it for with a 400 naming `response_format`, as OpenAI
 * does for its gpt-4o transcription models, is asked again with `json`, and so from then on), `POST
 * /videos` and `GET /videos/{id}` (the completed url is `${baseUrl}/videos/{id}/content`, which
 * needs the same Authorization to fetch). Speech without a `voice` sends `"alloy"` (OpenAI requires
 * one); image `extra` fields are sent but never override the named fields.
 * Errors (every method): a non-2xx answer → 502 `upstream_error` with `details: { upstreamStatus,
 * upstreamMessage? }` (OpenAI's `error.message`, with the API key scrubbed); malformed JSON or an
 * unexpected shape → 502 naming the host; connection failure → 502; deadline → 504
 * `upstream_timeout`; caller abort → the signal's reason. Throws a `TypeError` at creation when
 * `baseUrl` is not an http(s) URL.
 */
export function createOpenAICompatibleProvider(options: OpenAICompatibleProviderOptions): InferenceProvider & VideoProvider {
  const t = createOpenAITransport(options);
  // Transcription models this upstream refused `verbose_json` for; they are asked for `json`.
  const jsonOnly = new Set<string>();
  const { base, host, send, read, decode, fail, scrub } = t;

  async function call<S extends z.ZodType>(
    schema: S,
    method: string,
    path: string,
    body: OpenAIBody | undefined,
    signal: AbortSignal | undefined,
  ): Promise<z.output<S>> {
    const res = await send(method, path, body, signal);
    return decode(schema, await read(() => res.text(), signal), res.status);
  }

  const toImages = (r: z.output<typeof imagesSchema>): ImageResult => {
    const data = r.data.map((d): ImageDatum => {
      if (d.b64_json) return { b64_json: d.b64_json };
      if (d.url) return { url: d.url };
      throw fail(`${host} answered an image with neither b64_json nor url`);
    });
    const out: ImageResult = { created: r.created ?? Math.floor(Date.now() / 1000), data };
    if (r.usage) {
      const inputTokens = r.usage.input_tokens ?? 0;
      const outputTokens = r.usage.output_tokens ?? 0;
      const textTokens = r.usage.input_tokens_details?.text_tokens;
      const imageTokens = r.usage.input_tokens_details?.image_tokens;
      out.usage = Object.assign(
        { inputTokens, outputTokens, totalTokens: r.usage.total_tokens ?? inputTokens + outputTokens },
        textTokens === undefined ? {} : { textTokens },
        imageTokens === undefined ? {} : { imageTokens },
      );
    }
    return out;
  };

  const toVideo = (r: z.output<typeof videoSchema>): VideoJobState & { id: string } => {
    const status = VIDEO_STATUS[r.status.toLowerCase()];
    if (!status) throw fail(`${host} answered an unknown video status ${JSON.stringify(r.status.slice(0, 40))}`);
    const out: VideoJobState & { id: string } = { id: r.id, status };
    // A whole percent, as the store keeps it: an upstream may report 12.5.
    if (typeof r.progress === "number") out.progress = Math.round(Math.min(100, Math.max(0, r.progress)));
    if (status === "completed") out.url = `${base}/videos/${encodeURIComponent(r.id)}/content`;
    if (status === "failed") {
      const msg = typeof r.error === "string" ? r.error : (r.error?.message ?? r.error?.code);
      out.error = msg ? scrub(msg) : `the upstream video job ${r.status.toLowerCase()}`;
    }
    return out;
  };

  return {
    ...createOpenAIChat(t, options.outputCapField),

    async embeddings(req) {
      const inputs = typeof req.input === "string" ? 1 : req.input.length;
      const json = {
        model: req.model,
        input: req.input,
        ...(req.dimensions === undefined ? {} : { dimensions: req.dimensions }),
        ...(req.encodingFormat === undefined ? {} : { encoding_format: req.encodingFormat }),
      };
      const res = await send("POST", "/embeddings", { json }, req.signal);
      const raw = await read(() => res.bytes(), req.signal);
      // Pass-through: the answer's bytes go to the client as they are; only the usage is read.
      const tail = usageAtTail(raw);
      const promptTokens = tail && countOf(tail, "prompt_tokens");
      if (tail && promptTokens !== undefined) return { data: [], raw, usage: { promptTokens, totalTokens: countOf(tail, "total_tokens") ?? promptTokens } };
      const r = decode(embeddingsSchema, new TextDecoder().decode(raw), res.status);
      if (r.data.length !== inputs) throw fail(`${host} answered ${r.data.length} embeddings for ${inputs} inputs`);
      const sorted = [...r.data].sort((a, b) => a.index - b.index);
      const usage = { promptTokens: r.usage.prompt_tokens, totalTokens: r.usage.total_tokens ?? r.usage.prompt_tokens };
      if (req.encodingFormat === "base64") {
        return { data: sorted.map((d) => (typeof d.embedding === "string" ? d.embedding : float32ToBase64(d.embedding))), usage };
      }
      const data = sorted.map((d) => {
        const v = typeof d.embedding === "string" ? base64ToFloat32(d.embedding) : d.embedding;
        if (!v) throw fail(`${host} answered a malformed base64 embedding`);
        return v;
      });
      return { data, usage } satisfies EmbeddingsResult;
    },

    async generateImages(req) {
      const json = Object.assign({}, req.extra, {
        model: req.model,
        prompt: req.prompt,
        n: req.n,
        ...(req.size === undefined ? {} : { size: req.size }),
        ...(req.quality === undefined ? {} : { quality: req.quality }),
        ...(req.responseFormat === undefined ? {} : { response_format: req.responseFormat }),
      });
      return toImages(await call(imagesSchema, "POST", "/images/generations", { json }, req.signal));
    },

    async editImages(req) {
      const fields: Record<string, string> = { model: req.model, prompt: req.prompt, n: String(req.n) };
      if (req.size !== undefined) fields.size = req.size;
      if (req.quality !== undefined) fields.quality = req.quality;
      const image = imagePart(req.image, req.imageMime, "image");
      // Several source images go as repeated `image[]` parts, as OpenAI's API reads them.
      const more = (req.moreImages ?? []).map((m, i) => imagePart(m.data, m.mime, `image-${i + 2}`));
      const files: Record<string, MultipartFile | MultipartFile[]> = more.length === 0 ? { image } : { "image[]": [image, ...more] };
      if (req.mask) files.mask = { filename: "mask.png", contentType: "image/png", data: req.mask };
      return toImages(await call(imagesSchema, "POST", "/images/edits", { multipart: encodeMultipart(fields, files) }, req.signal));
    },

    async speech(req) {
      const json = {
        model: req.model,
        input: req.input,
        voice: req.voice ?? "alloy",
        ...(req.responseFormat === undefined ? {} : { response_format: req.responseFormat }),
        ...(req.speed === undefined ? {} : { speed: req.speed }),
      };
      const res = await send("POST", "/audio/speech", { json }, req.signal);
      const audio = await read(() => res.bytes(), req.signal);
      if (audio.length === 0) throw fail(`${host} answered empty audio`, { upstreamStatus: res.status });
      const contentType = res.headers["content-type"] ?? SPEECH_MIME[req.responseFormat ?? "mp3"] ?? "application/octet-stream";
      return { audio, contentType, characters: Array.from(req.input).length };
    },

    async transcribe(req) {
      const fields: Record<string, string> = { model: req.model, response_format: jsonOnly.has(req.model) ? "json" : "verbose_json" };
      if (req.language !== undefined) fields.language = req.language;
      if (req.prompt !== undefined) fields.prompt = req.prompt;
      const ext = audioExtension(req.file, req.mime);
      const file: MultipartFile = {
        filename: req.filename ?? `audio.${ext}`,
        contentType: req.mime ?? `audio/${ext === "mp3" ? "mpeg" : ext}`,
        data: req.file,
      };
      const post = () => call(transcriptionSchema, "POST", "/audio/transcriptions", { multipart: encodeMultipart(fields, { file }) }, req.signal);
      let r: z.output<typeof transcriptionSchema>;
      try {
        r = await post();
      } catch (error) {
        // OpenAI's gpt-4o-*-transcribe models take `json` only: remember the model and ask again.
        if (fields.response_format !== "verbose_json" || !refusedVerboseJson(error)) throw error;
        if (jsonOnly.size < MAX_JSON_ONLY_MODELS) jsonOnly.add(req.model);
        fields.response_format = "json";
        r = await post();
      }
      const reported = r.duration ?? r.usage?.seconds;
      const seconds = reported === undefined || reported === null ? NaN : Number(reported);
      // No duration from the upstream: exact for WAV, else an estimate (see TranscriptionResult).
      const durationSeconds = Number.isFinite(seconds) && seconds >= 0 ? seconds : audioSeconds(req.file).seconds;
      return r.segments
        ? { text: r.text, durationSeconds, segments: r.segments.map((s) => ({ start: s.start, end: s.end, text: s.text })) }
        : { text: r.text, durationSeconds };
    },

    async createVideo(req) {
      const fields: Record<string, string> = { model: req.model, prompt: req.prompt };
      if (req.seconds !== undefined) fields.seconds = String(req.seconds);
      if (req.size !== undefined) fields.size = req.size;
      for (const [name, value] of Object.entries(req.priced ?? {})) fields[name] ??= value;
      const body: OpenAIBody = req.image
        ? { multipart: encodeMultipart(fields, { input_reference: { filename: "reference", contentType: sniffImageMime(req.image), data: req.image } }) }
        : { json: fields };
      const v = toVideo(await call(videoSchema, "POST", "/videos", body, req.signal));
      return { upstreamId: v.id, status: v.status, ...(v.progress === undefined ? {} : { progress: v.progress }) };
    },

    async getVideo(upstreamId, signal) {
      const { id: _id, ...state } = toVideo(await call(videoSchema, "GET", `/videos/${encodeURIComponent(upstreamId)}`, undefined, signal));
      return state;
    },

    async videoContent(upstreamId, { range, signal } = {}) {
      // Streamed: the provider's deadline bounds the wait for the headers and each gap between chunks, not the download.
      const headers: Record<string, string> = { accept: "video/*, */*" };
      if (range) headers.range = range;
      const res = await send("GET", `/videos/${encodeURIComponent(upstreamId)}/content`, undefined, signal, true, headers);
      return { status: res.status === 206 ? 206 : 200, headers: res.headers, body: res.chunks ? res.chunks() : once(read(() => res.bytes(), signal)) };
    },
  };
}

/** An image upload part named `<stem>.<subtype>`, of `mime` or the type its bytes show. */
function imagePart(data: Uint8Array, mime: string | undefined, stem: string): MultipartFile {
  const type = mime ?? sniffImageMime(data);
  return { filename: `${stem}.${type.split("/")[1] ?? "png"}`, contentType: type, data };
}

/** The MIME type of PNG, JPEG, WebP or GIF bytes; `image/png` when unrecognised. */
export function sniffImageMime(bytes: Uint8Array): string {
  const b = (i: number) => bytes[i] ?? -1;
  if (b(0) === 0xff && b(1) === 0xd8 && b(2) === 0xff) return "image/jpeg";
  if (b(0) === 0x52 && b(1) === 0x49 && b(2) === 0x46 && b(3) === 0x46 && b(8) === 0x57 && b(9) === 0x45 && b(10) === 0x42 && b(11) === 0x50)
    return "image/webp";
  if (b(0) === 0x47 && b(1) === 0x49 && b(2) === 0x46) return "image/gif";
  return "image/png";
}

/** A file extension OpenAI recognises for the audio, from its MIME type or its magic bytes; `wav` when unknown. */
function audioExtension(bytes: Uint8Array, mime: string | undefined): string {
  const byMime: Record<string, string> = {
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/ogg": "ogg",
    "audio/flac": "flac",
    "audio/webm": "webm",
    "audio/mp4": "m4a",
    "audio/m4a": "m4a",
    "audio/x-m4a": "m4a",
  };
  const m = mime?.split(";")[0]?.trim().toLowerCase();
  if (m && byMime[m]) return byMime[m];
  const s = String.fromCharCode(...bytes.subarray(0, 12));
  if (s.startsWith("RIFF") && s.slice(8, 12) === "WAVE") return "wav";
  if (s.startsWith("ID3") || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) return "mp3";
  if (s.startsWith("OggS")) return "ogg";
  if (s.startsWith("fLaC")) return "flac";
  if (s.slice(4, 8) === "ftyp") return "m4a";
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return "webm";
  return "wav";
}
