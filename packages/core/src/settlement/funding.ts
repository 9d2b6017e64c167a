/**
 * The funding guard: a key's budget on a settlement chain is credit the gateway extends against
 * the wallet's USDC allowance to the settlement spender. Before a key is created, or a key's budget
 * is raised (or an expired key revived), the wallet's exposure on that chain — its live keys'
 * unspent budgets, the reservations its other keys still hold, and its queued charges — must fit
 * in what a batch could collect:
 * `min(allowance(owner, spender), balanceOf(owner))`, read from the chain at that moment.
 * After a batch fails to collect from an underfunded wallet, the settlement service cuts the
 * wallet's keys down to what they have committed ({@link freezeWallet}).
 */
import { privateKeyToAccount } from "viem/accounts";
import type { Address, Chain } from "../chain/types.js";
import type { ChainConfig } from "../chain/options.js";
import { createViemChain } from "../chain/viem-chain.js";
import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";
import { rolled } from "../keys/period.js";
import { isLiveKey } from "../store/key-limits.js";
import type { KeyRecord, Store } from "../store/types.js";
import type { Telemetry } from "../observability/telemetry.js";
import type { SettlementOptions } from "./options.js";

/** One write to check: the key it creates or changes, as it would be after the write. */
export interface FundingChange {
  /** What the created or changed key may still spend after the write, its open reservations included (limit − used, at least 0). */
  readonly remaining: bigint;
  /** The key being changed: its stored part is not counted beside `remaining`. */
  readonly replacing?: string | undefined;
  /** A new session key supersedes the owner's live session keys on the chain: only their open reservations count. */
  readonly supersedesSessions?: boolean | undefined;
  /** The request field a refusal names. @default "budgetLimit" */
  readonly param?: string | undefined;
}

/**
 * How long after its expiry a key still counts as live: a reserve stamps its time when the request
 * starts and the store compares the key's expiry with that time, so a prepare that began just
 * before the expiry may reserve just after it.
 */
export const EXPIRY_SLACK_MS = 60_000;

/** What a wallet could pay now and what the gateway would be owed. */
export interface WalletFunding {
  readonly spender: Address;
  readonly allowance: bigint;
  readonly balance: bigint;
  /** `min(allowance, balance)`. */
  readonly covered: bigint;
}

/** The guard (one per gateway). Every method is a no-op on a chain without a settlement spender. */
export interface FundingGuard {
  /** Whether keys on `chainId` are backed by on-chain funds (settlement is on for it and the check is not turned off). */
  checks(chainId: number): boolean;
  /**
   * Whether a key may spend on `chainId`: settlement is off (keys are then the operator's credit,
   * collected some other way), or it has a spender on that chain. With settlement on, a key on
   * any other chain would spend and nothing would ever collect its charges.
   */
  settles(chainId: number): boolean;
  /** The chains settlement has a spender on (empty when settlement is off). */
  readonly settledChains: readonly number[];
  /**
   * Runs `write` if the wallet's funds cover its exposure after the write; otherwise throws 402
   * `insufficient_funds` (details: spender, allowance, balance, required) and writes nothing. An
   * RPC failure is 503 `chain_unavailable`. Checks and writes of one wallet and chain run one at a
   * time in this process, and `change` is computed inside that turn (from a fresh read, when it
   * reads), so two concurrent writes cannot both spend the same headroom here. `change` resolving
   * to undefined means the write adds no spending power: it runs unchecked, still in turn. With
   * `undo`, the exposure is read again after the write (and the chain after it), and a write
   * another process's write pushed over the funds meanwhile is taken back (`undo`) and refused
   * the same way: across processes, at most the funds are extended (but for what a key reserves
   * between its write and its undo), though two racing writes may both be refused. A write that
   * throws is not checked again.
   */
  guard<T>(
    wallet: { owner: string; chainId: number },
    change: () => Promise<FundingChange | undefined>,
    write: () => Promise<T>,
    undo?: (result: T) => Promise<void>,
  ): Promise<T>;
  /** The wallet's allowance and balance for the spender of `chainId` (undefined when not checked there). */
  funding(owner: string, chainId: number): Promise<WalletFunding | undefined>;
}

