/**
 * The wallet's usage (`GET /api/usage`: spend by UTC day and by model over a range, and the budget
 * held now by open reservations) turned into what the dashboard draws: the range to ask for, the
 * bars of the spend-over-time chart, the by-model rows with their shares. Amounts stay bigint:
 * bar heights and shares are ratios of bigints, computed in integers, never floats of amounts.
 * Pure: tested in usage.test.ts.
 */
import type { UsageDay, UsageModel } from "@tollgate/client";
import { formatUsdc, formatUsdcShort, parseAtomic } from "./usdc";

/** The ranges the page offers, in days ending today (UTC). */
export const RANGE_DAYS = [7, 30, 90] as const;
/** A range of {@link RANGE_DAYS}. */
export type RangeDays = (typeof RANGE_DAYS)[number];
/** The range the page starts with (the gateway's own default). */
export const DEFAULT_RANGE_DAYS: RangeDays = 30;

const DAY_MS = 86_400_000;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** Unix ms as its UTC date `YYYY-MM-DD`. */
export const utcDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The `{from, to}` query of the last `days` UTC days ending on the day of `now`, both inclusive. */
export function usageRange(now: number, days: number): { from: string; to: string } {
  return { from: utcDate(now - (days - 1) * DAY_MS), to: utcDate(now) };
}

/** `YYYY-MM-DD` as a short axis label: `"2026-11-03"` → `"Nov 3"`. */
export function dayLabel(date: string): string {
  const [, month, day] = date.split("-").map(Number) as [number, number, number];
  return `${MONTHS[month - 1] ?? "?"} ${day}`;
}

/**
 * The smallest 1, 2 or 5 × 10^k atomic units at or above `max` (0 for 0): the top of the chart's
 * scale, so its gridline labels are round amounts.
 */
export function niceCeiling(max: bigint): bigint {
  if (max <= 0n) return 0n;
  for (let step = 1n; ; step *= 10n) for (const m of [1n, 2n, 5n]) if (m * step >= max) return m * step;
}

/** One bar of the chart, in the chart's own units (see {@link CHART}). */
export interface Bar {
  date: string;
  spent: bigint;
  calls: number;
  x: number;
  y: number;
  width: number;
  height: number;
  /** What the bar says to a screen reader and as its tooltip. */
  title: string;
}

/** The chart's geometry (an SVG `viewBox` of `width` × `height`, the plot inside the margins). */
export const CHART = { width: 960, height: 240, left: 64, right: 8, top: 12, bottom: 28 } as const;

/** Everything the chart draws. */
export interface ChartModel {
  bars: Bar[];
  /** Day labels under the axis: at most about 8, always the last day. */
  ticks: { x: number; label: string; date: string }[];
  /** Horizontal lines at 0, half and the top of the scale, with their USDC labels. */
  gridlines: { y: number; label: string }[];
  /** Sum of the days' spend and calls. */
  total: bigint;
  calls: number;
  /** The busiest day, or undefined when nothing was spent. */
  peak: { date: string; spent: bigint } | undefined;
}

/** `count` of `unit`, with its plural: `plural(1, "call")` → `"1 call"`, `plural(3, "call")` → `"3 calls"`. */
export const plural = (count: number, unit: string): string => `${count} ${unit}${count === 1 ? "" : "s"}`;

/**
 * The bars of `days` (ascending, one per day) on the round scale above the busiest day
 * ({@link niceCeiling}): a bar's height is `spent / top` of the plot, computed from bigints in
 * integer hundredths of a unit; a day with any spend is at least 1 unit tall so it stays visible.
 * @throws TypeError when an amount is malformed.
 */
export function chartOf(days: readonly UsageDay[]): ChartModel {
  const plotWidth = CHART.width - CHART.left - CHART.right;
  const plotHeight = CHART.height - CHART.top - CHART.bottom;
  const spends = days.map((d) => parseAtomic(d.spent));
  const total = spends.reduce((a, b) => a + b, 0n);
  const max = spends.reduce((a, b) => (b > a ? b : a), 0n);
  const top = niceCeiling(max);
  const slot = days.length === 0 ? 0 : plotWidth / days.length;
  const gap = Math.min(4, slot * 0.2);
  const baseline = CHART.top + plotHeight;

  const bars = days.map((day, i): Bar => {
    const spent = spends[i]!;
    const scaled = top === 0n ? 0 : Number((spent * BigInt(plotHeight * 100)) / top) / 100;
    const height = spent > 0n ? Math.max(1, scaled) : 0;
    return {
      date: day.date,
      spent,
      calls: day.calls,
      x: CHART.left + i * slot + gap / 2,
      y: baseline - height,
      width: slot - gap,
      height,
      title: `${day.date}: ${formatUsdc(spent)} USDC, ${plural(day.calls, "call")}`,
    };
  });

  const every = Math.max(1, Math.ceil(days.length / 8));
  const ticks = days
    .map((day, i) => ({ i, day }))
    .filter(({ i }) => i === days.length - 1 || (i % every === 0 && days.length - 1 - i >= every / 2))
    .map(({ i, day }) => ({ x: CHART.left + (i + 0.5) * slot, label: dayLabel(day.date), date: day.date }));

  // 0, the middle (when the top halves into whole atomic units: not for a top of 1 or 5) and the top.
  const levels = top === 0n ? [] : top % 2n === 0n ? [0, 1, 2] : [0, 2];
  const gridlines = levels.map((half) => ({ y: baseline - (plotHeight * half) / 2, label: formatUsdcShort((top * BigInt(half)) / 2n) }));

  const peakIndex = spends.findIndex((s) => s === max);
  return {
    bars,
    ticks,
    gridlines,
    total,
    calls: days.reduce((a, d) => a + d.calls, 0),
    peak: max > 0n && peakIndex >= 0 ? { date: days[peakIndex]!.date, spent: max } : undefined,
  };
}

/**
 * `part / whole` as a percentage with one decimal, rounded half up, by integer arithmetic:
 * `percentOf(1n, 3n)` → `"33.3%"`; `"<0.1%"` for a part that is more than 0 but rounds to 0.0;
 * `"—"` when `whole` is 0.
 */
export function percentOf(part: bigint, whole: bigint): string {
  if (whole <= 0n) return "—";
  const tenths = (part * 2000n + whole) / (2n * whole);
  if (tenths === 0n && part > 0n) return "<0.1%";
  return `${tenths / 10n}.${tenths % 10n}%`;
}

/** A row of the spend-by-model table. */
export interface ModelRow {
  /** Stable key: the model id, or "" for charges without a model. */
  id: string;
  label: string;
  spent: bigint;
  calls: number;
  share: string;
}

/** What charges that name no model are listed as (a prepare with a plain `maxAmountWei`, the legacy key settle). */
export const NO_MODEL_LABEL = "No model (priced by the caller)";

/**
 * The table rows in the gateway's order (most spent first), each with its share of `total`
 * (the range's spend). Charges without a model (`modelId: null`) are {@link NO_MODEL_LABEL}.
 * @throws TypeError when an amount is malformed.
 */
export function modelRows(models: readonly UsageModel[], total: bigint): ModelRow[] {
  return models.map((m) => {
    const spent = parseAtomic(m.spent);
    return { id: m.modelId ?? "", label: m.modelId ?? NO_MODEL_LABEL, spent, calls: m.calls, share: percentOf(spent, total) };
  });
}
