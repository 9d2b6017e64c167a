/**
 * The x402 service: the 402 challenge, verification of a PAYMENT-SIGNATURE before the upstream
 * call, and settlement after it (docs/payments.md "Media billing and x402").
 *
 * Money invariants (docs/architecture.md):
 * - 5 (a nonce pays at most once): `verify` claims the authorization's (network, payer, nonce) in
 *   the store after the facilitator accepted it; a replay — concurrent or later — loses the claim
 *   (or is refused on-chain once settled). A claim whose settlement failed is kept (see `settle`).
 *   The claim records the amount: while some of a payer's authorizations are being served, another
 *   is claimed only if all of them fit the payer's on-chain balance, so authorizations signed
 *   against one balance cannot each buy an upstream call that only one of them will pay for.
 * - 6 (nothing charged when upstream fails): nothing moves until `settle`, which the caller runs
 *   only after the upstream succeeded; after a failure it calls `release`.
 */
import { createViemChain } from "../chain/viem-chain.js";
import type { Address, Chain, Hex } from "../chain/types.js";
import type { CapabilityDeps } from "../capability.js";
import type { VideoJobRecord } from "../store/video-types.js";
import { GatewayError } from "../errors.js";
import { GatewayOptionsError } from "../options.js";
import { decodeHeader, encodeHeader } from "./codec.js";
import type { Facilitator } from "./facilitator.js";
import { createHttpFacilitator } from "./http-facilitator.js";
import { createLocalFacilitator } from "./local-facilitator.js";
import { INVALID, networkOf, paymentPayloadSchema, type PaymentPayload, type PaymentRequiredBody, type PaymentRequirements, type SettleResponse } from "./types.js";
import { DEFAULT_SETTLE_CHECK_SECONDS, landedTransfer } from "./settle-check.js";
import { checkLateTransfers, DEFAULT_LATE_TRANSFER_CHECK_SECONDS, LATE_TRANSFER_MARGIN_MS, newLateTransferWatch, scheduleLateTransferChecks } from "./late-transfers.js";
import { acceptMarginSeconds, checkExactPayment, refusalOf, type RefusalReason } from "./verify.js";

export type { PaymentPayload, PaymentRequiredBody, PaymentRequirements, SettleResponse } from "./types.js";
export type { RefusalReason } from "./verify.js";

/** Default lifetime of an authorization the offers ask for. */
export const DEFAULT_MAX_TIMEOUT_SECONDS = 300;

/** What is being sold: the price and the resource it is for. */
export interface PriceInput {
  /** Atomic USDC units. */
  amount: bigint;
  resourceUrl: string;
  description: string;
  mimeType: string;
}

/** A payment that `verify` accepted and whose nonce it claimed; pass it to `settle` or `release`. */
export interface VerifiedPayment {
  readonly requestId: string;
  /** `eip155:<chainId>`. */
  readonly network: string;
  readonly chainId: number;
  /** Lower-case payer address (the authorization's `from`). */
  readonly payer: Address;
  /** Lower-case EIP-3009 nonce. */
  readonly nonce: Hex;
  /** The authorized value in atomic units (the price: verify refuses any other). */
  readonly amount: bigint;
  /** Unix seconds after which the authorization is void. */
  readonly validBefore: bigint;
  readonly payload: PaymentPayload;
  /** The gateway's own requirement it was verified against. */
  readonly requirements: PaymentRequirements;
}

/** An expected refusal of a payment (a value, not an exception). */
export interface PaymentRefusal {
  ok: false;
  reason: RefusalReason;
  message: string;
}

