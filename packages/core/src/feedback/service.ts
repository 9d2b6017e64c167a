/** The feedback service. */
import type { CapabilityDeps } from "../capability.js";

/** What the feedback capability offers to routes and application code. */
export type FeedbackService = Record<string, never>;

/** Creates the feedback service. */
export function createFeedbackService(_deps: CapabilityDeps): FeedbackService {
  return {};
}