/**
 * What the owner's keys on `chainId` may still add to its charges, with `change` applied, from one
 * read of its keys ({@link Store.listHeldKeys}): each live key's unspent budget in its current
 * window, its open reservations included (a lapsed window has its whole limit again), and the open
 * reservations of its revoked and expired keys (a payment intent outlives its key and still
 * settles). One read, so an abort or a settle cannot move an amount between two reads unseen; a
 * held amount of a revoked or expired key only goes down, or into the queue, read after this.
 */
async function keysExposure(store: Store, owner: string, chainId: number, change: FundingChange, now: number): Promise<bigint> {
  const liveAfter = now - EXPIRY_SLACK_MS;
  let total = change.remaining;
  for (const stored of await store.listHeldKeys(owner, chainId, liveAfter)) {
    if (stored.keyId === change.replacing) continue;
    // A superseded session key is revoked by the write: only what it holds may still be charged.
    const live = isLiveKey(stored, liveAfter) && !(change.supersedesSessions && stored.purpose === "session");
    total += live ? unspent(rolled(stored, now)) : stored.budgetReserved;
  }
  return total;
}

/** What a key may still spend in its window, its open reservations included: its limit less what it used (never below 0). */
export const unspent = (key: Pick<KeyRecord, "budgetLimit" | "budgetUsed">): bigint =>
  key.budgetLimit > key.budgetUsed ? key.budgetLimit - key.budgetUsed : 0n;

const chainUnavailable = (chainId: number, error: unknown) =>
  new GatewayError("chain_unavailable", `Could not read the wallet's USDC allowance and balance on chain ${chainId}: ${(error as Error).message}`, {
    cause: error,
  });

/**
 * Creates the guard for the chains that `settlement` has a spender on. `settlement.requireFunding:
 * false` turns it off (keys are then unbacked credit, as without settlement).
 */
export function createFundingGuard(deps: {
  store: Store;
  clock: Clock;
  chains: readonly ChainConfig[] | undefined;
  settlement: SettlementOptions | undefined;
  telemetry: Telemetry;
}): FundingGuard {
  const readers = new Map<number, { chain: Chain; spender: Address }>();
  if (deps.settlement && deps.settlement.requireFunding !== false)
    for (const entry of deps.settlement.chains) {
      const config = deps.chains?.find((c) => c.chainId === entry.chainId);
      // A settlement chain missing from options.chains is reported by the settlement service.
      if (!config || readers.has(entry.chainId)) continue;
      const spender = privateKeyToAccount(entry.spenderPrivateKey).address.toLowerCase() as Address;
      readers.set(entry.chainId, { chain: createViemChain({ rpcUrl: config.rpcUrl, chainId: config.chainId, usdc: config.usdc }), spender });
    }
  /** Per wallet and chain, the tail of the checks and writes in flight. */
  const tails = new Map<string, Promise<unknown>>();

  const funding = async (owner: string, chainId: number): Promise<WalletFunding | undefined> => {
    const reader = readers.get(chainId);
    if (!reader) return undefined;
    try {
      const [allowance, balance] = await Promise.all([reader.chain.allowance(owner as Address, reader.spender), reader.chain.balanceOf(owner as Address)]);
      return { spender: reader.spender, allowance, balance, covered: allowance < balance ? allowance : balance };
    } catch (error) {
      throw chainUnavailable(chainId, error);
    }
  };

  /** The wallet's exposure with `change` applied. Keys, then the queue: a settle landing between the reads is counted twice, never missed. */
  const exposure = async (owner: string, chainId: number, change: FundingChange): Promise<bigint> => {
    const keysPart = await keysExposure(deps.store, owner, chainId, change, deps.clock.now());
    return keysPart + (await deps.store.pendingChargeTotals(owner, chainId)).amount;
  };

  const refuse = (owner: string, chainId: number, have: WalletFunding, required: bigint, param: string | undefined) => {
    deps.telemetry.fundingRefused();
    return new GatewayError(
      "insufficient_funds",
      `Wallet ${owner} can pay ${have.covered} on chain ${chainId} (allowance ${have.allowance} to ${have.spender}, balance ${have.balance}), but its keys' budgets and queued charges would need ${required}. Approve the spender for more (and hold the USDC), or lower the budget.`,
      {
        param: param ?? "budgetLimit",
        details: { chainId, spender: have.spender, allowance: have.allowance.toString(), balance: have.balance.toString(), required: required.toString() },
      },
    );
  };

  /**
   * Check, write, check again. The chain is read after the first check's store reads (a batch
   * landing between them is counted twice, never missed). The second check reads the store with
   * the write in place: two processes writing for one wallet at once each see the other's write in
   * at least one of their second checks, and a write found over the funds is undone.
   */
  const checked = async <T>(
    owner: string,
    chainId: number,
    change: FundingChange,
    write: () => Promise<T>,
    undo: ((result: T) => Promise<void>) | undefined,
  ) => {
    const required = await exposure(owner, chainId, change);
    const have = (await funding(owner, chainId))!;
    if (required > have.covered) throw refuse(owner, chainId, have, required, change.param);
    const result = await write();
    if (!undo) return result;
    // Store, then chain again: a batch landing after the first chain read is not counted twice here.
    const after = await exposure(owner, chainId, { remaining: 0n });
    const now = (await funding(owner, chainId).catch(() => have))!;
    const least = now.covered < have.covered ? now : have;
    if (after <= least.covered) return result;
    await undo(result);
    throw refuse(owner, chainId, least, after, change.param);
  };

  const settledChains = [...new Set((deps.settlement?.chains ?? []).map((c) => c.chainId))];
  return {
    checks: (chainId) => readers.has(chainId),
    settles: (chainId) => deps.settlement === undefined || settledChains.includes(chainId),
    settledChains,
    funding,
    guard(wallet, change, write, undo) {
      if (!readers.has(wallet.chainId)) return write();
      const id = `${wallet.chainId}:${wallet.owner}`;
      const run = (tails.get(id) ?? Promise.resolve()).then(async () => {
        const computed = await change();
        return computed ? checked(wallet.owner, wallet.chainId, computed, write, undo) : write();
      });
      const tail = run.catch(() => undefined);
      tails.set(id, tail);
      void tail.then(() => {
        if (tails.get(id) === tail) tails.delete(id);
      });
      return run;
    },
  };
}

