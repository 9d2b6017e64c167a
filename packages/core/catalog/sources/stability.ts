/**
 * Stability AI image models on the Stability Platform API (v2beta stable-image endpoints).
 * Prices: https://platform.stability.ai/pricing (credits at $0.01 each; list prices assumed current
 * on 2026-11-21). Ultra 8, Core 3, SD3.5 Large 6.5, Large Turbo 4, Medium 3.5, Flash 2.5 credits.
 */
import { choice, imageCard, num, perImage, seed, str, type CardInput, type Params } from "./types.js";

const P = "stability";

const ASPECT = ["16:9", "1:1", "21:9", "2:3", "3:2", "4:5", "5:4", "9:16", "9:21"];
const STYLES = [
  "3d-model", "analog-film", "anime", "cinematic", "comic-book", "digital-art", "enhance", "fantasy-art", "isometric",
  "line-art", "low-poly", "modeling-compound", "neon-punk", "origami", "photographic", "pixel-art", "tile-texture",
];

function stabilityParams(formats: string[], imageToImage: boolean): Params {
  return {
    aspect_ratio: choice(ASPECT, "1:1", "Aspect ratio of the output (text-to-image only)."),
    negative_prompt: str("What the image should not contain."),
    seed: seed(4294967294),
    output_format: choice(formats, "png", "Encoding of the result."),
    ...(imageToImage
      ? {
          image: str("Edits only: the input image for image-to-image."),
          strength: num("Edits only: how much the input image is changed (0 keeps it, 1 ignores it).", { minimum: 0, maximum: 1 }),
        }
      : {}),
  };
}

const sd35 = (id: string, name: string, description: string, price: string): CardInput =>
  imageCard(P, {
    id, name, description,
    edit: true,
    pricing: [perImage(price)],
    params: {
      mode: choice(["text-to-image", "image-to-image"], "text-to-image", "Generate from text, or transform the given image."),
      ...stabilityParams(["png", "jpeg"], true),
      cfg_scale: num("How strictly the prompt is followed.", { minimum: 1, maximum: 10 }),
    },
  });

export const cards = [
  imageCard(P, {
    id: "stable-image-ultra",
    name: "Stable Image Ultra",
    description: "Stability's highest-quality photorealistic image service, built on Stable Diffusion 3.5, with optional image-to-image.",
    edit: true,
    pricing: [perImage("0.08")],
    params: stabilityParams(["png", "jpeg", "webp"], true),
  }),
  imageCard(P, {
    id: "stable-image-core",
    name: "Stable Image Core",
    description: "Fast, affordable text-to-image service with style presets and no prompt engineering required.",
    pricing: [perImage("0.03")],
    params: { ...stabilityParams(["png", "jpeg", "webp"], false), style_preset: choice(STYLES, null, "Guides the image toward a style.") },
  }),
  sd35("sd3.5-large", "Stable Diffusion 3.5 Large", "8B-parameter Stable Diffusion 3.5 model for high-quality, diverse images at 1 megapixel.", "0.065"),
  sd35("sd3.5-large-turbo", "Stable Diffusion 3.5 Large Turbo", "Distilled SD 3.5 Large generating in few steps for speed.", "0.04"),
  sd35("sd3.5-medium", "Stable Diffusion 3.5 Medium", "2.5B-parameter SD 3.5 model balancing quality and cost.", "0.035"),
  sd35("sd3.5-flash", "Stable Diffusion 3.5 Flash", "Smallest, fastest SD 3.5 model for high-volume drafts.", "0.025"),
] satisfies CardInput[];
