/**
 * Deepgram speech models.
 * Prices: https://deepgram.com/pricing (pay-as-you-go list prices assumed current on 2026-11-21;
 * pre-recorded English transcription). Aura-2 is called upstream as aura-2-<voice>-en.
 */
import { arr, bool, choice, perKChars, speechCard, str, transcriptionCard, type CardInput, type Params } from "./types.js";

const P = "deepgram";

function sttParams(): Params {
  return {
    language: str("BCP-47 language tag; use multi for code-switching (Nova-3).", { default: "en" }),
    smart_format: bool("Format numbers, dates, currency and punctuation for readability.", { default: false }),
    punctuate: bool("Add punctuation and capitalization.", { default: false }),
    diarize: bool("Label speaker changes.", { default: false }),
    utterances: bool("Segment speech into utterances.", { default: false }),
    keyterm: arr("Key terms to boost recognition of (Nova-3)."),
  };
}

const AURA2_VOICES = ["thalia", "andromeda", "helena", "apollo", "arcas", "aries", "asteria", "athena", "hera", "luna", "orion", "zeus"];

export const cards = [
  transcriptionCard(P, {
    id: "nova-3",
    name: "Nova-3",
    description: "Deepgram's most accurate speech-to-text model with keyterm prompting and real-time multilingual support.",
    perMinute: "0.0043",
    params: sttParams(),
  }),
  transcriptionCard(P, {
    id: "nova-2",
    name: "Nova-2",
    description: "Deepgram's previous-generation speech-to-text model with broad language coverage.",
    perMinute: "0.0043",
    params: sttParams(),
  }),
  speechCard(P, {
    id: "aura-2",
    name: "Aura-2",
    description: "Deepgram's enterprise text-to-speech for real-time voice agents, with natural, context-aware pacing.",
    pricing: [perKChars("0.030")],
    params: {
      voice: choice(AURA2_VOICES, "thalia", "The Aura-2 English voice."),
      encoding: choice(["mp3", "linear16", "mulaw", "alaw", "opus", "flac", "aac"], "mp3", "Audio encoding of the result."),
    },
  }),
] satisfies CardInput[];
