/** The media service. */
import type { CapabilityDeps } from "../capability.js";

/** What the media capability offers to routes and application code. */
export type MediaService = Record<string, never>;

/** Creates the media service. */
export function createMediaService(_deps: CapabilityDeps): MediaService {
  return {};
}
