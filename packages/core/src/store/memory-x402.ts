/** The x402 part of the memory store. */
import type { PaymentNonceStore } from "./x402-types.js";

/** In-memory x402 operations (synchronous inside each method: that is their atomicity). */
export function createMemoryPaymentNonceStore(): PaymentNonceStore {
  return {};
}
