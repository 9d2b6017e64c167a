/** The agents service. */
import type { CapabilityDeps } from "../capability.js";

/** What the agents capability offers to routes and application code. */
export type AgentsService = Record<string, never>;

/** Creates the agents service. */
export function createAgentsService(_deps: CapabilityDeps): AgentsService {
  return {};
}
