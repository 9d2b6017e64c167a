/**
 * The in-process facilitator: verifies `exact` EVM (EIP-3009) payments with viem against the
 * chain, and settles them by submitting `transferWithAuthorization` from the chain's wallet (which
 * pays the gas; the funds move from the payer to `payTo`).
 */
import { verifyTransferAuthorization } from "../chain/eip3009.js";
import { ChainError, type Chain } from "../chain/types.js";
import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";
import type { Facilitator } from "./facilitator.js";
import { INVALID, networkOf, type PaymentPayload, type PaymentRequirements, type SettleResponse, type SupportedResponse, type VerifyResponse } from "./types.js";
import { checkExactPayment, type CheckedPayment } from "./verify.js";

/** Options of {@link createLocalFacilitator}. */
export interface LocalFacilitatorOptions {
  /** One Chain per network it serves; settling needs a Chain with a signing wallet. */
  readonly chains: readonly Chain[];
  /** The time the validity window is checked against. */
  readonly clock: Clock;
}

/** Re-throws a chain read failure as a 502 (the RPC is an upstream). */
async function read<T>(network: string, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    throw new GatewayError("upstream_error", `x402: could not ${what} on ${network}: ${detail}`, { cause: error });
  }
}

/**
 * Creates the local facilitator. `verify` checks, in order: scheme, network (served here), asset
 * (the chain's USDC), payload shape, payee, `value >= amount`, the validity window (see
 * `checkExactPayment`), the EIP-712 signature (EOA, under the token's on-chain domain), that the
 * nonce is unused on-chain, and that the payer's balance covers `value`.
 */
export function createLocalFacilitator(options: LocalFacilitatorOptions): Facilitator {
  const chains = new Map(options.chains.map((c) => [networkOf(c.chainId), c]));

  type Checked = { ok: true; chain: Chain; payment: CheckedPayment } | { ok: false; response: VerifyResponse };
  async function check(payload: PaymentPayload, requirements: PaymentRequirements): Promise<Checked> {
    const invalid = (invalidReason: string, invalidMessage: string, payer?: string): Checked => ({
      ok: false,
      response: { isValid: false, invalidReason, invalidMessage, ...(payer ? { payer } : {}) },
    });
    const network = requirements.network;
    const chain = chains.get(network);
    if (!chain) return invalid(INVALID.network, `network ${network} is not served by this facilitator`);
    if (requirements.asset.toLowerCase() !== chain.usdc) return invalid(INVALID.asset, `asset ${requirements.asset} is not the USDC of ${network} (${chain.usdc})`);
    const checked = checkExactPayment(payload, requirements, options.clock.now() / 1000);
    if (!checked.ok) return invalid(checked.invalidReason, checked.invalidMessage, checked.payer);
    const { payment } = checked;
    const domain = await read(network, "read the token's EIP-712 domain", () => chain.tokenDomain());
    if (!(await verifyTransferAuthorization(domain, payment.authorization, payment.signature))) {
      return invalid(INVALID.signature, `the signature is not ${payment.payer}'s authorization under ${domain.name} v${domain.version} on ${network}`, payment.payer);
    }
    const [used, balance] = await Promise.all([
      read(network, "read the authorization state", () => chain.authorizationUsed(payment.payer, payment.authorization.nonce)),
      read(network, "read the payer's balance", () => chain.balanceOf(payment.payer)),
    ]);
    if (used) return invalid(INVALID.nonceUsed, `nonce ${payment.authorization.nonce} of ${payment.payer} is already used on-chain`, payment.payer);
    if (balance < payment.authorization.value) return invalid(INVALID.balance, `${payment.payer} holds ${balance} atomic units; the authorization needs ${payment.authorization.value}`, payment.payer);
    return { ok: true, chain, payment };
  }

  return {
    async verify(payload, requirements) {
      const c = await check(payload, requirements);
      return c.ok ? { isValid: true, payer: c.payment.payer } : c.response;
    },

    async settle(payload, requirements): Promise<SettleResponse> {
      const network = requirements.network;
      const c = await check(payload, requirements);
      if (!c.ok) {
        const r = c.response;
        return { success: false, errorReason: r.invalidReason ?? INVALID.transactionFailed, ...(r.invalidMessage ? { errorMessage: r.invalidMessage } : {}), transaction: "", network, ...(r.payer ? { payer: r.payer } : {}) };
      }
      const { chain, payment } = c;
      try {
        const transaction = await chain.transferWithAuthorization(payment.authorization, payment.signature);
        return { success: true, transaction, network, payer: payment.payer };
      } catch (error) {
        const message = error instanceof ChainError || error instanceof Error ? error.message : String(error);
        // A transfer whose simulation reverted (funds moved meanwhile, another authorization spent
        // them) was never sent: a refusal, not a transaction that may still land. One that was
        // signed and sent (it has a hash) is left to the chain check, whatever the error said.
        const unsent = error instanceof ChainError && error.nothingMoved && error.txHash === undefined;
        const errorReason = unsent ? INVALID.simulationFailed : INVALID.transactionFailed;
        return { success: false, errorReason, errorMessage: message, transaction: "", network, payer: payment.payer };
      }
    },

    async supported(): Promise<SupportedResponse> {
      const signers = [...new Set(options.chains.flatMap((c) => (c.account ? [c.account] : [])))];
      return {
        kinds: [...chains.keys()].map((network) => ({ x402Version: 2, scheme: "exact", network })),
        extensions: [],
        signers: signers.length > 0 ? { "eip155:*": signers } : ({} as Record<string, string[]>),
      };
    },
  };
}
