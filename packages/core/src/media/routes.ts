/** The routes of the media capability. */
import type { AnyRoute } from "../http/route.js";

/** Builds the media route table. */
export function mediaRoutes(): AnyRoute[] {
  return [];
}