/** What the x402 capability offers to the media routes and application code. */
export interface X402Service {
  /** True when options.x402 is configured. */
  readonly enabled: boolean;
  /**
   * The requirements offered for a price (one per configured network): scheme "exact", network
   * "eip155:<id>", amount (decimal string), asset (USDC address), payTo, maxTimeoutSeconds, extra
   * {name, version} of the token domain (read from the token once per network, then cached).
   * @throws GatewayError `not_configured` when x402 is off; `upstream_error` when a chain RPC fails.
   */
  offers(input: PriceInput): Promise<PaymentRequirements[]>;
  /**
   * The 402 challenge: body `{x402Version:2, error, resource:{url, description, mimeType}, accepts}`
   * and the base64 of the same JSON for the PAYMENT-REQUIRED header.
   * @throws GatewayError `not_configured` when x402 is off.
   */
  challenge(input: PriceInput & { error: string }): Promise<{ body: PaymentRequiredBody; header: string }>;
  /**
   * Decodes and verifies a PAYMENT-SIGNATURE header against the offers for `amount` BEFORE any
   * upstream call, and claims its nonce in the store (so a concurrent replay loses). Order:
   * decode → v2 shape → scheme → network configured → asset → payee, amount, validity window →
   * facilitator (signature, nonce unused on-chain, balance) → nonce claim. Expected refusals are
   * values `{ok:false, reason, message}`.
   * @throws GatewayError `not_configured` when x402 is off; `upstream_error`/`upstream_timeout`
   * when the chain or a remote facilitator fails (nothing is claimed then).
   */
  verify(input: PriceInput & { header: string; requestId: string }): Promise<{ ok: true; payment: VerifiedPayment } | PaymentRefusal>;
  /**
   * After the upstream succeeded: settles on-chain via the facilitator; returns the base64
   * PAYMENT-RESPONSE header value and the SettleResponse `{success, transaction, network, payer}`,
   * and marks the nonce settled.
   * @throws GatewayError `upstream_error` when settlement fails. The nonce claim is then KEPT (not
   * released): the caller already has the result and the transfer may or may not have landed, so
   * the same signature must never buy a second result; it lapses with `validBefore`. When the
   * transfer may still land (`details.settlementUnsure`), the claim is marked unsure in the store
   * and {@link X402Service.checkLateTransfers} keeps looking for it.
   */
  settle(payment: VerifiedPayment, options?: { videoJob?: (response: SettleResponse) => VideoJobRecord }): Promise<{ header: string; response: SettleResponse }>;
  /**
   * After an upstream failure: releases the nonce claim, so the client may present the same
   * signature again (nothing was paid). Moves no money; a no-op once settled.
   */
  release(payment: VerifiedPayment): Promise<void>;
  /**
   * Looks once on-chain for the transfer of every claim (of any instance, before or after a
   * restart) whose settlement failed unsure and may still land; records each that did (the claim
   * settled with its hash), counts it and logs an error asking for a refund (its call was answered
   * 502). Runs by itself every `x402.lateTransferCheckSeconds` (default 15).
   * @returns how many late transfers it recorded (0 when x402 is off).
   */
  checkLateTransfers(): Promise<number>;
}

interface Network {
  readonly network: string;
  readonly chainId: number;
  readonly chain: Chain;
  readonly facilitator: Facilitator;
  readonly label: string;
}

/**
 * The settle refusals a facilitator makes before it sends a transaction (ours, @x402/evm's and the
 * generic x402 ones): answered with no transaction hash, they moved nothing. A used nonce is not
 * one: the facilitator's own earlier send may have used it.
 */
const REFUSED_BEFORE_SENDING: ReadonlySet<string> = new Set([
  INVALID.scheme,
  INVALID.network,
  INVALID.recipient,
  INVALID.signature,
  INVALID.validBefore,
  INVALID.validAfter,
  INVALID.value,
  INVALID.balance,
  INVALID.simulationFailed,
  INVALID.asset,
  INVALID.payload,
  INVALID.validityTooLong,
  "invalid_exact_evm_failed_to_parse_signature",
  "invalid_exact_evm_authorization_value",
  "invalid_exact_evm_token_name_mismatch",
  "invalid_exact_evm_token_version_mismatch",
  "insufficient_funds",
  "invalid_scheme",
  "invalid_network",
  "invalid_payload",
  "invalid_payment_requirements",
  "invalid_x402_version",
  "unsupported_scheme",
]);

const notConfigured = () => new GatewayError("not_configured", "x402 is not configured: set options.x402 ({ payTo, networks: [{ chainId, facilitator }] }) and options.chains");

