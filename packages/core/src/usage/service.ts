/**
 * Usage: a wallet's spend from the ledger over a range of UTC days, by day (every day of the
 * range, zero-filled) and by model, with the budget its open reservations hold now. The store
 * aggregates the charges; this service resolves the range, fills the days and orders the models.
 * Amounts stay bigint until they become decimal strings here.
 */
import { z } from "zod";
import type { Clock } from "../clock.js";
import { invalidRequest } from "../errors.js";
import type { Store } from "../store/types.js";

/** One UTC day in milliseconds. */
export const DAY_MS = 86_400_000;
/** Days in the range when `from` is not given: `to` and the 29 days before it. */
export const DEFAULT_USAGE_DAYS = 30;
/** The longest range, in days (both ends included). */
export const MAX_USAGE_DAYS = 366;

/** A calendar day `YYYY-MM-DD` (a real date: no 2026-02-30), read as a UTC day. */
export const usageDay = z.iso.date({ error: "must be a calendar day YYYY-MM-DD (UTC)" });

/** What a usage read asks for; every field optional. */
export interface UsageQuery {
  /** First day, `YYYY-MM-DD` (UTC), included. @default `to` − 29 days */
  readonly from?: string | undefined;
  /** Last day, `YYYY-MM-DD` (UTC), included. @default today (UTC) by the gateway clock */
  readonly to?: string | undefined;
  /** Only the charges and reservations of keys on this chain. @default every chain */
  readonly chainId?: number | undefined;
}

/** The spend of one day. */
export interface UsageDayView {
  /** `YYYY-MM-DD` (UTC). */
  date: string;
  /** USDC atomic units, a decimal string. */
  spent: string;
  /** Number of charges. */
  calls: number;
}

/** The spend on one model over the range. */
export interface UsageModelView {
  /** The catalog model id; null for charges that paid for no catalog model. */
  modelId: string | null;
  spent: string;
  calls: number;
}

/** The answer of `GET /api/usage`. */
export interface UsageView {
  /** The proven wallet, lower-case. */
  wallet: string;
  from: string;
  to: string;
  /** Every day of the range, ascending; days without charges are `"0"` / 0. */
  days: UsageDayView[];
  /** Models with charges in the range, by `spent` descending, then `modelId` ascending (null last). */
  models: UsageModelView[];
  /** `spent`/`calls` over the range; `reserved`: held now by open reservations (not range-bound). */
  totals: { spent: string; calls: number; reserved: string };
}

/** The usage capability's service. */
export interface UsageService {
  /**
   * The usage of `wallet` (a proven, lower-case address): its keys' charges created in the range
   * (on `chainId` when given), whatever their on-chain settlement status, and the reservations
   * its keys hold now. Charges count as calls; a settle of 0 charges nothing and is not one.
   * @throws GatewayError `invalid_request` (param `from` or `to`) for a malformed day, `from`
   * after `to`, or a range longer than {@link MAX_USAGE_DAYS} days.
   */
  forWallet(wallet: string, query?: UsageQuery): Promise<UsageView>;
}

/** 00:00 UTC of a `YYYY-MM-DD` day, in ms; a 400 naming `param` otherwise. */
function dayStartOf(text: string, param: "from" | "to"): number {
  if (!usageDay.safeParse(text).success) throw invalidRequest(`${param} must be a calendar day YYYY-MM-DD (UTC); got "${text.slice(0, 40)}"`, param);
  // The ISO date-only form parses as UTC midnight, years 0000-0099 included (Date.UTC would shift those to 19xx).
  return Date.parse(text);
}

const dayText = (dayStart: number) => new Date(dayStart).toISOString().slice(0, 10);

/** The first and last day (00:00 UTC, ms) of a query at `now`. */
function usageRange(query: UsageQuery, now: number): { first: number; last: number } {
  const last = query.to === undefined ? Math.floor(now / DAY_MS) * DAY_MS : dayStartOf(query.to, "to");
  const first = query.from === undefined ? last - (DEFAULT_USAGE_DAYS - 1) * DAY_MS : dayStartOf(query.from, "from");
  if (first > last) throw invalidRequest(`from (${dayText(first)}) is after to (${dayText(last)})`, "from");
  const days = (last - first) / DAY_MS + 1;
  if (days > MAX_USAGE_DAYS) throw invalidRequest(`The range has ${days} days; at most ${MAX_USAGE_DAYS} (from and to both count)`, "from");
  return { first, last };
}

/** A running sum of charges. */
interface Sum {
  amount: bigint;
  calls: number;
}

/** The sum of `slot` in `map`, created empty. */
function sumOf<K>(map: Map<K, Sum>, slot: K): Sum {
  let sum = map.get(slot);
  if (!sum) map.set(slot, (sum = { amount: 0n, calls: 0 }));
  return sum;
}

/** `spent` descending, then `modelId` ascending (bytewise), null last. */
function byModel(a: [string | null, Sum], b: [string | null, Sum]): number {
  if (a[1].amount !== b[1].amount) return a[1].amount > b[1].amount ? -1 : 1;
  if (a[0] === b[0]) return 0;
  if (a[0] === null || b[0] === null) return a[0] === null ? 1 : -1;
  return a[0] < b[0] ? -1 : 1;
}

/** Creates the usage service over the store and the gateway clock. */
export function createUsageService(deps: { store: Store; clock: Clock }): UsageService {
  return {
    async forWallet(wallet, query = {}) {
      const now = deps.clock.now();
      const { first, last } = usageRange(query, now);
      const { cells, reserved } = await deps.store.usageByWallet({
        wallet,
        fromMs: first,
        toMs: last + DAY_MS,
        now,
        ...(query.chainId === undefined ? {} : { chainId: query.chainId }),
      });
      const perDay = new Map<number, Sum>();
      const perModel = new Map<string | null, Sum>();
      const all: Sum = { amount: 0n, calls: 0 };
      for (const cell of cells) {
        for (const sum of [sumOf(perDay, cell.dayStart), sumOf(perModel, cell.modelId), all]) {
          sum.amount += cell.spent;
          sum.calls += cell.calls;
        }
      }
      const days: UsageDayView[] = [];
      for (let day = first; day <= last; day += DAY_MS) {
        const sum = perDay.get(day);
        days.push({ date: dayText(day), spent: (sum?.amount ?? 0n).toString(), calls: sum?.calls ?? 0 });
      }
      const models = [...perModel].sort(byModel).map(([modelId, sum]) => ({ modelId, spent: sum.amount.toString(), calls: sum.calls }));
      return {
        wallet,
        from: dayText(first),
        to: dayText(last),
        days,
        models,
        totals: { spent: all.amount.toString(), calls: all.calls, reserved: reserved.toString() },
      };
    },
  };
}
