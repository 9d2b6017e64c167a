/**
 * The `local` provider (docs/providers.md): offline and deterministic, so a fresh
 * `npm start` serves every media route with no keys and no network. Nothing here is a model:
 * embeddings are feature hashes, images are gradients, speech is a tone sequence, transcription
 * reads back the text that speech embedded, and video jobs are simulated on a clock.
 */
import { systemClock } from "../clock.js";
import type { Clock } from "../clock.js";
import { GatewayError, invalidRequest } from "../errors.js";
import { bytesToBase64 } from "../encoding.js";
import { float32ToBase64, fnv1a, utf8Bytes } from "./bytes.js";
import { encodePng, parseSize } from "./png.js";
import type {
  EmbeddingsRequest,
  EmbeddingsResult,
  ImageEditRequest,
  ImageGenerationRequest,
  ImageResult,
  InferenceProvider,
  SpeechRequest,
  SpeechResult,
  TranscriptionRequest,
  TranscriptionResult,
  VideoCreateRequest,
  VideoContent,
  VideoCreateResult,
  VideoJobState,
  VideoProvider,
} from "./types.js";
import { encodeWav, parseWav, pcmBytes } from "./wav.js";
import { localChat, localChatStream } from "./local-chat.js";
import { once } from "../iterables.js";

/** Options of {@link createLocalProvider}. */
export interface LocalProviderOptions {
  /** How long a simulated video job takes from submission to a terminal state. @default 3000 */
  videoDurationMs?: number;
  /** The time source of video jobs and `created`. @default the wall clock */
  clock?: Clock;
  /** Pause between the words of a streamed chat answer, in milliseconds (0: one event-loop turn). @default 0 */
  chatChunkDelayMs?: number;
}

/** Default embedding length (OpenAI's text-embedding-3-small). */
export const LOCAL_EMBEDDING_DIMENSIONS = 1536;
/** Largest image side the local provider renders. */
export const LOCAL_MAX_IMAGE_SIDE = 2048;
/** Sample rate of local speech: 24 kHz, 16-bit, mono (OpenAI's `pcm` format). */
export const LOCAL_SAMPLE_RATE = 24_000;
/** Tone length per character at speed 1, and the cap on the whole clip. */
export const LOCAL_MS_PER_CHARACTER = 60;
export const LOCAL_MAX_SPEECH_MS = 30_000;
/** The RIFF chunk in which local speech stores its UTF-8 text, read back by `transcribe`. */
export const LOCAL_TEXT_CHUNK = "tgtx";

const MAX_SPEECH_CHARACTERS = 4096;
const VIDEO_ID = /^lvid_([0-9a-z]{1,11})_([0-9a-z]{1,11})_([01])_([0-9a-z]{1,11})$/;

/**
 * Creates the offline provider. Every method checks `signal` first and rejects with its reason
 * when it is already aborted (the work itself is synchronous). Behaviour:
 * - `chat` / `chatStream`: deterministic answers and tool calls, see ./local-chat.ts.
 * - `embeddings`: lower-cased words (`\p{L}\p{N}` runs) are hashed (FNV-1a) into `dimensions`
 *   buckets (default 1536, 400 `dimensions` outside 1..8192) with signed weights, then
 *   L2-normalised. Same text → same vector; texts sharing words → higher cosine. Usage = words per
 *   input (at least 1). `base64` = little-endian float32 bytes, as OpenAI encodes them.
 * - `generateImages` / `editImages`: real PNGs of `size` (default 1024x1024; 400 `size` when
 *   malformed or a side exceeds 2048), a gradient whose colours come from a hash of the prompt
 *   (and, for edits, of the image and mask bytes) and the image index. `responseFormat: "url"`
 *   answers `data:image/png;base64,…` URLs. No `usage` (billed per image).
 * - `speech`: a WAV (16-bit PCM mono 24 kHz; `pcm` = the raw samples) of one tone per character,
 *   60 ms per character at speed 1, capped at 30 s; the WAV carries the text in a `tgtx` chunk.
 *   400 `response_format` for mp3/opus/aac/flac, `speed` outside 0.25..4, `input` empty or over
 *   4096 characters.
 * - `transcribe`: a WAV made by `speech` → its original text; any other WAV →
 *   `"[local transcription: 2.4 s of audio]"`; not a WAV → 400 `file`. Duration from the header.
 * - video: a job is queued for the first 20% of `videoDurationMs`, then processing (progress
 *   1..99), then completed (progress 100, url `local://videos/<id>.mp4`) — or failed when the
 *   prompt contains `[fail]`. The job's state lives in its id, so it survives restarts. An unknown
 *   id → 502 `upstream_error` with `details.upstreamStatus: 404`. A completed job's file
 *   (`videoContent`) is a tiny MP4 with no frames: a file type box and a box naming the job.
 */