/**
 * Freezes an underfunded wallet on one chain: each of its live keys gets a budget limit equal to
 * what it has used and reserved, without a period (so no new window refills it), through `update`
 * (the key governance, which records the change as `actor`'s event). Reservations already held
 * still settle; nothing new fits until the owner raises the budget again, which the guard checks
 * against the funds. A key that reserved more meanwhile is re-read and cut again; a key whose
 * update fails otherwise is listed in `failed` and the others are still cut.
 */
export async function freezeWallet(
  deps: { store: Store; clock: Clock; update: (key: KeyRecord, patch: { budgetLimit: bigint; budgetPeriod: null }) => Promise<KeyRecord> },
  owner: string,
  chainId: number,
): Promise<{ frozen: number; failed: { keyId: string; error: unknown }[] }> {
  let frozen = 0;
  const failed: { keyId: string; error: unknown }[] = [];
  const now = deps.clock.now();
  const isLive = (k: KeyRecord) => isLiveKey(k, now);
  const keys = (await deps.store.listHeldKeys(owner, chainId, now)).filter(isLive);
  // Overdue reservations go back first (release on read), so they are not frozen in as committed.
  const held = keys.filter((k) => k.budgetReserved > 0n).map((k) => k.keyId);
  if (held.length > 0) await deps.store.releaseOverdueIntents(held, now);
  for (const live of held.length > 0 ? (await deps.store.listHeldKeys(owner, chainId, now)).filter(isLive) : keys) {
    let key: KeyRecord | null = live;
    for (let attempt = 0; key && attempt < 5; attempt++) {
      // The store rolls a lapsed window before it compares: what counts is the current window's use.
      const current = rolled(key, now);
      const committed = current.budgetUsed + current.budgetReserved;
      if (key.budgetLimit <= committed && key.budgetPeriod === undefined) break;
      try {
        await deps.update(key, { budgetLimit: committed, budgetPeriod: null });
        frozen++;
        break;
      } catch (error) {
        if (!(error instanceof GatewayError && error.code === "limit_below_committed")) {
          failed.push({ keyId: key.keyId, error });
          break;
        }
        key = await deps.store.getKeyById(key.keyId);
      }
    }
  }
  return { frozen, failed };
}
