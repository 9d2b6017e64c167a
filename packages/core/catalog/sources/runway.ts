/**
 * Runway models on the Runway developer API.
 * Prices: https://docs.dev.runwayml.com/guides/pricing (credits at $0.01 each; list prices assumed
 * current on 2026-11-21). gen4_turbo and gen3a_turbo: 5 credits/second; gen4_image: 5 credits at 720p,
 * 8 credits at 1080p.
 */
import { arr, byParam, choice, int, imageCard, perImage, perVideoSecond, req, seed, str, videoCard, type CardInput, type Params } from "./types.js";

const P = "runway";

function videoParams(ratios: string[]): Params {
  return {
    promptImage: req(str("URL or data URI of the first frame.")),
    promptText: str("Text describing what should happen in the video."),
    ratio: choice(ratios, ratios[0] ?? null, "Output resolution as width:height."),
    duration: choice([5, 10], 10, "Clip length in seconds."),
    seed: seed(),
  };
}
const video = (id: string, name: string, description: string, ratios: string[]): CardInput =>
  videoCard(P, { id, name, description, imageInput: true, noPrompt: true, pricing: [perVideoSecond("0.05")], params: videoParams(ratios) });

const IMAGE_1080P = ["1920:1080", "1080:1920", "1024:1024", "1360:768", "1080:1080", "1168:880", "1440:1080", "1080:1440", "1808:768", "2112:912"];
const IMAGE_720P = ["1280:720", "720:1280", "720:720", "960:720", "720:960", "1680:720"];
const tier = (ratios: string[], price: string) => Object.fromEntries(ratios.map((r) => [r, price]));

export const cards = [
  video("gen4_turbo", "Gen-4 Turbo", "Runway's fast image-to-video model: animates a first frame into a 5 or 10 second clip.", ["1280:720", "720:1280", "1104:832", "832:1104", "960:960", "1584:672"]),
  video("gen3a_turbo", "Gen-3 Alpha Turbo", "Runway's previous-generation fast image-to-video model.", ["1280:768", "768:1280"]),
  imageCard(P, {
    id: "gen4_image",
    name: "Gen-4 Image",
    description: "Runway's image model with reference images for consistent characters, objects and locations, at 720p or 1080p.",
    noPrompt: true,
    pricing: [...byParam(perImage, "ratio", tier(IMAGE_1080P, "0.08")), ...byParam(perImage, "ratio", tier(IMAGE_720P, "0.05"))],
    params: {
      promptText: req(str("Text description of the image; refer to reference images by @tag.")),
      ratio: req(choice([...IMAGE_1080P, ...IMAGE_720P], null, "Output resolution as width:height; 1080p sizes cost more.")),
      referenceImages: arr("Up to three {uri, tag} reference images."),
      seed: seed(),
    },
  }),
] satisfies CardInput[];
