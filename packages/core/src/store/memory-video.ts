/** The video part of the memory store. */
import type { VideoStore } from "./video-types.js";

/** In-memory video operations (synchronous inside each method: that is their atomicity). */
export function createMemoryVideoStore(): VideoStore {
  return {};
}
