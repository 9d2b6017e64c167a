/**
 * Deferred settlement: charges queued by settled payment intents are moved on-chain in batches,
 * one USDC `transferFrom(wallet, treasury, sum)` per (wallet, chain) with the chain's spender
 * wallet, against the allowance the wallet granted to it. A batch leases its charges in the store
 * (`claimCharges`, only on the chains it has a spender for), so two batches at once never settle
 * one charge twice; a failed group goes back to the queue with its error (after
 * `settlement.retryAfterMs`), behind the charges that never failed, so a wallet that cannot pay
 * never fills every batch ahead of the others. Each transfer is signed and recorded on its charges before it
 * is sent, so a transfer whose outcome is unknown (an answer lost, a crash) is finished later as
 * that same transaction, never paid a second time.
 */
import { secretsEqual } from "../secrets.js";
import type { CapabilityDeps } from "../capability.js";
import { ChainError, type Address, type Hex, type SignedTransaction } from "../chain/types.js";
import { createViemChain } from "../chain/viem-chain.js";
import { GatewayError } from "../errors.js";
import { GatewayOptionsError } from "../options.js";
import type { ChargeRecord, KeyPatch, KeyRecord } from "../store/types.js";
import { freezeWallet } from "./funding.js";
import { outcomeUnknown, resolveWalletChains } from "./options.js";

/** One (wallet, chain) group of a batch. */
export interface SettlementGroupResult {
  wallet: string;
  chainId: number;
  /** Sum of the group's charges (decimal string). */
  amountWei: string;
  /** How many charges (one per settled payment intent) the group holds. */
  intentCount: number;
  /** Set when the transfer succeeded. */
  txHash?: string;
  /** Set when it failed; the charges are back in the queue (or, if the outcome is unknown, stay leased). */
  error?: string;
}

/** The answer of `POST /api/settlement/batch` and of {@link SettlementService.runBatch}. */
export interface SettlementBatchResult {
  runId: string;
  startedAt: number;
  finishedAt: number;
  totalGroups: number;
  totalIntents: number;
  /** Sum over all groups, settled or not (decimal string). */
  totalValueWei: string;
  successCount: number;
  failCount: number;
  results: SettlementGroupResult[];
}

/** The answer of `GET /api/settlement/status`. Amounts are decimal strings. */
export type SettlementStatus =
  | { hasActiveBudget: false }
  | {
      hasActiveBudget: true;
      budget: { keyId: string; totalWei: string; lockedWei: string; usedWei: string; availableWei: string; pendingWei: string; pendingIntents: number; expiresAt: number };
    };

/** What the settlement capability offers to routes, the CLI and application code. */
export interface SettlementService {
  /** Whether `options.settlement` is set. */
  readonly configured: boolean;
  /** The chain of a status request without one: the first of `options.chains`. */
  readonly defaultChainId: number | undefined;
  /** Throws 503 `not_configured` (settlement off) or 401 `unauthorized` (missing or wrong secret). Constant-time. */
  authorize(secret: string | undefined): void;
  /** Runs one batch now. Throws 503 `not_configured` when settlement is off. Safe to run concurrently. */
  runBatch(): Promise<SettlementBatchResult>;
  /** The active session budget of a lower-case wallet on a chain, with its queued charges. */
  status(wallet: string, chainId: number): Promise<SettlementStatus>;
  /** The spender address per configured chain (what wallets must approve). */
  spenders(): { chainId: number; spender: string }[];
}

export { secretsEqual } from "../secrets.js";

/** How often a configured settlement runs a batch when `settlement.intervalMs` is not given. */
export const DEFAULT_SETTLEMENT_INTERVAL_MS = 600_000;

/**
 * Whether a failed `transferFrom` was refused for the wallet's own sake: mined and reverted (the
 * wallet's allowance or balance did not cover it when it ran), or its simulation reverted for the
 * allowance or the balance. A token-wide refusal (paused), a replacement by another call, a node's
 * refusal or an unreadable RPC is not the wallet's.
 */
