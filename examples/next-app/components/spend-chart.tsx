/**
 * Spend over time as an inline SVG bar chart (no chart library, nothing loaded from elsewhere): one
 * bar per UTC day, scaled to a round top amount with gridlines labelled in USDC, day labels under
 * the axis. Each bar names its day, amount and calls (tooltip and screen readers); the figure's
 * caption says the total and the busiest day.
 */
import type { UsageDay } from "@tollgate/client";
import { CHART, chartOf, plural } from "../lib/usage";
import { formatUsdc } from "../lib/usdc";

/** Props of {@link SpendChart}. */
export interface SpendChartProps {
  /** Every day of the range, ascending (the usage answer's `days`). */
  days: readonly UsageDay[];
}

/** See the file comment. */
export function SpendChart({ days }: SpendChartProps) {
  const chart = chartOf(days);
  const first = days[0]?.date ?? "";
  const last = days.at(-1)?.date ?? "";
  const summary =
    chart.peak === undefined
      ? `No spend from ${first} to ${last}.`
      : `${formatUsdc(chart.total)} USDC in ${plural(chart.calls, "call")} from ${first} to ${last}; the busiest day was ${chart.peak.date} with ${formatUsdc(chart.peak.spent)} USDC.`;
  const baseline = CHART.height - CHART.bottom;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${CHART.width} ${CHART.height}`} role="img" aria-label={`Spend per day (UTC). ${summary}`}>
        {chart.gridlines.map((line) => (
          <g key={line.label} className="gridline">
            <line x1={CHART.left} x2={CHART.width - CHART.right} y1={line.y} y2={line.y} />
            <text x={CHART.left - 6} y={line.y} dy="0.32em" textAnchor="end">
              {line.label}
            </text>
          </g>
        ))}
        <line className="axis" x1={CHART.left} x2={CHART.width - CHART.right} y1={baseline} y2={baseline} />
        {chart.bars.map((bar) => (
          <rect key={bar.date} className="bar" data-date={bar.date} x={bar.x} y={bar.y} width={bar.width} height={bar.height}>
            <title>{bar.title}</title>
          </rect>
        ))}
        {chart.ticks.map((tick) => (
          <text key={tick.date} className="tick" x={tick.x} y={baseline + 18} textAnchor="middle">
            {tick.label}
          </text>
        ))}
        {chart.peak === undefined && (
          <text className="chart-empty" x={(CHART.left + CHART.width - CHART.right) / 2} y={(CHART.top + baseline) / 2} textAnchor="middle">
            No spend in this range
          </text>
        )}
      </svg>
      <figcaption>Spend per day (UTC, USDC). {summary}</figcaption>
    </figure>
  );
}
