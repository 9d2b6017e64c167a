/** `client.usage`: a wallet's spend by day and by model (`GET /api/usage`), the dashboard's data. */
import type { APIPromise } from "../api-promise.js";
import type { Caller } from "../http/caller.js";
import type { RequestOptions } from "../options.js";

/** The spend of one UTC day. */
export interface UsageDay {
  /** `YYYY-MM-DD` (UTC). */
  date: string;
  /** USDC atomic units, a decimal string. */
  spent: string;
  /** Paid calls (charges) that day. */
  calls: number;
}

/** The spend on one model over the range. */
export interface UsageModel {
  /** The catalog model id; `null` groups charges that paid for no catalog model (a `maxAmountWei` intent, a caller-priced meter, the legacy key settle). */
  modelId: string | null;
  /** USDC atomic units, a decimal string. */
  spent: string;
  calls: number;
}

/** The usage of a proven wallet over a range of UTC days. */
export interface WalletUsage {
  /** The wallet, lower-case. */
  wallet: string;
  /** First day of the range, `YYYY-MM-DD` (UTC). */
  from: string;
  /** Last day of the range, included. */
  to: string;
  /** Every day of the range, ascending; days without charges are `"0"` / 0. */
  days: UsageDay[];
  /** Models with charges in the range, by `spent` descending, then `modelId`; the `null` group last among equals. */
  models: UsageModel[];
  /**
   * `spent` and `calls` over the range; `reserved`: the budget the wallet's open reservations
   * hold now (whenever they were made), not part of `spent`.
   */
  totals: { spent: string; calls: number; reserved: string };
}

/** The range and chain of `usage.get`. A `Date` stands for its UTC day. */
export interface UsageParams {
  /** First day (included). @default `to` − 29 days */
  from?: string | Date;
  /** Last day (included). @default today (UTC) by the gateway's clock */
  to?: string | Date;
  /** Only keys on this chain. @default every chain */
  chainId?: number;
}

/** The `client.usage` group. */
export interface UsageResource {
  /**
   * The spend of the proven wallet (as for `keys.list`: the session token, else a key of the
   * wallet, else the internal secret with `sessionAddress`) from the ledger: every key's charges,
   * by UTC day and by model, at most 366 days; 400 `invalid_request` (param `from`/`to`) for a
   * malformed day, `from` after `to`, or a longer range.
   */
  get(params?: UsageParams, options?: RequestOptions): APIPromise<WalletUsage>;
}

/** `YYYY-MM-DD` of a day given as text or as a Date (its UTC day). */
const dayParam = (day: string | Date | undefined) => (day instanceof Date ? day.toISOString().slice(0, 10) : day);

/** Builds `client.usage`. */
export function usageResource(caller: Caller): UsageResource {
  return {
    get: (params = {}, options) =>
      caller.call(
        {
          method: "GET",
          path: "/api/usage",
          query: { from: dayParam(params.from), to: dayParam(params.to), chainId: params.chainId },
          idempotent: true,
          bearer: "wallet",
        },
        options,
      ),
  };
}
