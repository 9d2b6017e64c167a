/**
 * Models served by Groq (LPU inference). The gpt-oss ids are the same public ids Together serves.
 * Prices: https://groq.com/pricing (on-demand list prices assumed current on 2026-11-21).
 * whisper-large-v3 is $0.111 per hour of audio, i.e. $0.00185 per minute.
 */
import { chatParams, choice, num, openWeightTokenizer, str, textCard, transcriptionCard, type CardInput } from "./types.js";

const P = "groq";

const chat = (id: string, name: string, description: string, context: number, [input, output]: [string, string], reasoning?: string[], vision = false): CardInput =>
  textCard(P, { id, name, description, context, input, output, vision, ...openWeightTokenizer(id), params: chatParams({ ...(reasoning ? { reasoning } : {}) }) });

export const cards = [
  chat("openai/gpt-oss-120b", "gpt-oss-120b (Groq)", "OpenAI's open-weight 117B mixture-of-experts reasoning model at Groq speed.", 131072, ["0.15", "0.75"], ["low", "medium", "high"]),
  chat("openai/gpt-oss-20b", "gpt-oss-20b (Groq)", "OpenAI's small open-weight reasoning model at Groq speed.", 131072, ["0.10", "0.50"], ["low", "medium", "high"]),
  chat("llama-3.3-70b-versatile", "Llama 3.3 70B Versatile", "Meta's Llama 3.3 70B instruction model on Groq for general chat and tool use.", 131072, ["0.59", "0.79"]),
  chat("llama-3.1-8b-instant", "Llama 3.1 8B Instant", "Meta's small Llama 3.1 8B model on Groq for low-latency, high-volume tasks.", 131072, ["0.05", "0.08"]),
  chat("meta-llama/llama-4-scout-17b-16e-instruct", "Llama 4 Scout", "Meta's natively multimodal Llama 4 Scout (17B active, 16 experts) on Groq.", 131072, ["0.11", "0.34"], undefined, true),
  transcriptionCard(P, {
    id: "whisper-large-v3",
    name: "Whisper Large v3 (Groq)",
    description: "OpenAI's open Whisper Large v3 on Groq: multilingual transcription at very high speed.",
    perMinute: "0.00185",
    params: {
      language: str("ISO-639-1 code of the spoken language; auto-detected when omitted."),
      prompt: str("Text to guide style or continue a previous segment."),
      response_format: choice(["json", "text", "verbose_json"], "json", "Format of the transcript."),
      temperature: num("Sampling temperature.", { minimum: 0, maximum: 1, default: 0 }),
    },
  }),
] satisfies CardInput[];
