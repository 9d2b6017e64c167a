/**
 * How long the audio of an uploaded file runs, as far as the file itself can tell before anything
 * decodes it. A PCM WAV is exact (its sample frames over its sample rate; decoders stop at its
 * `data` chunk). Any other container only DECLARES a length (an MP3's Xing header, an Ogg stream's
 * last granule, FLAC's STREAMINFO, an MP4's `mvhd`, a WebM's `Duration`), read with the
 * music-metadata library; a declaration can be wrong or forged (files concatenated behind one
 * header play for the sum of their lengths). So a paid transcription quotes the declared length,
 * and bounds what it may settle by {@link audioSecondsBound}: see docs/media.md.
 */
import { ESTIMATE_BITS_PER_SECOND, parseWav } from "./wav.js";

/** music-metadata, loaded on the first file that is not a WAV (its import costs ~70 ms, which a gateway that never transcribes need not pay at start). */
let parser: Promise<typeof import("music-metadata")> | undefined;

/**
 * The lowest bitrate of the codecs the transcription APIs accept (Opus goes down to 6 kbit/s): a
 * file of n bytes holds at most `n * 8 / MIN_AUDIO_BITS_PER_SECOND` seconds of coded audio.
 */
export const MIN_AUDIO_BITS_PER_SECOND = 6_000;

/** The length a file's audio runs, and where the figure comes from. */
export interface AudioLength {
  /** Seconds; never below 0. */
  readonly seconds: number;
  /**
   * `wav`: exact, from a WAV's sample frames. `declared`: what the container says (music-metadata).
   * `estimated`: the container says nothing (a WebM recorded as a stream, raw AAC), so the byte
   * length at {@link ESTIMATE_BITS_PER_SECOND} (128 kbit/s).
   */
  readonly source: "wav" | "declared" | "estimated";
}

/**
 * Reads the length of `bytes`' audio (see {@link AudioLength}). Never throws: a file no parser
 * recognises is `estimated`. Costs ~2.5 ms per MB for an Ogg file (its pages are walked to the last
 * granule), well under 1 ms per MB for the other containers.
 */
export async function audioLength(bytes: Uint8Array): Promise<AudioLength> {
  const wav = parseWav(bytes)?.durationSeconds;
  if (wav !== undefined && wav !== null) return { seconds: wav, source: "wav" };
  try {
    const { format } = await (
      await (parser ??= import("music-metadata"))
    ).parseBuffer(bytes, undefined, { duration: true, skipCovers: true, skipPostHeaders: true });
    const seconds = format.duration;
    if (seconds !== undefined && Number.isFinite(seconds) && seconds >= 0) return { seconds, source: "declared" };
  } catch {
    // Not a container music-metadata knows, or a truncated one: estimated below.
  }
  return { seconds: (bytes.length * 8) / ESTIMATE_BITS_PER_SECOND, source: "estimated" };
}

/**
 * The most audio a file can hold for what a paid call may settle: a WAV's exact length; otherwise
 * the longer of its {@link AudioLength} and its byte length at {@link MIN_AUDIO_BITS_PER_SECOND}.
 * Audio coded below that bitrate (Opus's silence frames) can run longer still; a key then pays what
 * it reserved.
 */
export function audioSecondsBound(bytes: Uint8Array, length: AudioLength): number {
  if (length.source === "wav") return length.seconds;
  return Math.max(length.seconds, (bytes.length * 8) / MIN_AUDIO_BITS_PER_SECOND);
}
