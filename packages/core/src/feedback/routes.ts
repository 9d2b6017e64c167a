/** The routes of the feedback capability. */
import type { AnyRoute } from "../http/route.js";

/** Builds the feedback route table. */
export function feedbackRoutes(): AnyRoute[] {
  return [];
}