export function createLocalProvider(options: LocalProviderOptions = {}): InferenceProvider & VideoProvider {
  const clock = options.clock ?? systemClock;
  const videoDurationMs = options.videoDurationMs ?? 3000;
  if (!Number.isFinite(videoDurationMs) || videoDurationMs < 0) throw new RangeError("videoDurationMs must be a non-negative number");
  let videoSeq = 0;

  const images = (prompt: string, salt: number, n: number, size: string | undefined, responseFormat: string | undefined): ImageResult => {
    if (!Number.isInteger(n) || n < 1 || n > 10) throw invalidRequest("n must be an integer from 1 to 10", "n");
    const { width, height } = imageSize(size);
    const data = Array.from({ length: n }, (_, i) => {
      const b64 = bytesToBase64(renderGradient(width, height, fnv1a(prompt, salt + i)));
      return responseFormat === "url" ? { url: `data:image/png;base64,${b64}` } : { b64_json: b64 };
    });
    return { created: Math.floor(clock.now() / 1000), data };
  };

  const chatChunkDelayMs = options.chatChunkDelayMs ?? 0;
  if (!Number.isFinite(chatChunkDelayMs) || chatChunkDelayMs < 0) throw new RangeError("chatChunkDelayMs must be a non-negative number");
  const created = () => Math.floor(clock.now() / 1000);

  const provider: InferenceProvider & VideoProvider = {
    chat: (req) => localChat(req, created()),
    chatStream: (req) => localChatStream(req, created(), chatChunkDelayMs),

    async embeddings(req: EmbeddingsRequest): Promise<EmbeddingsResult> {
      checkSignal(req.signal);
      const dims = req.dimensions ?? LOCAL_EMBEDDING_DIMENSIONS;
      if (!Number.isInteger(dims) || dims < 1 || dims > 8192) throw invalidRequest("dimensions must be an integer from 1 to 8192", "dimensions");
      const inputs = typeof req.input === "string" ? [req.input] : req.input;
      if (inputs.length === 0) throw invalidRequest("input must not be an empty array", "input");
      let tokens = 0;
      const vectors = inputs.map((text) => {
        if (typeof text !== "string" || text.length === 0) throw invalidRequest("each input must be a non-empty string", "input");
        const { vector, count } = hashEmbedding(text, dims);
        tokens += count;
        return vector;
      });
      const usage = { promptTokens: tokens, totalTokens: tokens };
      if (req.encodingFormat === "base64") return { data: vectors.map(float32ToBase64), usage };
      return { data: vectors, usage };
    },

    async generateImages(req: ImageGenerationRequest): Promise<ImageResult> {
      checkSignal(req.signal);
      return images(req.prompt, 0, req.n, req.size, req.responseFormat);
    },

    async editImages(req: ImageEditRequest): Promise<ImageResult> {
      checkSignal(req.signal);
      if (req.image.length === 0) throw invalidRequest("image must not be empty", "image");
      const salt = fnv1a(req.image) ^ (req.mask ? fnv1a(req.mask, 0x6d61736b) : 0);
      return images(req.prompt, salt, req.n, req.size, "b64_json");
    },

    async speech(req: SpeechRequest): Promise<SpeechResult> {
      checkSignal(req.signal);
      const format = req.responseFormat ?? "wav";
      if (format !== "wav" && format !== "pcm") {
        throw invalidRequest(`the local provider produces wav or pcm audio only, not ${format}`, "response_format");
      }
      const speed = req.speed ?? 1;
      if (!Number.isFinite(speed) || speed < 0.25 || speed > 4) throw invalidRequest("speed must be from 0.25 to 4", "speed");
      const chars = Array.from(req.input);
      if (chars.length === 0) throw invalidRequest("input must not be empty", "input");
      if (chars.length > MAX_SPEECH_CHARACTERS) throw invalidRequest(`input must be at most ${MAX_SPEECH_CHARACTERS} characters`, "input");
      const samples = toneSequence(chars, speed, fnv1a(req.voice ?? "alloy"));
      if (format === "pcm") return { audio: pcmBytes(samples), contentType: "audio/pcm", characters: chars.length };
      const audio = encodeWav(samples, LOCAL_SAMPLE_RATE, 1, [{ id: LOCAL_TEXT_CHUNK, data: utf8Bytes(req.input) }]);
      return { audio, contentType: "audio/wav", characters: chars.length };
    },

    async transcribe(req: TranscriptionRequest): Promise<TranscriptionResult> {
      checkSignal(req.signal);
      const wav = parseWav(req.file);
      if (!wav || wav.durationSeconds === null) throw invalidRequest("the local provider transcribes WAV files of PCM samples only; file is not one", "file");
      const seconds = wav.durationSeconds;
      const embedded = wav.chunks.get(LOCAL_TEXT_CHUNK);
      let text: string | undefined;
      if (embedded) {
        try {
          text = new TextDecoder("utf-8", { fatal: true }).decode(embedded);
        } catch {
          text = undefined;
        }
      }
      return { text: text ?? `[local transcription: ${seconds.toFixed(1)} s of audio]`, durationSeconds: seconds };
    },

    async createVideo(req: VideoCreateRequest): Promise<VideoCreateResult> {
      checkSignal(req.signal);
      if (req.seconds !== undefined && (!Number.isFinite(req.seconds) || req.seconds <= 0 || req.seconds > 60)) {
        throw invalidRequest("seconds must be greater than 0 and at most 60", "seconds");
      }
      if (req.size !== undefined) imageSize(req.size);
      const fail = req.prompt.toLowerCase().includes("[fail]") ? 1 : 0;
      videoSeq += 1;
      const upstreamId = `lvid_${Math.max(0, Math.floor(clock.now())).toString(36)}_${Math.round(videoDurationMs).toString(36)}_${fail}_${videoSeq.toString(36)}`;
      return { upstreamId, status: "queued", progress: 0 };
    },

    async getVideo(upstreamId: string, signal?: AbortSignal): Promise<VideoJobState> {
      checkSignal(signal);
      const m = VIDEO_ID.exec(upstreamId);
      if (!m) {
        throw new GatewayError("upstream_error", "the local provider has no video job with this id", {
          details: { upstreamStatus: 404, upstreamMessage: "unknown video job" },
        });
      }
      const createdAt = parseInt(m[1]!, 36);
      const duration = parseInt(m[2]!, 36);
      const elapsed = Math.max(0, clock.now() - createdAt);
      if (elapsed >= duration) {
        if (m[3] === "1") return { status: "failed", error: "the local provider failed this job because its prompt contains [fail]" };
        return { status: "completed", progress: 100, url: `local://videos/${upstreamId}.mp4` };
      }
      if (elapsed < duration * 0.2) return { status: "queued", progress: 0 };
      return { status: "processing", progress: Math.min(99, Math.max(1, Math.floor((elapsed / duration) * 100))) };
    },

    async videoContent(upstreamId: string, options: { signal?: AbortSignal } = {}): Promise<VideoContent> {
      const state = await provider.getVideo(upstreamId, options.signal);
      if (state.status !== "completed")
        throw new GatewayError("upstream_error", "the local provider's job has no file yet", { details: { upstreamStatus: 404 } });
      const file = localVideoFile(upstreamId);
      return { status: 200, headers: { "content-type": "video/mp4", "content-length": String(file.byteLength) }, body: once(file) };
    },
  };
  return provider;
}

