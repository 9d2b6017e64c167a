/**
 * The x402 v2 wire shapes (as in `@x402/core` 2.x), as zod schemas and types.
 *
 * - `PAYMENT-REQUIRED` (402 response header) = base64 of {@link PaymentRequiredBody}, also the body.
 * - `PAYMENT-SIGNATURE` (request header) = base64 of {@link PaymentPayload}: the client's copy of the
 *   requirement it chose (`accepted`) and the scheme payload; for the `exact` EVM scheme
 *   `payload = {signature, authorization:{from,to,value,validAfter,validBefore,nonce}}`, an EIP-3009
 *   `TransferWithAuthorization` signed under the token's EIP-712 domain (`extra.name`/`extra.version`).
 * - `PAYMENT-RESPONSE` (response header) = base64 of {@link SettleResponse}.
 * - Facilitator HTTP API: `POST /verify` and `POST /settle` with {@link FacilitatorRequest},
 *   answering {@link VerifyResponse} / {@link SettleResponse}; `GET /supported` → {@link SupportedResponse}.
 */
import { z } from "zod";

/** The protocol version this gateway speaks. */
export const X402_VERSION = 2;

/** The request header carrying the payment. */
export const PAYMENT_SIGNATURE_HEADER = "PAYMENT-SIGNATURE";
/** The 402 response header carrying the challenge. */
export const PAYMENT_REQUIRED_HEADER = "PAYMENT-REQUIRED";
/** The success response header carrying the settlement. */
export const PAYMENT_RESPONSE_HEADER = "PAYMENT-RESPONSE";

const nonEmpty = z.string().min(1);
const digits = z.string().regex(/^\d{1,78}$/, "must be a decimal integer string");
const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte address");

/** The CAIP-2 network id of an EVM chain. */
export const networkOf = (chainId: number): string => `eip155:${chainId}`;

/** The chain id of an `eip155:<id>` network, or null. */
export function chainIdOf(network: string): number | null {
  const m = /^eip155:([1-9]\d{0,15})$/.exec(network);
  return m ? Number(m[1]) : null;
}

/** What a resource costs on one network, in one scheme. */
export const paymentRequirementsSchema = z.object({
  scheme: nonEmpty,
  network: z.string().min(3).refine((v) => v.includes(":"), "must be a CAIP-2 network id (e.g. eip155:8453)"),
  /** Atomic units, decimal string. */
  amount: nonEmpty,
  /** The token contract. */
  asset: nonEmpty,
  payTo: nonEmpty,
  maxTimeoutSeconds: z.number().positive(),
  /** For `exact` on EVM: the token's EIP-712 domain `{name, version}`. */
  extra: z.record(z.string(), z.unknown()).nullish().transform((v) => v ?? {}),
});
export type PaymentRequirements = z.output<typeof paymentRequirementsSchema>;

/** The resource being paid for. */
export const resourceInfoSchema = z.object({
  url: nonEmpty,
  description: z.string().nullish().transform((v) => v ?? undefined),
  mimeType: z.string().nullish().transform((v) => v ?? undefined),
});

/** The 402 challenge (body and, base64-encoded, the PAYMENT-REQUIRED header). */
export interface PaymentRequiredBody {
  x402Version: 2;
  error: string;
  resource: { url: string; description: string; mimeType: string };
  accepts: PaymentRequirements[];
}

/** The decoded PAYMENT-SIGNATURE header (v2). */
export const paymentPayloadSchema = z.object({
  x402Version: z.literal(X402_VERSION),
  resource: resourceInfoSchema.nullish().transform((v) => v ?? undefined),
  accepted: paymentRequirementsSchema,
  payload: z.record(z.string(), z.unknown()),
  extensions: z.record(z.string(), z.unknown()).nullish().transform((v) => v ?? undefined),
});
export type PaymentPayload = z.output<typeof paymentPayloadSchema>;

/** The `payload` of the `exact` EVM scheme (EIP-3009). All numbers are decimal strings. */
export const exactEvmPayloadSchema = z.object({
  signature: z.string().regex(/^0x([0-9a-fA-F]{2})+$/, "must be 0x-prefixed hex"),
  authorization: z.object({
    from: evmAddress,
    to: evmAddress,
    value: digits,
    validAfter: digits,
    validBefore: digits,
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be a 0x-prefixed 32-byte hex nonce"),
  }),
});
export type ExactEvmPayload = z.output<typeof exactEvmPayloadSchema>;

/** A facilitator's answer to `/verify`. */
export const verifyResponseSchema = z.object({
  isValid: z.boolean(),
  invalidReason: z.string().optional(),
  invalidMessage: z.string().optional(),
  payer: z.string().optional(),
});
export type VerifyResponse = z.output<typeof verifyResponseSchema>;

/** A facilitator's answer to `/settle`; also the PAYMENT-RESPONSE header. */
export const settleResponseSchema = z.object({
  success: z.boolean(),
  errorReason: z.string().optional(),
  errorMessage: z.string().optional(),
  payer: z.string().optional(),
  transaction: z.string(),
  network: z.string(),
  amount: z.string().optional(),
});
export type SettleResponse = z.output<typeof settleResponseSchema>;

/** A facilitator's answer to `/supported`. */
export const supportedResponseSchema = z.object({
  kinds: z.array(z.object({ x402Version: z.number(), scheme: z.string(), network: z.string(), extra: z.record(z.string(), z.unknown()).optional() })),
  extensions: z.array(z.string()).default([]),
  signers: z.record(z.string(), z.array(z.string())).default({}),
});
export type SupportedResponse = z.output<typeof supportedResponseSchema>;

/** The body of `POST /verify` and `POST /settle`. */
export interface FacilitatorRequest {
  x402Version: 2;
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
}

/**
 * Reasons a facilitator gives for an invalid payment: the official `@x402/evm` exact-scheme
 * strings where one exists, and some of this gateway's own (asset, payload, validity window, simulation).
 */
export const INVALID = {
  scheme: "invalid_exact_evm_scheme",
  network: "invalid_exact_evm_network_mismatch",
  recipient: "invalid_exact_evm_recipient_mismatch",
  signature: "invalid_exact_evm_signature",
  validBefore: "invalid_exact_evm_payload_authorization_valid_before",
  validAfter: "invalid_exact_evm_payload_authorization_valid_after",
  value: "invalid_exact_evm_payload_authorization_value_mismatch",
  nonceUsed: "invalid_exact_evm_nonce_already_used",
  balance: "invalid_exact_evm_insufficient_balance",
  transactionFailed: "invalid_exact_evm_transaction_failed",
  /** This gateway's own: the transfer's simulation reverted, so nothing was sent. */
  simulationFailed: "invalid_exact_evm_transaction_simulation_failed",
  asset: "invalid_exact_evm_asset_mismatch",
  payload: "invalid_exact_evm_payload",
  validityTooLong: "invalid_exact_evm_payload_authorization_valid_before_too_far",
} as const;