/** Creates the x402 service; throws `GatewayOptionsError` when a network's chain is not in `options.chains`. */
export function createX402Service(deps: CapabilityDeps): X402Service {
  const o = deps.options.x402;
  if (!o) {
    deps.describe(() => "x402: off (set options.x402 to accept PAYMENT-SIGNATURE payments)");
    return {
      enabled: false,
      offers: () => Promise.reject(notConfigured()),
      challenge: () => Promise.reject(notConfigured()),
      verify: () => Promise.reject(notConfigured()),
      settle: () => Promise.reject(notConfigured()),
      release: async () => {},
      checkLateTransfers: async () => 0,
    };
  }
  const chainConfigs = deps.options.chains ?? [];
  const missing = o.networks.flatMap((n, i) =>
    chainConfigs.some((c) => c.chainId === n.chainId) ? [] : [`x402.networks.${i}.chainId: chain ${n.chainId} is not listed in options.chains (add { chainId: ${n.chainId}, rpcUrl, usdc })`],
  );
  if (missing.length > 0) throw new GatewayOptionsError(missing);

  const maxTimeoutSeconds = o.maxTimeoutSeconds ?? DEFAULT_MAX_TIMEOUT_SECONDS;
  const settleCheckMs = (o.settleCheckSeconds ?? DEFAULT_SETTLE_CHECK_SECONDS) * 1000;
  // The slowest configured upstream (60 s when none sets its own): a payment must outlive the wait for
  // it, twice its timeout (a stream pays at its first event: after the header wait and an idle gap).
  const upstreamMs = Object.values(deps.options.media?.providers ?? {}).map((p) => (p.type === "openai-compatible" ? (p.timeoutMs ?? 60_000) : 0));
  const margin = acceptMarginSeconds(maxTimeoutSeconds, (2 * Math.max(60_000, ...upstreamMs)) / 1000);
  const networks = new Map<string, Network>();
  for (const n of o.networks) {
    const cfg = chainConfigs.find((c) => c.chainId === n.chainId)!;
    const f = n.facilitator;
    const chain = createViemChain({ rpcUrl: cfg.rpcUrl, chainId: cfg.chainId, usdc: cfg.usdc, ...(f.type === "local" ? { privateKey: f.privateKey } : {}) });
    const facilitator =
      f.type === "local"
        ? createLocalFacilitator({ chains: [chain], clock: deps.clock })
        : createHttpFacilitator({ url: f.url, http: deps.http, ...(f.headers ? { headers: f.headers } : {}), ...(f.timeoutMs ? { timeoutMs: f.timeoutMs } : {}) });
    const label = f.type === "local" ? `local facilitator ${chain.account}` : `facilitator ${new URL(f.url).host}`;
    networks.set(networkOf(n.chainId), { network: networkOf(n.chainId), chainId: n.chainId, chain, facilitator, label });
  }
  const chains = new Map([...networks.values()].map((n) => [n.network, n.chain] as const));
  const watch = newLateTransferWatch();
  const checkLate = (signal?: AbortSignal) => checkLateTransfers(deps, chains, watch, signal);
  scheduleLateTransferChecks(deps, checkLate, (o.lateTransferCheckSeconds ?? DEFAULT_LATE_TRANSFER_CHECK_SECONDS) * 1000);
  deps.describe(() => `x402: on (payTo ${o.payTo}; ${[...networks.values()].map((n) => `${n.network} via ${n.label}`).join(", ")}; maxTimeoutSeconds ${maxTimeoutSeconds})`);

  async function offer(n: Network, amount: bigint): Promise<PaymentRequirements> {
    if (amount < 0n) throw new GatewayError("internal_error", "x402: a price cannot be negative");
    let domain;
    try {
      domain = await n.chain.tokenDomain();
    } catch (error) {
      throw new GatewayError("upstream_error", `x402: could not read the USDC domain on ${n.network}`, { cause: error });
    }
    return { scheme: "exact", network: n.network, amount: amount.toString(), asset: n.chain.usdc, payTo: o!.payTo, maxTimeoutSeconds, extra: { name: domain.name, version: domain.version } };
  }

  const offers = (amount: bigint) => Promise.all([...networks.values()].map((n) => offer(n, amount)));
  const refuse = (reason: RefusalReason, message: string): PaymentRefusal => ({ ok: false, reason, message });
  /** How long a claim counts against its payer's balance at most (its call is served by then; one whose settlement failed may linger). */
  const OPEN_CLAIM_MS = 15 * 60_000;
  /** How far behind the chain a balance read may be (an RPC node a block or two behind, clocks of several instances). */
  const BALANCE_LAG_MS = 10_000;

  /** The claim of a settle that may still land is watched from the store (./late-transfers.ts) until the authorization is void. */
  const markUnsure = async (payment: VerifiedPayment, payTo: Address) => {
    const checkUntil = Number(payment.validBefore) * 1000 + LATE_TRANSFER_MARGIN_MS;
    const input = { network: payment.network, payer: payment.payer, nonce: payment.nonce, requestId: payment.requestId, payTo, checkUntil };
    await deps.store.markPaymentNonceUnsure(input).catch((err: unknown) =>
      deps.logger.error({ err, network: payment.network, payer: payment.payer, nonce: payment.nonce }, "x402: could not record an unsure settlement: its transfer is not watched"),
    );
  };

  const service: X402Service = {
    enabled: true,

    offers: (input) => offers(input.amount),

    async challenge(input) {
      const body: PaymentRequiredBody = {
        x402Version: 2,
        error: input.error,
        resource: { url: input.resourceUrl, description: input.description || (o.description ?? ""), mimeType: input.mimeType },
        accepts: await offers(input.amount),
      };
      return { body, header: encodeHeader(body) };
    },

    async verify(input) {
      const decoded = decodeHeader(input.header);
      if (!decoded.ok) return refuse("malformed", `PAYMENT-SIGNATURE: ${decoded.message}`);
      const version = (decoded.value as { x402Version?: unknown } | null)?.x402Version;
      if (version !== 2) return refuse("malformed", `PAYMENT-SIGNATURE: x402Version must be 2 (got ${JSON.stringify(version) ?? "none"})`);
      const parsed = paymentPayloadSchema.safeParse(decoded.value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return refuse("malformed", `PAYMENT-SIGNATURE: ${issue ? `${issue.path.join(".") || "payload"}: ${issue.message}` : "not an x402 v2 payment payload"}`);
      }
      const payload = parsed.data;
      if (payload.accepted.scheme !== "exact") return refuse("unsupported_scheme", `scheme "${payload.accepted.scheme}" is not accepted (only "exact")`);
      const n = networks.get(payload.accepted.network);
      if (!n) return refuse("wrong_network", `network ${payload.accepted.network} is not accepted (accepted: ${[...networks.keys()].join(", ")})`);
      const requirements = await offer(n, input.amount);
      // Valid long enough for the upstream call and the settlement after it, not just for the facilitator's check.
      const checked = checkExactPayment(payload, requirements, deps.clock.now() / 1000, margin);
      if (!checked.ok) return refuse(refusalOf(checked.invalidReason), checked.invalidMessage);
      const { payment } = checked;
      // A store records amounts up to its maxAmount (SQLite: 2^63 - 1); a larger authorization overpays by trillions of USDC.
      if (payment.authorization.value > deps.store.maxAmount)
        return refuse("invalid_payment", `the authorization is for ${payment.authorization.value} atomic units, above the most this gateway records (${deps.store.maxAmount}): sign one for the price`);
      const verifiedAt = deps.clock.now();
      const verdict = await n.facilitator.verify(payload, requirements);
      if (!verdict.isValid) return refuse(refusalOf(verdict.invalidReason), verdict.invalidMessage ?? `the facilitator refused the payment (${verdict.invalidReason ?? "no reason given"})`);
      // `exact` moves what is signed, and the receipt states the price: one for more would pay more than the receipt says.
      if (payment.authorization.value !== input.amount)
        return refuse("invalid_payment", `the authorization is for ${payment.authorization.value} atomic units; this call costs exactly ${input.amount}: sign the price`);
      const { validBefore, nonce, value } = payment.authorization;
      const now = deps.clock.now();
      const key = { network: n.network, payer: payment.payer, nonce };
      // The facilitator checked the balance against this authorization alone: it is claimed as is
      // only when none of the payer's other authorizations is being served; else all of them and
      // this one must fit the balance (a client cannot sign ten against one balance and be served ten times).
      // A claim settled since a balance was read counts too: that read may not show its transfer yet.
      const claim = (maxOpen: bigint, readAt: number) =>
        deps.store.claimPaymentNonce(
          Object.assign({ requestId: input.requestId, now, expiresAt: Number(validBefore) * 1000, amount: value, maxOpen, openSince: now - OPEN_CLAIM_MS, settledSince: readAt - BALANCE_LAG_MS }, key),
        );
      let claimed = await claim(value, verifiedAt);
      if (!claimed && (await deps.store.getPaymentNonce(key)) === null) {
        const readAt = deps.clock.now();
        const balance = await n.chain.balanceOf(payment.payer);
        claimed = await claim(balance, readAt);
        if (!claimed && (await deps.store.getPaymentNonce(key)) === null)
          return refuse(
            "insufficient_balance",
            `${payment.payer} has other payments in flight on ${n.network}; with this one they exceed its balance (${balance}): wait for them to settle, or for their authorizations to expire`,
          );
      }
      if (!claimed) return refuse("nonce_used", `nonce ${nonce} of ${payment.payer} has already been presented`);
      return {
        ok: true,
        payment: { requestId: input.requestId, network: n.network, chainId: n.chainId, payer: payment.payer, nonce, amount: payment.authorization.value, validBefore, payload, requirements },
      };
    },

    async settle(payment, options = {}) {
      const n = networks.get(payment.network);
      if (!n) throw new GatewayError("upstream_error", `x402: network ${payment.network} is not configured`);
      let result: SettleResponse;
      let lost: { error?: unknown; message: string } | undefined;
      try {
        result = await n.facilitator.settle(payment.payload, payment.requirements);
        if (!result.success || !result.transaction)
          lost = { message: `${result.errorReason ?? "unknown reason"}${result.errorMessage ? ` (${result.errorMessage})` : ""}` };
      } catch (error) {
        result = { success: false, transaction: "", network: n.network };
        lost = { error, message: error instanceof Error ? error.message : String(error) };
      }
      if (lost) {
        // A transport failure, a transaction sent (a hash, "settlement_pending") or failed to
        // confirm, or a reason this gateway does not know may still have moved the funds: the chain
        // says whether it did. Only a refusal made before sending (bad signature, funds…) sent nothing.
        const unsure = lost.error !== undefined || Boolean(result.transaction) || !REFUSED_BEFORE_SENDING.has(result.errorReason ?? "");
        const transfer = { payer: payment.payer, nonce: payment.nonce, payTo: payment.requirements.payTo.toLowerCase() as Address, value: payment.amount };
        const landed = unsure ? await landedTransfer(n.chain, transfer, settleCheckMs) : null;
        if (!landed) {
          if (unsure) await markUnsure(payment, transfer.payTo);
          // `settlementUnsure`: the transfer may still land (it is watched for); else it surely moved nothing.
          throw new GatewayError("upstream_error", `x402 settlement on ${n.network} failed: ${lost.message}`, {
            details: { settlementUnsure: unsure },
            ...(lost.error === undefined ? {} : { cause: lost.error }),
          });
        }
        deps.logger.warn({ err: lost.error, reason: lost.message, txHash: landed, network: n.network }, "x402: the facilitator's settle failed, but the transfer landed on-chain");
        result = { success: true, transaction: landed, network: n.network, payer: payment.payer };
      }
      const response: SettleResponse = { success: true, transaction: result.transaction, network: n.network, payer: result.payer ?? payment.payer };
      const videoJob = options.videoJob?.(response);
      let recorded = false;
      try {
        recorded = await deps.store.markPaymentNonceSettled({
          network: n.network,
          payer: payment.payer,
          nonce: payment.nonce,
          requestId: payment.requestId,
          txHash: result.transaction,
          now: deps.clock.now(),
          ...(videoJob ? { videoJob } : {}),
        });
      } catch (error) {
        // The funds moved: the client must get its answer. The claim stays `claimed`, which still
        // refuses replays, and the chain refuses the used nonce anyway.
        deps.logger.error({ err: error, txHash: result.transaction, network: n.network }, "x402: settled, but could not record the settlement");
      }
      // Paid for: the job the client is told about must exist even if the claim could not be marked.
      if (videoJob && !recorded) await deps.store.insertVideoJob(videoJob);
      return { header: encodeHeader(response), response };
    },

    async release(payment) {
      await deps.store.releasePaymentNonce({ network: payment.network, payer: payment.payer, nonce: payment.nonce, requestId: payment.requestId });
    },

    checkLateTransfers: () => checkLate(),
  };
  // Every verification is counted (valid, a refusal reason, or error when it threw).
  return {
    ...service,
    async verify(input) {
      let result = "error";
      try {
        const verdict = await service.verify(input);
        result = verdict.ok ? "valid" : verdict.reason;
        return verdict;
      } finally {
        deps.telemetry.x402Verified(result);
      }
    },
  };
}