/** A local job's "video": an MP4 file type box and a free box naming the job (no frames). */
function localVideoFile(upstreamId: string): Uint8Array {
  const text = new TextEncoder().encode(`tollgate local video ${upstreamId}`);
  const out = new Uint8Array(16 + 8 + text.byteLength);
  const view = new DataView(out.buffer);
  view.setUint32(0, 16);
  out.set(new TextEncoder().encode("ftypisom"), 4);
  view.setUint32(16, 8 + text.byteLength);
  out.set(new TextEncoder().encode("free"), 20);
  out.set(text, 24);
  return out;
}

function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason;
}

function imageSize(size: string | undefined): { width: number; height: number } {
  if (size === undefined || size === "auto") return { width: 1024, height: 1024 };
  const parsed = parseSize(size);
  if (!parsed) throw invalidRequest(`size must look like "1024x1024", got ${JSON.stringify(size.slice(0, 40))}`, "size");
  if (parsed.width > LOCAL_MAX_IMAGE_SIDE || parsed.height > LOCAL_MAX_IMAGE_SIDE) {
    throw invalidRequest(`the local provider renders at most ${LOCAL_MAX_IMAGE_SIDE}x${LOCAL_MAX_IMAGE_SIDE}`, "size");
  }
  return parsed;
}

