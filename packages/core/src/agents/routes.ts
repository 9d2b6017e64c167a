/** The routes of the agents capability. */
import type { AnyRoute } from "../http/route.js";

/** Builds the agents route table. */
export function agentsRoutes(): AnyRoute[] {
  return [];
}
