/**
 * Google models served by the Gemini API.
 * Prices: https://ai.google.dev/gemini-api/docs/pricing (paid tier, list prices assumed current on
 * 2026-11-21). Gemini 2.5 Pro prices are the tier for prompts up to 200k tokens.
 */
import {
  arr, chatParams, choice, embeddingCard, imageCard, int, perImage, perVideoSecond, str, textCard, videoCard, type CardInput, type Params,
} from "./types.js";

const P = "google";

const PERSON = choice(["dont_allow", "allow_adult", "allow_all"], "allow_adult", "Whether people may be generated.");

function imagenParams(maxImages: number, sizes: boolean): Params {
  return {
    n: int("Number of images to generate.", { minimum: 1, maximum: maxImages, default: 1 }),
    aspect_ratio: choice(["1:1", "3:4", "4:3", "9:16", "16:9"], "1:1", "Aspect ratio of the output."),
    ...(sizes ? { image_size: choice(["1K", "2K"], "1K", "Output resolution class.") } : {}),
    person_generation: PERSON,
  };
}
const imagen = (id: string, name: string, description: string, price: string, maxImages: number, sizes: boolean): CardInput =>
  imageCard(P, { id, name, description, pricing: [perImage(price)], params: imagenParams(maxImages, sizes) });

function veoParams(): Params {
  return {
    aspect_ratio: choice(["16:9", "9:16"], "16:9", "Aspect ratio of the video."),
    resolution: choice(["720p", "1080p"], "720p", "Output resolution (1080p for 16:9 only)."),
    duration_seconds: choice([8], 8, "Clip length in seconds."),
    negative_prompt: str("What the video should not contain."),
    image: str("Optional starting image (image-to-video)."),
    person_generation: PERSON,
  };
}
const veo = (id: string, name: string, description: string, perSecond: string): CardInput =>
  videoCard(P, { id, name, description, imageInput: true, pricing: [perVideoSecond(perSecond)], params: veoParams() });

const gemini = (id: string, name: string, description: string, [input, cached, output]: [string, string, string], maxOut: number, thinking: boolean, context = 1048576): CardInput =>
  textCard(P, {
    id, name, description, input, cached, output,
    context,
    inputs: ["text", "image", "audio", "video"],
    params: {
      ...chatParams({ maxTokens: maxOut }),
      ...(thinking ? { thinking_budget: int("Tokens the model may spend thinking (-1: dynamic, 0: off where allowed).", { minimum: -1, maximum: 32768 }) } : {}),
    },
  });

export const cards = [
  imagen("imagen-4.0-generate-001", "Imagen 4", "Google's text-to-image model with improved text rendering and detail, up to 2K.", "0.04", 4, true),
  imagen("imagen-4.0-ultra-generate-001", "Imagen 4 Ultra", "Highest-quality Imagen 4 variant with the best prompt adherence, one image per request.", "0.06", 1, true),
  imagen("imagen-4.0-fast-generate-001", "Imagen 4 Fast", "Fastest, cheapest Imagen 4 variant for high-volume generation.", "0.02", 4, false),
  imageCard(P, {
    id: "gemini-2.5-flash-image",
    name: "Gemini 2.5 Flash Image",
    description: "Gemini's native image generation and conversational editing model (a.k.a. Nano Banana), billed at 1290 output tokens per image.",
    edit: true,
    pricing: [perImage("0.039")],
    params: {
      aspect_ratio: choice(["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"], "1:1", "Aspect ratio of the output."),
      image: arr("Edits only: input image(s) to edit or combine."),
    },
  }),
  veo("veo-3.0-generate-001", "Veo 3", "Google's video model generating 8-second clips with native audio at 720p or 1080p.", "0.40"),
  veo("veo-3.0-fast-generate-001", "Veo 3 Fast", "Faster, cheaper Veo 3 for rapid iteration, with native audio.", "0.15"),
  // Google bills prompts over 200K tokens at twice these prices ($2.50 / $15): the card stops at 200K.
  gemini("gemini-2.5-pro", "Gemini 2.5 Pro", "Google's most capable thinking model for coding and complex reasoning (prompts up to 200K tokens here).", ["1.25", "0.125", "10.00"], 65536, true, 200000),
  gemini("gemini-2.5-flash", "Gemini 2.5 Flash", "Fast hybrid-reasoning Gemini model with a 1M-token context and thinking budgets.", ["0.30", "0.03", "2.50"], 65536, true),
  gemini("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", "The smallest, most cost-efficient Gemini 2.5 model for high-throughput tasks.", ["0.10", "0.01", "0.40"], 65536, true),
  gemini("gemini-2.0-flash", "Gemini 2.0 Flash", "Previous-generation multimodal Gemini workhorse with a 1M-token context.", ["0.10", "0.025", "0.40"], 8192, false),
  embeddingCard(P, {
    id: "gemini-embedding-001",
    name: "Gemini Embedding",
    description: "Google's multilingual text embedding model (3072 dimensions, Matryoshka-shortenable to 1536 or 768).",
    context: 2048,
    price: "0.15",
    params: {
      output_dimensionality: int("Shorten the embedding to this many dimensions (768, 1536 or 3072 recommended).", { minimum: 128, maximum: 3072, default: 3072 }),
      task_type: choice(
        ["SEMANTIC_SIMILARITY", "CLASSIFICATION", "CLUSTERING", "RETRIEVAL_DOCUMENT", "RETRIEVAL_QUERY", "CODE_RETRIEVAL_QUERY", "QUESTION_ANSWERING", "FACT_VERIFICATION"],
        null,
        "Optimizes the embedding for a task.",
      ),
    },
  }),
] satisfies CardInput[];
