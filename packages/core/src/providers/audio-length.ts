/**
 * The most audio a file can hold, for what a paid transcription reserves. Only the upstream
 * decodes the audio; before it, the gateway knows a PCM WAV's length from its header
 * (`audioSeconds`) and estimates any other file's at 128 kbit/s, which is short for anything coded
 * below that rate. The byte length at a low codec bitrate bounds what ordinary speech files hold;
 * what runs past it is cut from the transcript (docs/media.md).
 */
import { audioSeconds } from "./wav.js";

/**
 * The bitrate a file's bound assumes: 6 kbit/s, Opus's lowest for wideband speech (voice notes run
 * at 12 to 32 kbit/s). Audio coded lower still (Opus down to 0.5 kbit/s, silence in FLAC) runs past
 * the bound.
 */
export const MIN_AUDIO_BITS_PER_SECOND = 6_000;

/**
 * Seconds of audio `bytes` is expected to hold at most: the longer of its `audioSeconds` (pass
 * `seconds` when already read) and its
 * byte length at {@link MIN_AUDIO_BITS_PER_SECOND}. A WAV gets the byte bound too, as a decoder
 * may read a RIFF file for longer than its header says (every way found is refused by `parseWav`,
 * and this bounds the ones not found).
 */
export function audioSecondsBound(bytes: Uint8Array, seconds: number = audioSeconds(bytes).seconds): number {
  return Math.max(seconds, (bytes.length * 8) / MIN_AUDIO_BITS_PER_SECOND);
}
