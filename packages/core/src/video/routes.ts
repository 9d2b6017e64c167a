/** The routes of the video capability. */
import type { AnyRoute } from "../http/route.js";

/** Builds the video route table. */
export function videoRoutes(): AnyRoute[] {
  return [];
}
