/**
 * The offline checks of an `exact` EVM (EIP-3009) payment against the requirements it claims to
 * meet: everything that needs neither the signature's EIP-712 domain nor the chain. Run by the
 * service before any facilitator (so a lenient remote facilitator cannot undercut the price) and
 * by the local facilitator.
 */
import type { Address, Hex, TransferAuthorization } from "../chain/types.js";
import { chainIdOf, exactEvmPayloadSchema, INVALID, type PaymentPayload, type PaymentRequirements } from "./types.js";

/**
 * A payment must stay valid at least this long when a facilitator checks it (as the reference
 * facilitator requires), so that it can still be settled.
 */
export const SETTLE_MARGIN_SECONDS = 6;

/**
 * How long a payment must stay valid when the gateway accepts it, before it calls the upstream:
 * long enough for the wait for the upstream (`upstreamSeconds`: the service passes twice the slowest
 * configured provider timeout) and 30 s for the settlement after it, so a client cannot sign an authorization
 * that lapses while the work it pays for runs (the work would be done and nothing could be
 * collected). Never more than `maxTimeoutSeconds` less 30 s (for clock skew), and at least
 * {@link SETTLE_MARGIN_SECONDS}.
 */
export function acceptMarginSeconds(maxTimeoutSeconds: number, upstreamSeconds = 60): number {
  return Math.max(SETTLE_MARGIN_SECONDS, Math.min(Math.ceil(upstreamSeconds) + 30, Math.floor(maxTimeoutSeconds) - 30));
}
/** Allowed clock skew between the client and the gateway for `validBefore`. */
export const CLOCK_SLACK_SECONDS = 60;

/** A payment that passed the offline checks. */
export interface CheckedPayment {
  readonly chainId: number;
  /** Lower-case. */
  readonly payer: Address;
  readonly authorization: TransferAuthorization;
  readonly signature: Hex;
}

/** The outcome of {@link checkExactPayment}: `invalidReason` is one of {@link INVALID}. */
export type CheckResult = { ok: true; payment: CheckedPayment } | { ok: false; invalidReason: string; invalidMessage: string; payer?: string };

const lower = (v: string) => v.toLowerCase();

/**
 * Checks scheme, network, asset, payload shape, payee, amount (`value >= amount`) and the
 * validity window against `nowSeconds`: `validAfter <= now`, `validBefore >= now + marginSeconds`
 * (default {@link SETTLE_MARGIN_SECONDS}), and `validBefore <= now + maxTimeoutSeconds + 60 s`.
 * Does not check the signature or the chain.
 */
export function checkExactPayment(payload: PaymentPayload, requirements: PaymentRequirements, nowSeconds: number, marginSeconds = SETTLE_MARGIN_SECONDS): CheckResult {
  const fail = (invalidReason: string, invalidMessage: string, payer?: string): CheckResult => ({ ok: false, invalidReason, invalidMessage, ...(payer ? { payer } : {}) });
  if (payload.accepted.scheme !== "exact" || requirements.scheme !== "exact") return fail(INVALID.scheme, `scheme "${payload.accepted.scheme}" is not supported (only "exact")`);
  const chainId = chainIdOf(requirements.network);
  if (payload.accepted.network !== requirements.network || chainId === null) return fail(INVALID.network, `network ${payload.accepted.network} does not match ${requirements.network}`);
  if (lower(payload.accepted.asset) !== lower(requirements.asset)) return fail(INVALID.asset, `asset ${payload.accepted.asset} is not the accepted token ${requirements.asset}`);
  const parsed = exactEvmPayloadSchema.safeParse(payload.payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return fail(INVALID.payload, `the exact EVM payload is malformed${issue ? `: ${issue.path.join(".") || "payload"} ${issue.message}` : ""}`);
  }
  const { authorization: a, signature } = parsed.data;
  const payer = lower(a.from) as Address;
  if (lower(a.to) !== lower(requirements.payTo)) return fail(INVALID.recipient, `the authorization pays ${a.to}, not ${requirements.payTo}`, payer);
  const value = BigInt(a.value);
  const amount = BigInt(requirements.amount);
  if (value < amount) return fail(INVALID.value, `the authorization is for ${value} atomic units; ${amount} are required`, payer);
  const now = BigInt(Math.floor(nowSeconds));
  const validAfter = BigInt(a.validAfter);
  const validBefore = BigInt(a.validBefore);
  if (validAfter > now) return fail(INVALID.validAfter, `the authorization is valid only after ${validAfter} (now ${now})`, payer);
  if (validBefore < now + BigInt(marginSeconds)) return fail(INVALID.validBefore, `the authorization expired or expires within ${marginSeconds} s (validBefore ${validBefore}, now ${now})`, payer);
  const latest = now + BigInt(requirements.maxTimeoutSeconds + CLOCK_SLACK_SECONDS);
  if (validBefore > latest) return fail(INVALID.validityTooLong, `the authorization stays valid until ${validBefore}, beyond maxTimeoutSeconds (${requirements.maxTimeoutSeconds} s)`, payer);
  return {
    ok: true,
    payment: {
      chainId,
      payer,
      signature: signature as Hex,
      authorization: { from: payer, to: lower(a.to) as Address, value, validAfter, validBefore, nonce: lower(a.nonce) as Hex },
    },
  };
}

/** Why `verify` refused a payment (the `reason` of a refusal value). */
export type RefusalReason =
  | "malformed"
  | "unsupported_scheme"
  | "wrong_network"
  | "wrong_asset"
  | "wrong_payee"
  | "underpaid"
  | "expired"
  | "not_yet_valid"
  | "validity_too_long"
  | "bad_signature"
  | "nonce_used"
  | "insufficient_balance"
  | "invalid_payment";

const REFUSALS: Record<string, RefusalReason> = {
  [INVALID.scheme]: "unsupported_scheme",
  [INVALID.network]: "wrong_network",
  [INVALID.asset]: "wrong_asset",
  [INVALID.payload]: "malformed",
  [INVALID.recipient]: "wrong_payee",
  [INVALID.value]: "underpaid",
  invalid_exact_evm_authorization_value: "underpaid",
  [INVALID.validBefore]: "expired",
  [INVALID.validAfter]: "not_yet_valid",
  [INVALID.validityTooLong]: "validity_too_long",
  [INVALID.signature]: "bad_signature",
  invalid_exact_evm_failed_to_parse_signature: "bad_signature",
  [INVALID.nonceUsed]: "nonce_used",
  [INVALID.balance]: "insufficient_balance",
};

/** Maps a facilitator's `invalidReason` (official `@x402/evm` strings included) to a refusal reason. */
export function refusalOf(invalidReason: string | undefined): RefusalReason {
  return (invalidReason !== undefined ? REFUSALS[invalidReason] : undefined) ?? "invalid_payment";
}
