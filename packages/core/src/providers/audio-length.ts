/**
 * The most audio a file can hold, for what a paid transcription reserves. Only the upstream
 * decodes the audio; before it, the gateway knows a PCM WAV's length from its header
 * (`audioSeconds`) and estimates any other file's at 128 kbit/s, or at the length its headers
 * declare when longer. The byte length at a low codec bitrate bounds what ordinary speech files hold;
 * what runs past it is cut from the transcript (docs/media.md).
 */
import { audioSeconds, MIN_AUDIO_BITS_PER_SECOND } from "./wav.js";

export { MIN_AUDIO_BITS_PER_SECOND };

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
