/** The x402 service. */
import type { CapabilityDeps } from "../capability.js";

/** What the x402 capability offers to the media routes and application code. */
export type X402Service = Record<string, never>;

/** Creates the x402 service. */
export function createX402Service(_deps: CapabilityDeps): X402Service {
  return {};
}
