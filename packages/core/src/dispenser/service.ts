/** The dispenser service. */
import type { CapabilityDeps } from "../capability.js";

/** What the dispenser capability offers to routes and application code. */
export type DispenserService = Record<string, never>;

/** Creates the dispenser service. */
export function createDispenserService(_deps: CapabilityDeps): DispenserService {
  return {};
}
