/**
 * Models hosted by Together AI (ids are Together's model ids, with an organization prefix).
 * Prices: https://www.together.ai/pricing (serverless list prices assumed current on 2026-11-21).
 * FLUX is billed per megapixel (1 MP = 1024x1024); width and height are capped at 1024 here so every
 * image is at most 1 MP and the per-image price is exact or an upper bound.
 */
import { chatParams, choice, embeddingCard, imageCard, int, openWeightTokenizer, perImage, seed, str, textCard, transcriptionCard, num, type CardInput, type Params } from "./types.js";

const P = "together";

function fluxParams(steps: { max: number; def: number } | null, edit: boolean): Params {
  return {
    width: int("Width in pixels (multiple of 16; at most 1024 so one image is at most 1 MP).", { minimum: 256, maximum: 1024, default: 1024 }),
    height: int("Height in pixels (multiple of 16; at most 1024 so one image is at most 1 MP).", { minimum: 256, maximum: 1024, default: 768 }),
    n: int("Number of images to generate.", { minimum: 1, maximum: 4, default: 1 }),
    seed: seed(),
    response_format: choice(["url", "base64"], "url", "Return a URL or base64 data."),
    ...(steps ? { steps: int("Number of diffusion steps.", { minimum: 1, maximum: steps.max, default: steps.def }) } : {}),
    ...(edit ? { image_url: str("Edits only: URL of the image to edit.") } : {}),
  };
}
const flux = (id: string, name: string, description: string, price: string, steps: { max: number; def: number } | null, edit = false): CardInput =>
  imageCard(P, { id, name, description, edit, pricing: [perImage(price)], params: fluxParams(steps, edit) });

const chat = (id: string, name: string, description: string, [input, output]: [string, string], reasoning?: string[]): CardInput =>
  textCard(P, { id, name, description, context: 131072, input, output, ...openWeightTokenizer(id), params: chatParams({ ...(reasoning ? { reasoning } : {}) }) });

export const cards = [
  flux("black-forest-labs/FLUX.1.1-pro", "FLUX1.1 [pro] (Together)", "FLUX1.1 [pro] text-to-image on Together, billed per megapixel.", "0.04", null),
  flux("black-forest-labs/FLUX.1-schnell", "FLUX.1 [schnell] (Together)", "The fastest open FLUX model (1-4 steps) on Together.", "0.0027", { max: 12, def: 4 }),
  flux("black-forest-labs/FLUX.1-dev", "FLUX.1 [dev] (Together)", "Open-weight FLUX.1 [dev] on Together for higher quality than schnell.", "0.025", { max: 50, def: 28 }),
  flux("black-forest-labs/FLUX.1-kontext-pro", "FLUX.1 Kontext [pro] (Together)", "Kontext [pro] on Together: text-to-image and instruction-based image editing.", "0.04", null, true),
  flux("black-forest-labs/FLUX.1-kontext-max", "FLUX.1 Kontext [max] (Together)", "Kontext [max] on Together: premium generation and editing with the best typography.", "0.08", null, true),
  chat("openai/gpt-oss-120b", "gpt-oss-120b (Together)", "OpenAI's open-weight 117B mixture-of-experts reasoning model, served by Together.", ["0.15", "0.60"], ["low", "medium", "high"]),
  chat("openai/gpt-oss-20b", "gpt-oss-20b (Together)", "OpenAI's small open-weight reasoning model, served by Together.", ["0.05", "0.20"], ["low", "medium", "high"]),
  chat("meta-llama/Llama-3.3-70B-Instruct-Turbo", "Llama 3.3 70B Instruct Turbo", "Meta's multilingual Llama 3.3 70B instruction model, FP8 turbo deployment on Together.", ["0.88", "0.88"]),
  embeddingCard(P, {
    id: "BAAI/bge-large-en-v1.5",
    name: "BGE Large EN v1.5",
    description: "Open BAAI English embedding model (1024 dimensions) for retrieval.",
    context: 512,
    price: "0.02",
  }),
  embeddingCard(P, {
    id: "BAAI/bge-base-en-v1.5",
    name: "BGE Base EN v1.5",
    description: "Smaller open BAAI English embedding model (768 dimensions).",
    context: 512,
    price: "0.008",
  }),
  transcriptionCard(P, {
    id: "openai/whisper-large-v3",
    name: "Whisper Large v3 (Together)",
    description: "OpenAI's open Whisper Large v3 speech recognition model, served by Together.",
    perMinute: "0.0015",
    params: {
      language: str("ISO-639-1 code of the spoken language; auto-detected when omitted."),
      response_format: choice(["json", "verbose_json"], "json", "Format of the transcript."),
      temperature: num("Sampling temperature.", { minimum: 0, maximum: 1, default: 0 }),
    },
  }),
] satisfies CardInput[];
