/**
 * Black Forest Labs FLUX models on the BFL API (ids are the API endpoint names, e.g. POST /v1/flux-pro-1.1).
 * Prices: https://bfl.ai/pricing and https://docs.bfl.ai/quick_start/pricing (per image, list prices
 * assumed current on 2026-11-21).
 */
import { bool, choice, imageCard, int, num, perImage, req, seed, str, type CardInput, type Params } from "./types.js";

const P = "black-forest-labs";

/** Parameters every BFL endpoint accepts. */
const common = (): Params => ({
  seed: seed(),
  safety_tolerance: int("Moderation tolerance, 0 (strictest) to 6 (least strict).", { minimum: 0, maximum: 6, default: 2 }),
  output_format: choice(["jpeg", "png"], "jpeg", "Encoding of the result."),
});
const dims = (defaultHeight: number): Params => ({
  width: int("Width in pixels (multiple of 32).", { minimum: 256, maximum: 1440, default: 1024 }),
  height: int("Height in pixels (multiple of 32).", { minimum: 256, maximum: 1440, default: defaultHeight }),
});
const upsampling = bool("Let the model rewrite the prompt for more creative output.", { default: false });
const aspect = (def: string) => str("Aspect ratio between 21:9 and 9:21, e.g. 16:9.", { default: def });

const kontext = (id: string, name: string, description: string, price: string): CardInput =>
  imageCard(P, {
    id, name, description,
    edit: true,
    pricing: [perImage(price)],
    params: {
      input_image: str("Edits only: base64 image (or URL) to edit; omit for text-to-image."),
      aspect_ratio: aspect("1:1"),
      prompt_upsampling: upsampling,
      ...common(),
    },
  });

export const cards = [
  imageCard(P, {
    id: "flux-pro-1.1",
    name: "FLUX1.1 [pro]",
    description: "Fast, high-quality text-to-image FLUX model with excellent prompt adherence, up to 1440 px per side.",
    pricing: [perImage("0.04")],
    params: { ...dims(768), prompt_upsampling: upsampling, ...common() },
  }),
  imageCard(P, {
    id: "flux-pro-1.1-ultra",
    name: "FLUX1.1 [pro] Ultra",
    description: "FLUX1.1 [pro] at up to 4 megapixels, with a raw mode for natural, less processed photos.",
    pricing: [perImage("0.06")],
    params: {
      aspect_ratio: aspect("16:9"),
      raw: bool("Raw mode: less synthetic, more candid photographic look.", { default: false }),
      image_prompt: str("Optional image to remix (base64)."),
      image_prompt_strength: num("How strongly the image prompt steers the result.", { minimum: 0, maximum: 1, default: 0.1 }),
      prompt_upsampling: upsampling,
      ...common(),
    },
  }),
  kontext("flux-kontext-pro", "FLUX.1 Kontext [pro]", "In-context image generation and editing: change images with text instructions while keeping characters consistent.", "0.04"),
  kontext("flux-kontext-max", "FLUX.1 Kontext [max]", "Premium Kontext model with the best prompt adherence and typography for generation and editing.", "0.08"),
  imageCard(P, {
    id: "flux-dev",
    name: "FLUX.1 [dev]",
    description: "Open-weight guidance-distilled FLUX model for non-commercial quality at lower cost.",
    pricing: [perImage("0.025")],
    params: {
      ...dims(768),
      steps: int("Number of diffusion steps.", { minimum: 1, maximum: 50, default: 28 }),
      guidance: num("Guidance scale: prompt adherence versus creativity.", { minimum: 1.5, maximum: 5, default: 3 }),
      prompt_upsampling: upsampling,
      ...common(),
    },
  }),
  imageCard(P, {
    id: "flux-pro-1.0-fill",
    name: "FLUX.1 Fill [pro]",
    description: "Inpainting and outpainting: fills the masked area of an image guided by the prompt.",
    generation: false,
    edit: true,
    pricing: [perImage("0.05")],
    params: {
      image: req(str("Base64 image to edit (may carry the mask in its alpha channel).")),
      mask: str("Base64 mask: white areas are filled."),
      steps: int("Number of diffusion steps.", { minimum: 15, maximum: 50, default: 50 }),
      guidance: num("Guidance scale.", { minimum: 1.5, maximum: 100, default: 60 }),
      prompt_upsampling: upsampling,
      ...common(),
    },
  }),
] satisfies CardInput[];