function walletRefused(error: unknown): boolean {
  if (!(error instanceof ChainError) || !error.reverted) return false;
  return error.reason === undefined || /allowance|balance/i.test(error.reason);
}

/** Creates the settlement service (and its schedule, unless `settlement.intervalMs` is `false`). */
export function createSettlementService(deps: CapabilityDeps): SettlementService {
  const { store, clock, ids, options } = deps;
  const config = options.settlement;
  const intervalMs = config?.intervalMs === false ? undefined : (config?.intervalMs ?? DEFAULT_SETTLEMENT_INTERVAL_MS);
  const leaseMs = config?.leaseMs ?? 120_000;
  const batchLimit = config?.batchLimit ?? 500;
  const retryAfterMs = config?.retryAfterMs ?? 0;
  const entries = (config?.chains ?? []).map((c) => ({ chainId: c.chainId, privateKey: c.spenderPrivateKey }));
  // A transfer starts only in the first half of its batch's lease and gives up waiting for its
  // receipt after a quarter of it, so it ends (settled, failed or unknown) while the lease holds.
  const { wallets, issues } = resolveWalletChains(options.chains, entries, "settlement.chains", (o) => createViemChain({ ...o, receiptTimeoutMs: Math.floor(leaseMs / 4) }));
  // Two Chain instances of one wallet would race for nonces: one wallet, one role.
  entries.forEach((e, i) => {
    const twin = options.dispenser?.chains.find((d) => d.chainId === e.chainId && d.privateKey.toLowerCase() === e.privateKey.toLowerCase());
    if (twin) issues.push(`settlement.chains.${i}.spenderPrivateKey: is also the dispenser wallet of chain ${e.chainId}; use another wallet`);
  });
  if (issues.length > 0) throw new GatewayOptionsError(issues);

  const spenders = () => [...wallets.values()].map((w) => ({ chainId: w.config.chainId, spender: w.chain.account ?? "" }));
  deps.describe(() =>
    config
      ? `settlement: on, treasury ${config.treasury}, spender ${spenders().map((s) => `${s.spender} on chain ${s.chainId}`).join(", ") || "on no chain"}, ${intervalMs ? `a batch every ${intervalMs / 1000} s` : "batches on request"}, ${
          config.requireFunding === false ? "keys NOT backed by funds (requireFunding: false)" : "keys backed by the wallet's allowance and balance"
        }`
      : "settlement: off (set options.settlement with an internal secret, a treasury and a spender wallet per chain)",
  );

  const notConfigured = () =>
    new GatewayError("not_configured", "Settlement is not configured: set options.settlement ({ internalSecret, treasury, chains: [{ chainId, spenderPrivateKey }] }).");

  /**
   * Settles one group; the charges end settled, re-queued, or (outcome unknown) still leased. A
   * group of charges that carry a transfer from an earlier batch (`transferTx`) finishes that very
   * transaction; any other group signs one, records it on its charges, and only then sends it.
   */
  async function settleGroup(runId: string, leaseUntil: number, charges: ChargeRecord[]): Promise<SettlementGroupResult> {
    const first = charges[0]!;
    const amount = charges.reduce((sum, c) => sum + c.amount, 0n);
    const chargeIds = charges.map((c) => c.chargeId);
    const pending = first.transferTx as Hex | undefined;
    const result: SettlementGroupResult = { wallet: first.owner, chainId: first.chainId, amountWei: amount.toString(), intentCount: charges.length };
    // `dropTransfer` only once the recorded transaction surely moved nothing and never can.
    const fail = async (error: string, dropTransfer = false) => {
      await store.failCharges({ chargeIds, batchId: runId, error, dropTransfer, retryAt: clock.now() + retryAfterMs });
      return { ...result, error };
    };
    const record = async (tx: SignedTransaction) => {
      const marked = await store.recordChargeTransfer({ chargeIds, batchId: runId, transferTx: tx.raw });
      if (marked !== chargeIds.length) throw new Error(`batch ${runId} no longer holds every one of the group's ${chargeIds.length} charges; nothing was sent`);
    };
    const wallet = wallets.get(first.chainId);
    if (!wallet) return fail(`No settlement spender is configured for chain ${first.chainId} (add it to settlement.chains); the charges stay queued.`);
    // A transfer must finish well inside the lease, or another batch could take the same charges.
    // Not the group's failure: its charges stay leased (no error recorded, so they keep their place)
    // and a batch takes them once the lease lapses.
    if (clock.now() >= leaseUntil - leaseMs / 2)
      return { ...result, error: `The batch ran out of lease time before this group; a batch after ${new Date(leaseUntil).toISOString()} takes its charges.` };
    let txHash: string;
    try {
      txHash = pending ? await wallet.chain.resume(pending) : await wallet.chain.transferFrom(first.owner as Address, config!.treasury, amount, { beforeSend: record });
    } catch (error) {
      const message = (error as Error).message;
      if (outcomeUnknown(error))
        return {
          ...result,
          error: `The transfer's outcome is unknown (${message}); the charges keep its signed transaction and stay leased until ${new Date(leaseUntil).toISOString()}; a batch after that finishes this same transaction, which can land only once.`,
        };
      return fail(await freezeIfUnderfunded(first, amount, runId, message, walletRefused(error)), true);
    }
    await store.completeCharges({ chargeIds, batchId: runId, txHash, now: clock.now() });
    return { ...result, txHash };
  }

  /**
   * After a failed transfer: when the token refused it (`reverted`: the wallet's allowance or balance
   * did not cover it when it ran, whatever they read now: a wallet could drop its allowance just
   * before the transfer and restore it just after), or the wallet's allowance or balance is below
   * what the group needs, its keys on the chain are frozen ({@link freezeWallet}) and the error says
   * so; otherwise (or when the chain cannot be read, or funding is not required) the error is
   * `message` as it was.
   */
  async function freezeIfUnderfunded(first: ChargeRecord, amount: bigint, runId: string, message: string, reverted: boolean): Promise<string> {
    try {
      const have = await deps.funding.funding(first.owner, first.chainId);
      if (!have || (have.covered >= amount && !reverted)) return message;
      const update = (key: KeyRecord, patch: KeyPatch) => deps.keyGovernance.update(key, patch, `settlement:${runId}`);
      const { frozen, failed } = await freezeWallet({ store, clock, update }, first.owner, first.chainId);
      deps.telemetry.walletFrozen(frozen);
      deps.logger.warn({ runId, wallet: first.owner, chainId: first.chainId, frozen }, `settlement: wallet ${first.owner} cannot pay ${amount}; ${frozen} keys frozen`);
      for (const f of failed) deps.logger.error({ err: f.error, runId, wallet: first.owner, keyId: f.keyId }, "settlement: could not freeze a key of an underfunded wallet");
      const missed = failed.length > 0 ? `; ${failed.length} could not be cut (${failed.map((f) => f.keyId).join(", ")}), see the log` : "";
      const when = have.covered >= amount ? "could not pay when the transfer ran; now it can pay" : "can pay";
      return `${message} (the wallet ${when} ${have.covered}: allowance ${have.allowance}, balance ${have.balance}; its ${frozen} live keys on chain ${first.chainId} were cut to what they have committed, until their budgets are raised again${missed})`;
    } catch (error) {
      deps.logger.error({ err: error, runId, wallet: first.owner }, "settlement: could not check or freeze an underfunded wallet");
      return message;
    }
  }

  /** One batch, counted in the metrics (settled and failed groups, or an error when it threw). */
  async function runBatch(): Promise<SettlementBatchResult> {
    if (!config) throw notConfigured();
    try {
      const result = await runOneBatch();
      deps.telemetry.settlementBatch({ ok: true, settled: result.successCount, failed: result.failCount });
      return result;
    } catch (error) {
      deps.telemetry.settlementBatch({ ok: false });
      throw error;
    }
  }

  async function runOneBatch(): Promise<SettlementBatchResult> {
    const runId = ids.next("run");
    const startedAt = clock.now();
    const charges = await store.claimCharges({ batchId: runId, now: startedAt, leaseMs, limit: batchLimit, chainIds: [...wallets.keys()] });
    // Groups run in the claim's order of priority (a recorded transfer, then charges that never
    // failed, then failed ones; each as the store returns them, oldest first), so a batch that runs
    // out of lease time runs out on the failing groups, not on the others.
    const rank = (c: ChargeRecord) => (c.transferTx !== undefined ? 0 : c.error === undefined ? 1 : 2);
    const ordered = charges.map((c, i) => ({ c, i })).sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i);
    const groups = new Map<string, ChargeRecord[]>();
    for (const { c } of ordered) {
      // Charges that carry an earlier batch's transfer are finished with it, apart from any other.
      const key = c.transferTx ?? `${c.chainId}:${c.owner}`;
      const group = groups.get(key);
      if (group) group.push(c);
      else groups.set(key, [c]);
    }
    // Chains run side by side; one chain's groups run one after another (its spender sends one transaction at a time anyway).
    const byChain = new Map<number, ChargeRecord[][]>();
    for (const group of groups.values()) byChain.set(group[0]!.chainId, [...(byChain.get(group[0]!.chainId) ?? []), group]);
    const settled = new Map<ChargeRecord[], SettlementGroupResult>();
    await Promise.all(
      [...byChain.values()].map(async (chainGroups) => {
        for (const group of chainGroups) settled.set(group, await settleGroup(runId, startedAt + leaseMs, group));
      }),
    );
    const results = [...groups.values()].map((g) => settled.get(g)!);
    const successCount = results.filter((r) => r.txHash !== undefined).length;
    return {
      runId,
      startedAt,
      finishedAt: clock.now(),
      totalGroups: results.length,
      totalIntents: charges.length,
      totalValueWei: charges.reduce((sum, c) => sum + c.amount, 0n).toString(),
      successCount,
      failCount: results.length - successCount,
      results,
    };
  }

  if (config && intervalMs) schedule(deps, intervalMs, runBatch);

  return {
    configured: config !== undefined,
    defaultChainId: options.chains?.[0]?.chainId,
    authorize(secret) {
      if (!config) throw notConfigured();
      if (!secret) throw new GatewayError("unauthorized", "The x-internal-secret header is required.", { param: "x-internal-secret" });
      if (!secretsEqual(secret, config.internalSecret)) throw new GatewayError("unauthorized", "The x-internal-secret header is wrong.", { param: "x-internal-secret" });
    },
    runBatch,
    async status(wallet, chainId) {
      const key = await deps.keys.activeSession(wallet, chainId);
      if (!key) return { hasActiveBudget: false };
      const pending = await store.pendingChargeTotals(wallet, chainId);
      return {
        hasActiveBudget: true,
        budget: {
          keyId: key.keyId,
          totalWei: key.budgetLimit.toString(),
          lockedWei: key.budgetReserved.toString(),
          usedWei: key.budgetUsed.toString(),
          availableWei: (key.budgetLimit - key.budgetUsed - key.budgetReserved).toString(),
          pendingWei: pending.amount.toString(),
          pendingIntents: pending.count,
          expiresAt: key.expiresAt,
        },
      };
    },
    spenders,
  };
}

/** Runs `run` every `intervalMs` (the next run is timed from the end of the previous: one at a time); stopped by `gateway.close()`. */
function schedule(deps: CapabilityDeps, intervalMs: number, run: () => Promise<SettlementBatchResult>): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = run()
        .then((r) => {
          if (r.failCount > 0) deps.logger.warn({ runId: r.runId, failCount: r.failCount, totalGroups: r.totalGroups }, `settlement batch ${r.runId}: ${r.failCount} of ${r.totalGroups} groups failed; they stay queued`);
        })
        .catch((err: unknown) => deps.logger.error({ err }, "settlement batch failed"))
        .finally(() => {
          running = undefined;
          next();
        });
    }, intervalMs);
    (timer as { unref?: () => void }).unref?.();
  };
  next();
  deps.onClose(async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await running;
  });
}
