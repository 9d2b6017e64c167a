/** The feedback part of the memory store. */
import type { FeedbackStore } from "./feedback-types.js";

/** In-memory feedback operations (synchronous inside each method: that is their atomicity). */
export function createMemoryFeedbackStore(): FeedbackStore {
  return {};
}
