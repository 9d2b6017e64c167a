/**
 * FLUX models hosted by fal.ai (ids are fal endpoint ids).
 * Prices: https://fal.ai/pricing and each model page, e.g. https://fal.ai/models/fal-ai/flux-pro/v1.1
 * (list prices assumed current on 2026-11-21). Per-megapixel prices are metered per image because the
 * offered image_size presets are all at most 1024x1024 (1 MP).
 */
import { bool, choice, imageCard, int, num, perImage, req, seed, str, type CardInput, type Params } from "./types.js";

const P = "fal";

const SIZES = ["square_hd", "square", "portrait_4_3", "portrait_16_9", "landscape_4_3", "landscape_16_9"];
const ASPECT = ["21:9", "16:9", "4:3", "3:2", "1:1", "2:3", "3:4", "9:16", "9:21"];

const common = (): Params => ({
  num_images: int("Number of images to generate.", { minimum: 1, maximum: 4, default: 1 }),
  seed: seed(),
  output_format: choice(["jpeg", "png"], "jpeg", "Encoding of the result."),
  safety_tolerance: choice(["1", "2", "3", "4", "5", "6"], "2", "Moderation tolerance, 1 (strictest) to 6."),
});
const sized = (): Params => ({ image_size: choice(SIZES, "landscape_4_3", "Preset output size (square_hd is 1024x1024)."), ...common() });

const kontext = (id: string, name: string, description: string, price: string): CardInput =>
  imageCard(P, {
    id, name, description,
    generation: false,
    edit: true,
    pricing: [perImage(price)],
    params: {
      image_url: req(str("URL of the image to edit.")),
      aspect_ratio: choice(ASPECT, null, "Aspect ratio of the output; defaults to the input's."),
      guidance_scale: num("How strictly the prompt is followed.", { minimum: 1, maximum: 20, default: 3.5 }),
      ...common(),
    },
  });

export const cards = [
  imageCard(P, {
    id: "fal-ai/flux-pro/v1.1",
    name: "FLUX1.1 [pro] (fal)",
    description: "FLUX1.1 [pro] text-to-image on fal, billed per megapixel.",
    pricing: [perImage("0.04")],
    params: { ...sized(), enable_safety_checker: bool("Run the safety checker.", { default: true }) },
  }),
  imageCard(P, {
    id: "fal-ai/flux-pro/v1.1-ultra",
    name: "FLUX1.1 [pro] Ultra (fal)",
    description: "FLUX1.1 [pro] Ultra on fal: up to 4 MP images with an optional raw photographic mode, billed per image.",
    pricing: [perImage("0.06")],
    params: {
      aspect_ratio: choice(ASPECT, "16:9", "Aspect ratio of the output."),
      raw: bool("Raw mode: less processed, more natural images.", { default: false }),
      ...common(),
    },
  }),
  kontext("fal-ai/flux-pro/kontext", "FLUX.1 Kontext [pro] (fal)", "Kontext [pro] image editing on fal: edit an image with a text instruction.", "0.04"),
  kontext("fal-ai/flux-pro/kontext/max", "FLUX.1 Kontext [max] (fal)", "Kontext [max] image editing on fal with the best prompt adherence and typography.", "0.08"),
  imageCard(P, {
    id: "fal-ai/flux/dev",
    name: "FLUX.1 [dev] (fal)",
    description: "Open-weight FLUX.1 [dev] on fal, billed per megapixel.",
    pricing: [perImage("0.025")],
    params: {
      ...sized(),
      num_inference_steps: int("Number of diffusion steps.", { minimum: 1, maximum: 50, default: 28 }),
      guidance_scale: num("How strictly the prompt is followed.", { minimum: 1, maximum: 20, default: 3.5 }),
    },
  }),
  imageCard(P, {
    id: "fal-ai/flux/schnell",
    name: "FLUX.1 [schnell] (fal)",
    description: "The fastest open FLUX model (1-4 steps) on fal, billed per megapixel.",
    pricing: [perImage("0.003")],
    params: { ...sized(), num_inference_steps: int("Number of diffusion steps.", { minimum: 1, maximum: 12, default: 4 }) },
  }),
] satisfies CardInput[];
