/** The video service. */
import type { CapabilityDeps } from "../capability.js";

/** What the video capability offers to routes and application code. */
export type VideoService = Record<string, never>;

/** Creates the video service. */
export function createVideoService(_deps: CapabilityDeps): VideoService {
  return {};
}
