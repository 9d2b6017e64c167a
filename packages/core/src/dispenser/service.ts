/**
 * The test-funds dispenser: sends `claimAmount` USDC to an address, once per (address, chain).
 * The claim is taken in the store (a guarded insert of a `pending` claim) BEFORE the transfer, so
 * of any number of concurrent claims exactly one reaches the chain (money invariant 5, docs/architecture.md); a
 * failed transfer releases the pending claim so the address can try again. The signed transfer is
 * recorded on the claim before it is sent: a claim whose transfer had an unknown outcome is finished
 * with that same transaction when its address claims again after {@link STALE_CLAIM_MS}.
 */
import type { CapabilityDeps } from "../capability.js";
import type { Address, Hex, SignedTransaction } from "../chain/types.js";
import { GatewayError, invalidRequest } from "../errors.js";
import { GatewayOptionsError } from "../options.js";
import { outcomeUnknown, resolveWalletChains, type WalletChain } from "../settlement/options.js";
import type { DispenserClaimRecord } from "../store/dispenser-types.js";
import { formatUsdc } from "./format.js";
import { DEFAULT_CLAIM_AMOUNT } from "./options.js";

/**
 * How long after it was taken a pending claim is finished by the next claim of its address: longer
 * than a claim's own request waits for its transfer (the receipt for up to 2 minutes).
 */
export const STALE_CLAIM_MS = 180_000;

/** One chain's dispenser as `GET /api/dispenser/status` shows it. */
export interface DispenserChainStatus {
  chainId: number;
  chainName: string;
  /** The dispenser wallet (lower-case), null when the chain has no dispenser. */
  dispenserAddress: string | null;
  usdcAddress: string;
  /** The wallet's USDC balance read live from the chain (atomic units, decimal string); null when unknown. */
  balance: string | null;
  /** The same as `balance` under the origin API's name. */
  dispenserBalance: string | null;
  /** `balance` formatted exactly, e.g. `"$12.50 USDC"` (see `formatUsdc`); null when unknown. */
  dispenserBalanceFormatted: string | null;
  /** Claims taken on this chain (pending and done). */
  totalClaims: number;
  /** The configured cap; null = unlimited. */
  maxClaims: number | null;
  /**
   * Claims still possible: the smaller of `maxClaims - totalClaims` and `balance / claimAmount`
   * (whichever are known); null when neither is; 0 when the chain has no dispenser.
   */
  remainingClaims: number | null;
  isPaused: boolean;
  isConfigured: boolean;
  /** Why `balance` is null when the chain could not be read. */
  error?: string;
}

/** The answer of `GET /api/dispenser/status`. */
export interface DispenserStatusSummary {
  dispensers: DispenserChainStatus[];
  /** USDC atomic units per claim. */
  claimAmount: number;
  /** `claimAmount` formatted exactly, e.g. `"$1.00 USDC"`. */
  claimAmountFormatted: string;
  /**
   * The claim cap of the dispenser chains (the origin API's single figure): the largest
   * `maxClaims` of the configured dispenser chains; 0 when none is configured (no claim is
   * possible); null when one of them is unlimited.
   */
  maxClaims: number | null;
}

/** The answer of `GET /api/dispenser/check/{address}`. */
export interface DispenserCheck {
  address: string;
  /** True when the address holds a claim (done or in flight) on at least one chain. */
  hasClaimed: boolean;
  /** `status: "pending"` while a transfer is under way (then `claimedAt` and `txHash` are null). */
  claims: { chainId: number; claimedAt: number | null; txHash: string | null; status: DispenserClaimRecord["status"] }[];
}

/** The outcome of a claim: a transfer, or the existing claim of the pair (an expected outcome, not an error). */
export type DispenserClaimOutcome =
  | { ok: true; chainId: number; claimAmount: number; txHash: string }
  | { ok: false; alreadyClaimed: true; claimAmount: number; claim: DispenserClaimRecord };

/** What the dispenser capability offers to routes and application code. */
export interface DispenserService {
  /** Whether `options.dispenser` is set. */
  readonly configured: boolean;
  /** USDC atomic units per claim. */
  readonly claimAmount: number;
  /** Throws 503 `not_configured` when the dispenser is off. */
  assertConfigured(): void;
  /**
   * Claims for a lower-case `address` on `chainId`. Throws 503 `not_configured` (dispenser off,
   * chain paused or out of claims), 400 `invalid_request` (no dispenser on that chain), 502
   * `upstream_error` (the transfer failed; the address may claim again).
   */
  claim(address: string, chainId: number): Promise<DispenserClaimOutcome>;
  /** Every chain of `options.chains` plus every dispenser chain, balances read live. */
  status(): Promise<DispenserStatusSummary>;
  /** One chain's status, or null when it has no dispenser. */
  chainStatus(chainId: number): Promise<DispenserChainStatus | null>;
  /** The claims of a lower-case address. */
  check(address: string): Promise<DispenserCheck>;
}

