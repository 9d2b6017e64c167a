/**
 * Luma AI Dream Machine API video models.
 * Prices: https://lumalabs.ai/api/pricing and https://docs.lumalabs.ai/docs/api (billed per million
 * pixels generated; list prices assumed current on 2026-11-21). Converted to USD per second from the
 * published price of a 5-second clip at each resolution (Ray 2: $0.40 540p, $0.71 720p, $1.59 1080p).
 */
import { bool, byParam, choice, perVideoSecond, str, videoCard, type CardInput, type Params } from "./types.js";

const P = "luma";

function rayParams(): Params {
  return {
    resolution: choice(["540p", "720p", "1080p"], "720p", "Output resolution; price scales with pixels."),
    duration: choice(["5s", "9s"], "5s", "Clip length."),
    aspect_ratio: choice(["1:1", "16:9", "9:16", "4:3", "3:4", "21:9", "9:21"], "16:9", "Aspect ratio of the video."),
    loop: bool("Make the clip loop seamlessly.", { default: false }),
    keyframes: { type: "object", required: false, description: "Optional start (frame0) and end (frame1) images or generations." },
    callback_url: str("URL notified when the generation changes state."),
  };
}
const ray = (id: string, name: string, description: string, prices: Record<"540p" | "720p" | "1080p", string>): CardInput =>
  videoCard(P, { id, name, description, imageInput: true, pricing: byParam(perVideoSecond, "resolution", prices), params: rayParams() });

export const cards = [
  ray("ray-2", "Ray2", "Luma's large video model with realistic motion and physics, text-to-video and image-to-video.", { "540p": "0.08", "720p": "0.142", "1080p": "0.318" }),
  ray("ray-flash-2", "Ray2 Flash", "Faster, cheaper Ray2 for rapid iteration.", { "540p": "0.028", "720p": "0.048", "1080p": "0.11" }),
] satisfies CardInput[];
