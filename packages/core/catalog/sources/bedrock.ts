/**
 * Models on Amazon Bedrock (ids are Bedrock model ids, version after the colon).
 * Prices: https://aws.amazon.com/bedrock/pricing/ (on-demand, US East (N. Virginia); list prices
 * assumed current on 2026-11-21). Nova cached input = cache-read price (75% off input).
 */
import {
  arr, bool, byParam, chatParams, choice, embeddingCard, imageCard, int, num, perImage, perVideoSecond, req, str, textCard, videoCard,
  type CardInput, type Params,
} from "./types.js";

const P = "bedrock";

const nova = (id: string, name: string, description: string, context: number, [input, cached, output]: [string, string, string], vision: boolean): CardInput =>
  textCard(P, {
    id, name, description, context, input, cached, output,
    inputs: vision ? ["text", "image", "video"] : ["text"],
    params: chatParams({ maxTemperature: 1, defaultTemperature: 0.7, maxTokens: 10000 }),
  });

function cohereEmbedParams(): Params {
  return {
    input_type: req(choice(["search_document", "search_query", "classification", "clustering"], null, "What the input is used for.")),
    truncate: choice(["NONE", "START", "END"], "NONE", "How to handle inputs longer than the context."),
    embedding_types: arr("Vector types to return: any of float, int8, uint8, binary, ubinary (default float)."),
  };
}
const cohereEmbed = (id: string, name: string, description: string, price: string, context: number): CardInput =>
  embeddingCard(P, { id, name, description, price, context, params: cohereEmbedParams() });

export const cards = [
  nova("amazon.nova-pro-v1:0", "Amazon Nova Pro", "Amazon's capable multimodal model balancing accuracy, speed and cost.", 300000, ["0.80", "0.20", "3.20"], true),
  nova("amazon.nova-lite-v1:0", "Amazon Nova Lite", "Very low-cost Amazon multimodal model for fast processing of text, image and video input.", 300000, ["0.06", "0.015", "0.24"], true),
  nova("amazon.nova-micro-v1:0", "Amazon Nova Micro", "Amazon's text-only model with the lowest latency and cost.", 128000, ["0.035", "0.00875", "0.14"], false),
  embeddingCard(P, {
    id: "amazon.titan-embed-text-v2:0",
    name: "Titan Text Embeddings V2",
    description: "Amazon's multilingual text embedding model with selectable 256, 512 or 1024 dimensions.",
    context: 8192,
    price: "0.02",
    params: {
      dimensions: choice([256, 512, 1024], 1024, "Number of dimensions of the embedding."),
      normalize: bool("Return unit-length vectors.", { default: true }),
    },
  }),
  cohereEmbed("cohere.embed-english-v3", "Cohere Embed English v3 (Bedrock)", "Cohere's English embedding model (1024 dimensions) on Bedrock.", "0.10", 512),
  cohereEmbed("cohere.embed-multilingual-v3", "Cohere Embed Multilingual v3 (Bedrock)", "Cohere's multilingual embedding model (1024 dimensions) on Bedrock.", "0.10", 512),
  cohereEmbed("cohere.embed-v4:0", "Cohere Embed v4 (Bedrock)", "Cohere's multimodal, multilingual Embed v4 on Bedrock (price for text input).", "0.12", 128000),
  imageCard(P, {
    id: "amazon.nova-canvas-v1:0",
    name: "Amazon Nova Canvas",
    description: "Amazon's image generation and editing model (inpainting, outpainting, variations, background removal); sizes up to 1024x1024 here.",
    edit: true,
    pricing: byParam(perImage, "quality", { standard: "0.04", premium: "0.06" }),
    params: {
      task_type: choice(["TEXT_IMAGE", "INPAINTING", "OUTPAINTING", "IMAGE_VARIATION", "BACKGROUND_REMOVAL", "COLOR_GUIDED_GENERATION"], "TEXT_IMAGE", "What to do; everything but TEXT_IMAGE and COLOR_GUIDED_GENERATION edits an input image."),
      quality: choice(["standard", "premium"], "standard", "Rendering quality; premium costs more."),
      width: int("Width in pixels (multiple of 16).", { minimum: 320, maximum: 1024, default: 1024 }),
      height: int("Height in pixels (multiple of 16).", { minimum: 320, maximum: 1024, default: 1024 }),
      n: int("Number of images to generate.", { minimum: 1, maximum: 5, default: 1 }),
      cfg_scale: num("How strictly the prompt is followed.", { minimum: 1.1, maximum: 10, default: 6.5 }),
      seed: int("Seed for reproducible output.", { minimum: 0, maximum: 858993459, default: 12 }),
      negative_text: str("What the image should not contain."),
      image: str("Edits only: base64 input image."),
    },
  }),
  imageCard(P, {
    id: "stability.sd3-5-large-v1:0",
    name: "Stable Diffusion 3.5 Large (Bedrock)",
    description: "Stability's 8B Stable Diffusion 3.5 Large on Bedrock, for text-to-image and image-to-image.",
    edit: true,
    pricing: [perImage("0.08")],
    params: {
      mode: choice(["text-to-image", "image-to-image"], "text-to-image", "Generate from text, or transform the given image."),
      aspect_ratio: choice(["16:9", "1:1", "21:9", "2:3", "3:2", "4:5", "5:4", "9:16", "9:21"], "1:1", "Aspect ratio (text-to-image only)."),
      negative_prompt: str("What the image should not contain."),
      seed: int("Seed for reproducible output.", { minimum: 0, maximum: 4294967294 }),
      output_format: choice(["png", "jpeg"], "png", "Encoding of the result."),
      image: str("Edits only: base64 input image."),
      strength: num("Edits only: how much the input image is changed.", { minimum: 0, maximum: 1 }),
    },
  }),
  videoCard(P, {
    id: "amazon.nova-reel-v1:1",
    name: "Amazon Nova Reel 1.1",
    description: "Amazon's video model generating 720p clips of 6 seconds up to 2 minutes from text and an optional first frame.",
    imageInput: true,
    pricing: [perVideoSecond("0.08")],
    params: {
      duration_seconds: int("Clip length in seconds (a multiple of 6).", { minimum: 6, maximum: 120, default: 6 }),
      dimension: choice(["1280x720"], "1280x720", "Output resolution."),
      fps: choice([24], 24, "Frames per second."),
      seed: int("Seed for reproducible output.", { minimum: 0, maximum: 2147483646, default: 42 }),
      image: str("Optional base64 first frame (1280x720)."),
    },
  }),
] satisfies CardInput[];
