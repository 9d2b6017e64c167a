/**
 * Mistral AI models (La Plateforme).
 * Prices: https://mistral.ai/pricing#api-pricing (list prices assumed current on 2026-11-21).
 */
import { chatParams, choice, embeddingCard, int, num, str, textCard, transcriptionCard, type CardInput } from "./types.js";

const P = "mistral";

const chat = (id: string, name: string, description: string, context: number, [input, output]: [string, string], vision = false): CardInput =>
  textCard(P, { id, name, description, context, input, output, vision, params: chatParams({ maxTemperature: 1.5, defaultTemperature: 0.7 }) });

export const cards = [
  chat("mistral-large-2411", "Mistral Large 24.11", "Mistral's top-tier dense model for complex reasoning and multilingual tasks.", 131072, ["2.00", "6.00"]),
  chat("mistral-medium-2508", "Mistral Medium 3.1", "Frontier-class multimodal model at medium cost, strong at coding and enterprise tasks.", 131072, ["0.40", "2.00"], true),
  chat("mistral-small-2506", "Mistral Small 3.2", "Efficient open-weight multimodal model for low-latency workloads.", 131072, ["0.10", "0.30"], true),
  chat("magistral-medium-2509", "Magistral Medium 1.2", "Mistral's reasoning model with transparent multi-step thinking.", 131072, ["2.00", "5.00"], true),
  chat("codestral-2508", "Codestral 25.08", "Mistral's coding model for fill-in-the-middle and code generation across 80+ languages.", 256000, ["0.30", "0.90"]),
  embeddingCard(P, {
    id: "mistral-embed",
    name: "Mistral Embed",
    description: "Mistral's general-purpose text embedding model (1024 dimensions) for retrieval and RAG.",
    context: 8192,
    price: "0.10",
    params: { encoding_format: choice(["float"], "float", "Encoding of the vectors.") },
  }),
  embeddingCard(P, {
    id: "codestral-embed-2505",
    name: "Codestral Embed",
    description: "Embedding model specialized for code retrieval, with selectable dimension and precision.",
    context: 8192,
    price: "0.15",
    params: {
      output_dimension: int("Number of dimensions of the embedding.", { minimum: 1, maximum: 3072, default: 1536 }),
      output_dtype: choice(["float", "int8", "uint8", "binary", "ubinary"], "float", "Precision of the returned vectors."),
    },
  }),
  transcriptionCard(P, {
    id: "voxtral-mini-2507",
    name: "Voxtral Mini Transcribe",
    description: "Mistral's transcription-optimized speech model, priced per minute of audio.",
    perMinute: "0.001",
    params: {
      language: str("ISO-639-1 code of the spoken language; auto-detected when omitted."),
      temperature: num("Sampling temperature.", { minimum: 0, maximum: 1, default: 0 }),
      timestamp_granularities: choice(["segment"], null, "Return segment-level timestamps."),
    },
  }),
] satisfies CardInput[];
