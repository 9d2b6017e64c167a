/** The routes of the dispenser capability. */
import type { AnyRoute } from "../http/route.js";

/** Builds the dispenser route table. */
export function dispenserRoutes(): AnyRoute[] {
  return [];
}