type DispenserChainOptions = NonNullable<CapabilityDeps["options"]["dispenser"]>["chains"][number];

/** Creates the dispenser service; throws `GatewayOptionsError` when a dispenser chain is not in `options.chains`. */
export function createDispenserService(deps: CapabilityDeps): DispenserService {
  const { store, clock, options } = deps;
  const config = options.dispenser;
  const claimAmount = config?.claimAmount ?? DEFAULT_CLAIM_AMOUNT;
  const entries = new Map<number, DispenserChainOptions>((config?.chains ?? []).map((c) => [c.chainId, c]));
  const { wallets, issues } = resolveWalletChains(options.chains, (config?.chains ?? []).map((c) => ({ chainId: c.chainId, privateKey: c.privateKey })), "dispenser.chains");
  if (issues.length > 0) throw new GatewayOptionsError(issues);

  deps.describe(() =>
    config
      ? `dispenser: on, ${formatUsdc(BigInt(claimAmount)).slice(1)} per claim on chains ${[...wallets.values()].map((w) => `${w.config.chainId} (wallet ${w.chain.account}${entries.get(w.config.chainId)?.paused ? ", paused" : ""})`).join(", ")}`
      : "dispenser: off (set options.dispenser with a funded wallet per chain)",
  );

  const assertConfigured = () => {
    if (!config) throw new GatewayError("not_configured", "The dispenser is not configured: set options.dispenser ({ chains: [{ chainId, privateKey }] }) and options.chains.");
  };

  const configuredIds = () => [...wallets.keys()].sort((a, b) => a - b);

  async function statusOf(chainId: number, wallet: WalletChain | undefined): Promise<DispenserChainStatus> {
    const chainConfig = wallet?.config ?? options.chains?.find((c) => c.chainId === chainId);
    const entry = entries.get(chainId);
    const totalClaims = await store.countDispenserClaims(chainId);
    const base = {
      chainId,
      chainName: chainConfig?.name ?? `chain ${chainId}`,
      usdcAddress: chainConfig?.usdc ?? "",
      totalClaims,
      isPaused: entry?.paused ?? false,
    };
    if (!wallet || !wallet.chain.account)
      return Object.assign(base, {
        dispenserAddress: null,
        balance: null,
        dispenserBalance: null,
        dispenserBalanceFormatted: null,
        maxClaims: null,
        remainingClaims: 0,
        isConfigured: false,
      });
    let balance: bigint | null = null;
    let error: string | undefined;
    try {
      balance = await wallet.chain.balanceOf(wallet.chain.account);
    } catch (e) {
      error = `balance unavailable: ${(e as Error).message}`;
    }
    const limits: number[] = [];
    if (entry?.maxClaims !== undefined) limits.push(Math.max(0, entry.maxClaims - totalClaims));
    if (balance !== null) limits.push(Number(balance / BigInt(claimAmount)));
    return Object.assign(base, {
      dispenserAddress: wallet.chain.account,
      balance: balance === null ? null : balance.toString(),
      dispenserBalance: balance === null ? null : balance.toString(),
      dispenserBalanceFormatted: balance === null ? null : formatUsdc(balance),
      maxClaims: entry?.maxClaims ?? null,
      remainingClaims: limits.length > 0 ? Math.min(...limits) : null,
      isConfigured: true,
      ...(error === undefined ? {} : { error }),
    });
  }

  /**
   * A claim still pending {@link STALE_CLAIM_MS} after it was taken is one whose request has long
   * given up (or crashed). With its signed transfer recorded, its outcome was unknown: finished here
   * with that very transaction. With none recorded, nothing was ever sent (a transfer is recorded
   * before it is sent): released. Returns the claim as it stands (claimed, or still pending when
   * still unknown), or "released" when it surely moved nothing. Any other claim is returned as it is.
   * A request that still held a released claim can no longer record, complete or release it: the
   * store acts only on the claim taken at its `createdAt`.
   */
  async function finishStale(wallet: WalletChain, claim: DispenserClaimRecord): Promise<DispenserClaimRecord | "released"> {
    if (claim.status !== "pending" || clock.now() - claim.createdAt < STALE_CLAIM_MS) return claim;
    const { address, chainId, createdAt } = claim;
    if (claim.transferTx === undefined) return (await store.releaseDispenserClaim({ address, chainId, createdAt, transferTx: null })) ? "released" : claim;
    try {
      const txHash = await wallet.chain.resume(claim.transferTx as Hex);
      const done = await store.completeDispenserClaim({ address, chainId, createdAt, transferTx: claim.transferTx, txHash, now: clock.now() });
      return done ?? (await store.listDispenserClaims(address)).find((c) => c.chainId === chainId) ?? claim;
    } catch (error) {
      if (outcomeUnknown(error)) return claim;
      await store.releaseDispenserClaim({ address, chainId, createdAt, transferTx: claim.transferTx });
      return "released";
    }
  }

  const service: DispenserService = {
    configured: config !== undefined,
    claimAmount,
    assertConfigured,

    async claim(address, chainId) {
      assertConfigured();
      const wallet = wallets.get(chainId);
      if (!wallet) throw invalidRequest(`No dispenser on chain ${chainId}; configured chains: ${configuredIds().join(", ")}.`, "chainId", { chainIds: configuredIds() });
      const entry = entries.get(chainId);
      if (entry?.paused) throw new GatewayError("not_configured", `The dispenser on chain ${chainId} is paused.`, { details: { reason: "paused", chainId } });
      const begun = await store.beginDispenserClaim({
        claim: { address, chainId, amount: BigInt(claimAmount), createdAt: clock.now() },
        ...(entry?.maxClaims === undefined ? {} : { maxClaims: entry.maxClaims }),
      });
      if (!begun.ok && begun.reason === "already_claimed") {
        const finished = await finishStale(wallet, begun.claim);
        // The stale claim's transfer surely moved nothing: it was released, so this is a claim anew.
        if (finished === "released") return service.claim(address, chainId);
        return { ok: false, alreadyClaimed: true, claimAmount, claim: finished };
      }
      if (!begun.ok)
        throw new GatewayError("not_configured", `The dispenser on chain ${chainId} has served its ${entry?.maxClaims} claims.`, {
          details: { reason: "max_claims_reached", chainId, maxClaims: entry?.maxClaims },
        });
      let txHash: string;
      // The claim is this request's while it is the one it took and its recorded transfer is the last one this request recorded.
      const { createdAt } = begun.claim;
      let recorded: string | null = null;
      try {
        const beforeSend = async (tx: SignedTransaction) => {
          if (!(await store.recordDispenserTransfer({ address, chainId, createdAt, transferTx: tx.raw, previous: recorded })))
            throw new Error(`the claim of ${address} on chain ${chainId} is no longer this request's`);
          recorded = tx.raw;
        };
        txHash = await wallet.chain.transfer(address as Address, BigInt(claimAmount), { beforeSend });
      } catch (error) {
        // A transfer that surely failed frees the claim so the address can try again; one that
        // was sent without a receipt may still land, so its claim stays pending (invariant 5).
        const unknown = outcomeUnknown(error);
        if (!unknown) await store.releaseDispenserClaim({ address, chainId, createdAt, transferTx: recorded });
        const what = unknown ? "has an unknown outcome (the claim stays pending)" : "failed (the address may claim again)";
        throw new GatewayError("upstream_error", `The dispenser transfer on chain ${chainId} ${what}: ${(error as Error).message}`, {
          details: { chainId, outcomeUnknown: unknown },
          cause: error,
        });
      }
      const done = await store.completeDispenserClaim({ address, chainId, createdAt, transferTx: recorded, txHash, now: clock.now() });
      if (!done) throw new GatewayError("internal_error", `The claim of ${address} on chain ${chainId} vanished while its transfer ${txHash} ran.`);
      return { ok: true, chainId, claimAmount, txHash };
    },

    async status() {
      const ids = new Set<number>([...(options.chains ?? []).map((c) => c.chainId), ...wallets.keys()]);
      const dispensers = await Promise.all([...ids].map((id) => statusOf(id, wallets.get(id))));
      const caps = [...wallets.keys()].map((id) => entries.get(id)?.maxClaims ?? null);
      const maxClaims = caps.length === 0 ? 0 : caps.includes(null) ? null : Math.max(...(caps as number[]));
      return { dispensers, claimAmount, claimAmountFormatted: formatUsdc(BigInt(claimAmount)), maxClaims };
    },

    async chainStatus(chainId) {
      const wallet = wallets.get(chainId);
      return wallet ? statusOf(chainId, wallet) : null;
    },

    async check(address) {
      const claims = await store.listDispenserClaims(address);
      return {
        address,
        hasClaimed: claims.length > 0,
        claims: claims.map((c) => ({ chainId: c.chainId, claimedAt: c.claimedAt ?? null, txHash: c.txHash ?? null, status: c.status })),
      };
    },
  };
  return service;
}
