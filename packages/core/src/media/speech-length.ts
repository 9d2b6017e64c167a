/**
 * How long a speech answer is, for cards priced per audio second (gpt-4o-mini-tts): quoted from the
 * input before the call, then measured on the audio the upstream returned.
 *
 * The quote bounds the audio from the input's characters, each by what it can take to say at
 * speed 1: a number character 0.8 s (a digit of a long number is read as "nine hundred
 * eighty-seven…"; `½`, `²`, `Ⅻ` too), a symbol, read out as a word or more (any Unicode symbol:
 * `$ + = < > ~ ^ |`, `€ £ ≤ ∑ √ ° ©`…, and `% & @ # * / \ _`) 0.6 s, a Chinese, Japanese or Korean
 * character 0.3 s (a syllable or more each), a letter of another non-Latin script 0.12 s, anything
 * else (Latin letters, spaces, punctuation) 0.08 s; longer for `speed` below 1. A `speed` above 1
 * does not shorten it, since a model may ignore `speed` (OpenAI's gpt-4o-mini-tts does) and answer
 * at normal pace. The quote caps what a call can be billed; the answer's measured length is what
 * it is billed. The answer is measured in every format OpenAI returns: WAV from its header
 * (../providers/wav.ts), `pcm` from its size (OpenAI's raw PCM: 24 kHz, 16-bit, mono), MP3, Opus,
 * AAC and FLAC with music-metadata from their headers (only bytes that open as audio, and only as
 * many as an answer no longer than the quote can hold). An answer that cannot be measured is
 * billed the quote's length.
 */
import { mpegFrame } from "../providers/audio-headers.js";
import { hasAscii } from "../providers/bytes.js";
import { parseWav } from "../providers/wav.js";

/** Bytes a second of OpenAI's `pcm` speech: 24,000 samples of 2 bytes, one channel. */
const PCM_BYTES_PER_SECOND = 48_000;

/** The whole seconds (at least 1) quoted for `input` at `speed` (see the module). */
export function quotedSpeechSeconds(input: string, speed = 1): number {
  let ms = 0;
  for (const char of input) ms += characterMs(char);
  return Math.max(1, Math.ceil(ms / 1000 / Math.min(speed, 1)));
}

/** What one character can take to say at speed 1, in ms (see the module). */
function characterMs(char: string): number {
  if (/\p{N}/u.test(char)) return 800;
  if (/[\p{S}%&@#*/\\_]/u.test(char)) return 600;
  if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(char)) return 300;
  if (/\p{L}/u.test(char) && !/\p{Script=Latin}/u.test(char)) return 120;
  return 80;
}

/** The most bytes a second of an answer is taken to hold (384 kbit/s: more than OpenAI's formats use). */
const MAX_BYTES_PER_SECOND = 48_000;

/**
 * The whole seconds (at least 1) of `audio`, as `contentType` (or the requested `format`) says it is
 * encoded; undefined when it cannot be measured, or when it is too large to be shorter than
 * `quotedSeconds` (it is billed the quote then anyway), so the parser never works through more
 * bytes than a billable answer holds.
 */
export async function measuredSpeechSeconds(
  audio: Uint8Array,
  contentType: string,
  format: string | undefined,
  quotedSeconds: number,
): Promise<number | undefined> {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  let seconds: number | undefined;
  const wav = parseWav(audio);
  if (wav) seconds = wav.durationSeconds ?? undefined;
  else if (type === "audio/pcm" || type === "audio/l16") seconds = audio.byteLength / PCM_BYTES_PER_SECOND;
  else if (opensAsAudio(audio)) {
    if (audio.byteLength <= (quotedSeconds + 1) * MAX_BYTES_PER_SECOND) seconds = await decodedSeconds(audio, type, format);
  } else if (format === "pcm") seconds = audio.byteLength / PCM_BYTES_PER_SECOND;
  return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? Math.max(1, Math.ceil(seconds)) : undefined;
}

/**
 * Whether `b` opens as audio the parser reads (an ID3 tag, an MPEG audio frame header with a valid
 * bitrate and sample rate, an ADTS header, Ogg or FLAC), so it never hunts through other bytes.
 */
function opensAsAudio(b: Uint8Array): boolean {
  const starts = (tag: string) => hasAscii(b, 0, tag);
  if (starts("ID3") || starts("OggS") || starts("fLaC")) return true;
  if (b.length < 4 || b[0] !== 0xff || (b[1]! & 0xe0) !== 0xe0) return false;
  if ((b[1]! & 0x06) === 0) return ((b[2]! >> 2) & 0x0f) < 13; // ADTS (AAC): sampling index 0..12
  return mpegFrame(b, 0) !== undefined;
}

/** The MIME type music-metadata is told for each of OpenAI's `response_format`s. */
const FORMAT_TYPES: Record<string, string> = { mp3: "audio/mpeg", opus: "audio/ogg", aac: "audio/aac", flac: "audio/flac" };

/** The duration music-metadata reads (loaded on first use; from the headers, without scanning every frame), or undefined when it cannot. */
async function decodedSeconds(audio: Uint8Array, type: string, format: string | undefined): Promise<number | undefined> {
  const { parseBuffer } = await import("music-metadata");
  const mimeType = type.startsWith("audio/") ? type : (FORMAT_TYPES[format ?? "mp3"] ?? "audio/mpeg");
  try {
    const { format: read } = await parseBuffer(audio, { mimeType, size: audio.byteLength }, { duration: false, skipCovers: true });
    return read.duration;
  } catch {
    return undefined;
  }
}
