/**
 * ElevenLabs speech models.
 * Prices: https://elevenlabs.io/pricing/api (API list prices assumed current on 2026-11-21).
 * Scribe is listed at $0.40 per hour of audio; metered here at $0.0067 per minute (rounded up).
 */
import { bool, choice, int, num, req, perKChars, speechCard, str, transcriptionCard, type CardInput, type Params } from "./types.js";

const P = "elevenlabs";

const FORMATS = ["mp3_44100_128", "mp3_44100_192", "mp3_22050_32", "pcm_16000", "pcm_22050", "pcm_24000", "pcm_44100", "ulaw_8000", "opus_48000_128"];

function ttsParams(languageCode: boolean): Params {
  return {
    voice_id: req(str("Id of the voice to use (from the voice library).")),
    output_format: choice(FORMATS, "mp3_44100_128", "Codec, sample rate and bitrate of the audio."),
    stability: num("Voice stability; lower is more expressive.", { minimum: 0, maximum: 1, default: 0.5 }),
    similarity_boost: num("How closely to match the original voice.", { minimum: 0, maximum: 1, default: 0.75 }),
    style: num("Style exaggeration.", { minimum: 0, maximum: 1, default: 0 }),
    speed: num("Speaking speed.", { minimum: 0.7, maximum: 1.2, default: 1 }),
    seed: int("Seed for best-effort deterministic output.", { minimum: 0, maximum: 4294967295 }),
    ...(languageCode ? { language_code: str("ISO-639-1 code forcing the language.") } : {}),
  };
}
const tts = (id: string, name: string, description: string, per1k: string, languageCode: boolean): CardInput =>
  speechCard(P, { id, name, description, pricing: [perKChars(per1k)], params: ttsParams(languageCode) });

export const cards = [
  tts("eleven_multilingual_v2", "Eleven Multilingual v2", "ElevenLabs' most lifelike, emotionally rich speech model across 29 languages.", "0.10", false),
  tts("eleven_v3", "Eleven v3", "ElevenLabs' most expressive speech model with audio tags for emotion and delivery, in 70+ languages.", "0.10", true),
  tts("eleven_flash_v2_5", "Eleven Flash v2.5", "Ultra-low-latency (~75 ms) speech model in 32 languages for real-time agents.", "0.05", true),
  tts("eleven_turbo_v2_5", "Eleven Turbo v2.5", "Low-latency speech model balancing quality and speed in 32 languages.", "0.05", true),
  transcriptionCard(P, {
    id: "scribe_v1",
    name: "Scribe v1",
    description: "ElevenLabs speech-to-text in 99 languages with speaker diarization, word timestamps and audio-event tagging.",
    perMinute: "0.0067",
    params: {
      language_code: str("ISO-639 code of the spoken language; auto-detected when omitted."),
      diarize: bool("Annotate which speaker is talking.", { default: false }),
      num_speakers: int("Maximum number of speakers, to help diarization.", { minimum: 1, maximum: 32 }),
      tag_audio_events: bool("Tag events such as (laughter) or (footsteps).", { default: true }),
      timestamps_granularity: choice(["none", "word", "character"], "word", "Granularity of timestamps."),
    },
  }),
] satisfies CardInput[];
