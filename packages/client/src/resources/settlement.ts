/** `client.settlement`: deferred settlement state and the internal batch (docs/settlement.md "Settlement"). */
import type { APIPromise } from "../api-promise.js";
import type { Caller } from "../http/caller.js";
import type { RequestOptions } from "../options.js";

/** The active session budget of a wallet on a chain, with its charges waiting for settlement. Decimal strings. */
export type SettlementStatus =
  | { hasActiveBudget: false }
  | {
      hasActiveBudget: true;
      budget: { keyId: string; totalWei: string; lockedWei: string; usedWei: string; availableWei: string; pendingWei: string; pendingIntents: number; expiresAt: number };
    };

/** One (wallet, chain) group of a batch: `txHash` when it moved, `error` when it stays queued. */
export interface SettlementGroupResult {
  wallet: string;
  chainId: number;
  amountWei: string;
  intentCount: number;
  txHash?: string;
  error?: string;
}

/** The result of a batch run. */
export interface SettlementBatchResult {
  /** `run_…`. */
  runId: string;
  startedAt: number;
  finishedAt: number;
  totalGroups: number;
  totalIntents: number;
  totalValueWei: string;
  successCount: number;
  failCount: number;
  results: SettlementGroupResult[];
}

/** The `client.settlement` group. */
export interface SettlementResource {
  /**
   * The session budget of the proven wallet (as for `keys.list`) on `chainId` (else the
   * client's `networkId`, else the gateway's default chain).
   */
  status(params?: { chainId?: number }, options?: RequestOptions): APIPromise<SettlementStatus>;
  /**
   * Internal: settles queued charges on-chain with `internalSecret` (401 `unauthorized` when wrong,
   * 503 when settlement is off). Safe to run twice, so it is retried like a read.
   */
  batch(options?: RequestOptions): APIPromise<SettlementBatchResult>;
}

/** Builds `client.settlement`. */
export function settlementResource(caller: Caller): SettlementResource {
  return {
    status: (params = {}, options) =>
      caller.call({ method: "GET", path: "/api/settlement/status", idempotent: true, bearer: "wallet" }, params.chainId === undefined ? options : { ...options, networkId: params.chainId }),
    batch: (options) => caller.call({ method: "POST", path: "/api/settlement/batch", idempotent: true }, options),
  };
}
