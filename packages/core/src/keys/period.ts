/**
 * Budget windows on the calendar, in UTC: `daily` starts at 00:00, `weekly` on Monday 00:00,
 * `monthly` on the 1st at 00:00 (a calendar month, never "30 days"). A key with a period counts
 * `budgetUsed` from `periodStart`; the store rolls the window forward inside the same guarded
 * statement that spends (no reset job), so an idle key resets on its next use and a spend is
 * never zeroed after it was recorded. Open reservations carry over into the new window.
 */
import type { BudgetPeriod, KeyRecord } from "../store/types.js";

/** The periods a key may have. */
export const BUDGET_PERIODS = ["daily", "weekly", "monthly"] as const satisfies readonly BudgetPeriod[];

const DAY = 86_400_000;

/** Start (ms, UTC) of the window of `period` that contains `now`. */
export function windowStart(period: BudgetPeriod, now: number): number {
  const d = new Date(now);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (period === "daily") return day;
  if (period === "weekly") return day - ((d.getUTCDay() + 6) % 7) * DAY; // Monday = 0
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** End (ms, UTC, exclusive) of the window of `period` that starts at `start`. */
export function windowEnd(period: BudgetPeriod, start: number): number {
  if (period === "daily") return start + DAY;
  if (period === "weekly") return start + 7 * DAY;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** The three window starts at `now`, as the SQL stores bind them (`CASE budget_period …`). */
export function windowStarts(now: number): { day: number; week: number; month: number } {
  return { day: windowStart("daily", now), week: windowStart("weekly", now), month: windowStart("monthly", now) };
}

/** True when `key` has a period whose stored window ended before `now`: its `budgetUsed` counts 0 now. */
export function windowLapsed(key: Pick<KeyRecord, "budgetPeriod" | "periodStart">, now: number): boolean {
  return key.budgetPeriod !== undefined && (key.periodStart ?? 0) < windowStart(key.budgetPeriod, now);
}

/** `key` as of `now`: with a lapsed window rolled forward (used 0, periodStart the current start). Pure. */
export function rolled(key: KeyRecord, now: number): KeyRecord {
  if (!key.budgetPeriod || !windowLapsed(key, now)) return key;
  return Object.assign({}, key, { budgetUsed: 0n, periodStart: windowStart(key.budgetPeriod, now) });
}
