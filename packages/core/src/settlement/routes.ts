/** The routes of the settlement capability. */
import type { AnyRoute } from "../http/route.js";

/** Builds the settlement route table. */
export function settlementRoutes(): AnyRoute[] {
  return [];
}
