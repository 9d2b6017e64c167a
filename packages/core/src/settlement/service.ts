/** The settlement service. */
import type { CapabilityDeps } from "../capability.js";

/** What the settlement capability offers to routes and application code. */
export type SettlementService = Record<string, never>;

/** Creates the settlement service. */
export function createSettlementService(_deps: CapabilityDeps): SettlementService {
  return {};
}
