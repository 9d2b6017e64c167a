/** The Facilitator port: who verifies x402 payments and settles them on-chain. */
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from "./types.js";

/**
 * An x402 facilitator (the three operations of the facilitator HTTP API). Expected refusals are
 * values (`isValid:false`, `success:false`); transport failures reject with `GatewayError`
 * `upstream_error` (502) or `upstream_timeout` (504).
 */
export interface Facilitator {
  /** Checks that `payload` meets `requirements` and could settle now (signature, window, funds, nonce). Moves nothing. */
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  /** Verifies again, then moves the funds on-chain; `transaction` is the hash on success. */
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
  /** The (version, scheme, network) kinds it handles. */
  supported(): Promise<SupportedResponse>;
}
