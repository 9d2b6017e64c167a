/**
 * How long a speech answer is, for cards priced per audio second (gpt-4o-mini-tts): quoted from the
 * input before the call, then measured on the audio the upstream returned.
 *
 * The quote takes ~0.08 s a character, longer for `speed` below 1; a `speed` above 1 does not
 * shorten it, since a model may ignore `speed` (OpenAI's gpt-4o-mini-tts does) and answer at
 * normal pace. The answer is measured in every format OpenAI returns: WAV from its header
 * (../providers/wav.ts), `pcm` from its size (OpenAI's raw PCM: 24 kHz, 16-bit, mono), MP3, Opus,
 * AAC and FLAC with music-metadata (frames scanned where the header gives no duration). An answer
 * that cannot be measured is billed the quote's length.
 */
import { parseWav } from "../providers/wav.js";

/** Seconds a character is taken to last, at speed 1. */
const SECONDS_PER_CHARACTER = 0.08;

/** Bytes a second of OpenAI's `pcm` speech: 24,000 samples of 2 bytes, one channel. */
const PCM_BYTES_PER_SECOND = 48_000;

/** The whole seconds (at least 1) quoted for `characters` of input at `speed` (see the module). */
export function quotedSpeechSeconds(characters: number, speed = 1): number {
  return Math.max(1, Math.ceil((characters * SECONDS_PER_CHARACTER) / Math.min(speed, 1)));
}

/**
 * The whole seconds (at least 1) of `audio`, as `contentType` (or the requested `format`) says it is
 * encoded; undefined when it cannot be measured.
 */
export async function measuredSpeechSeconds(audio: Uint8Array, contentType: string, format: string | undefined): Promise<number | undefined> {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  let seconds: number | undefined;
  if (format === "pcm" || type === "audio/pcm" || type === "audio/l16") seconds = audio.byteLength / PCM_BYTES_PER_SECOND;
  else {
    const wav = parseWav(audio);
    if (wav) seconds = wav.durationSeconds ?? undefined;
    else seconds = await decodedSeconds(audio, type, format);
  }
  return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? Math.max(1, Math.ceil(seconds)) : undefined;
}

/** The MIME type music-metadata is told for each of OpenAI's `response_format`s. */
const FORMAT_TYPES: Record<string, string> = { mp3: "audio/mpeg", opus: "audio/ogg", aac: "audio/aac", flac: "audio/flac" };

/** The duration music-metadata reads (loaded on first use), or undefined when it cannot. */
async function decodedSeconds(audio: Uint8Array, type: string, format: string | undefined): Promise<number | undefined> {
  const { parseBuffer } = await import("music-metadata");
  const mimeType = type.startsWith("audio/") ? type : (FORMAT_TYPES[format ?? "mp3"] ?? "audio/mpeg");
  try {
    const { format: read } = await parseBuffer(audio, { mimeType, size: audio.byteLength }, { duration: true, skipCovers: true });
    return read.duration;
  } catch {
    return undefined;
  }
}
