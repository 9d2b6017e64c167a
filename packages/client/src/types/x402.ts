/** The x402 v2 shapes the client reads (docs/payments.md "Media billing and x402"). */

/** One way to pay a resource: scheme, network, amount (atomic units), token and payee. */
export interface PaymentRequirements {
  scheme: string;
  /** CAIP-2 network, e.g. `eip155:8453`. */
  network: string;
  /** Atomic units, decimal string. */
  amount: string;
  /** The token contract (USDC). */
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  /** For `exact` on EVM: the token's EIP-712 domain `{name, version}`. */
  extra: Record<string, unknown>;
}

/** The decoded `PAYMENT-REQUIRED` challenge of a 402 on a paid route. */
export interface PaymentRequired {
  x402Version: number;
  /** Why payment is required (or why a signature was refused). */
  error: string;
  resource: { url: string; description?: string; mimeType?: string };
  accepts: PaymentRequirements[];
}

/** The decoded `PAYMENT-RESPONSE` header of a request paid with x402: the settlement. */
export interface PaymentResponse {
  success: boolean;
  /** Transaction hash of the transfer. */
  transaction: string;
  network: string;
  payer?: string;
  amount?: string;
  errorReason?: string;
}
