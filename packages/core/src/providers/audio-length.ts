/**
 * The most audio a file can hold, for what a paid transcription may settle. Only the upstream
 * decodes the audio; before it, the gateway knows a PCM WAV's length exactly (`audioSeconds`) and
 * estimates any other file's at 128 kbit/s, which is short for anything coded below that rate. The
 * byte length at the lowest bitrate a codec reaches bounds them all.
 */
import { audioSeconds } from "./wav.js";

/**
 * The lowest bitrate the codecs that transcription APIs take reach on ordinary audio: 500 bit/s
 * (libopus's floor, with 120 ms frames; Speex and AMR stay above 2 kbit/s). A file of n bytes holds
 * at most `n * 8 / MIN_AUDIO_BITS_PER_SECOND` seconds of audio coded at or above it.
 */
export const MIN_AUDIO_BITS_PER_SECOND = 500;

/**
 * Seconds of audio `bytes` may hold: the longer of its `audioSeconds` and its byte length at
 * {@link MIN_AUDIO_BITS_PER_SECOND}. A WAV gets the same bound, as some decoders read a RIFF file
 * differently from its header. Silence that Opus codes below that rate (DTX) can run longer still.
 */
export function audioSecondsBound(bytes: Uint8Array): number {
  return Math.max(audioSeconds(bytes).seconds, (bytes.length * 8) / MIN_AUDIO_BITS_PER_SECOND);
}
