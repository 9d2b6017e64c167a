/** The dispenser part of the memory store. */
import type { DispenserStore } from "./dispenser-types.js";

/** In-memory dispenser operations (synchronous inside each method: that is their atomicity). */
export function createMemoryDispenserStore(): DispenserStore {
  return {};
}