/** A signed feature-hash embedding of `text`'s lower-case words, L2-normalised. */
function hashEmbedding(text: string, dims: number): { vector: number[]; count: number } {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const tokens = words.length > 0 ? words : [text];
  const acc = new Float64Array(dims);
  for (const token of tokens) {
    // Two buckets per token halve the damage of a collision; the top bit of each hash is the sign.
    for (const seed of [0, 0x9e3779b9]) {
      const h = fnv1a(token, seed);
      acc[h % dims]! += h & 0x80000000 ? -1 : 1;
    }
  }
  let norm = 0;
  for (let i = 0; i < dims; i++) norm += acc[i]! * acc[i]!;
  norm = Math.sqrt(norm);
  const vector = Array.from(acc, (x) => (norm === 0 ? 0 : x / norm));
  if (norm === 0) vector[fnv1a(text) % dims] = 1; // every bucket cancelled out: still a unit vector
  return { vector, count: tokens.length };
}

/** A PNG of a linear two-colour gradient whose colours and angle come from `seed`. */
function renderGradient(width: number, height: number, seed: number): Uint8Array {
  const h2 = fnv1a(String(seed), 0x1234567);
  const from = [seed & 0xff, (seed >>> 8) & 0xff, (seed >>> 16) & 0xff];
  const to = [h2 & 0xff, (h2 >>> 8) & 0xff, (h2 >>> 16) & 0xff];
  const angle = ((seed >>> 24) / 256) * 2 * Math.PI;
  const cx = Math.cos(angle);
  const cy = Math.sin(angle);
  const corners = [0, width * cx, height * cy, width * cx + height * cy];
  const lo = Math.min(...corners);
  const span = Math.max(...corners) - lo || 1;
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0, at = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const t = (x * cx + y * cy - lo) / span;
      for (let c = 0; c < 3; c++) rgb[at++] = Math.round(from[c]! + (to[c]! - from[c]!) * t);
    }
  }
  return encodePng(width, height, rgb);
}

/** One short tone per character (silence for whitespace), pitched by the character and the voice. */
function toneSequence(chars: string[], speed: number, voiceHash: number): Int16Array {
  const perChar = Math.max(1, Math.round(((LOCAL_MS_PER_CHARACTER / speed) * LOCAL_SAMPLE_RATE) / 1000));
  const maxSamples = Math.round((LOCAL_MAX_SPEECH_MS * LOCAL_SAMPLE_RATE) / 1000);
  const count = Math.min(chars.length, Math.max(1, Math.floor(maxSamples / perChar)));
  const samples = new Int16Array(count * perChar);
  const base = 180 + (voiceHash % 80);
  const fade = Math.min(Math.floor(perChar / 4), Math.round(LOCAL_SAMPLE_RATE * 0.005));
  for (let i = 0; i < count; i++) {
    const ch = chars[i]!;
    if (/\s/u.test(ch)) continue;
    const freq = base * 2 ** ((ch.codePointAt(0)! % 24) / 12);
    for (let s = 0; s < perChar; s++) {
      const env = fade === 0 ? 1 : Math.min(1, s / fade, (perChar - 1 - s) / fade);
      samples[i * perChar + s] = Math.round(Math.sin((2 * Math.PI * freq * s) / LOCAL_SAMPLE_RATE) * env * 0.3 * 32767);
    }
  }
  return samples;
}
