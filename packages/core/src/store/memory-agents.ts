/** The agents part of the memory store. */
import type { AgentStore } from "./agents-types.js";

/** In-memory agents operations (synchronous inside each method: that is their atomicity). */
export function createMemoryAgentStore(): AgentStore {
  return {};
}
