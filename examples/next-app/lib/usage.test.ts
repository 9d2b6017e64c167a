import { describe, expect, it } from "vitest";
import { CHART, chartOf, dayLabel, modelRows, niceCeiling, NO_MODEL_LABEL, percentOf, usageRange } from "./usage";

const PLOT_HEIGHT = CHART.height - CHART.top - CHART.bottom;
const BASELINE = CHART.top + PLOT_HEIGHT;
const day = (date: string, spent: string, calls = 1) => ({ date, spent, calls });

describe("usageRange", () => {
  it("ends on the UTC day of now, both ends inclusive", () => {
    expect(usageRange(Date.UTC(2026, 10, 23, 23, 59, 59, 999), 30)).toEqual({ from: "2026-10-25", to: "2026-11-23" });
    expect(usageRange(Date.UTC(2026, 10, 24, 0, 0, 0, 0), 1)).toEqual({ from: "2026-11-24", to: "2026-11-24" });
  });

  it("crosses month and year ends", () => {
    expect(usageRange(Date.UTC(2026, 0, 2, 8), 7)).toEqual({ from: "2025-12-27", to: "2026-01-02" });
    expect(usageRange(Date.UTC(2028, 2, 1), 2)).toEqual({ from: "2028-02-29", to: "2028-03-01" });
  });
});

describe("dayLabel", () => {
  it("names the month and drops the leading zero of the day", () => {
    expect(dayLabel("2026-11-03")).toBe("Nov 3");
    expect(dayLabel("2027-01-31")).toBe("Jan 31");
  });
});

describe("niceCeiling", () => {
  it("is the smallest 1, 2 or 5 × 10^k at or above the amount", () => {
    expect([0n, 1n, 2n, 3n, 6n, 10n, 11n, 15_000n, 20_000n, 1_550_000n, 5_000_001n].map(niceCeiling)).toEqual([
      0n,
      1n,
      2n,
      5n,
      10n,
      10n,
      20n,
      20_000n,
      20_000n,
      2_000_000n,
      10_000_000n,
    ]);
  });

  it("stays exact beyond float precision", () => {
    expect(niceCeiling(9_007_199_254_740_993n)).toBe(10_000_000_000_000_000n);
  });
});

describe("chartOf", () => {
  it("scales each bar to the round top of the scale, keeps a tiny spend visible and an empty day flat", () => {
    const chart = chartOf([day("2026-11-21", "0", 0), day("2026-11-22", "15000", 3), day("2026-11-23", "1")]);
    expect(chart.bars.map((b) => [b.date, b.spent, b.calls, b.height])).toEqual([
      ["2026-11-21", 0n, 0, 0],
      // top of the scale: 0.02 USDC, so 0.015 is three quarters of the plot
      ["2026-11-22", 15_000n, 3, (PLOT_HEIGHT * 3) / 4],
      ["2026-11-23", 1n, 1, 1],
    ]);
    for (const bar of chart.bars) expect(bar.y + bar.height).toBe(BASELINE);
    expect(chart.bars[1]!.title).toBe("2026-11-22: 0.015000 USDC, 3 calls");
    expect(chart.bars[0]!.title).toBe("2026-11-21: 0.000000 USDC, 0 calls");
    expect(chart.gridlines).toEqual([
      { y: BASELINE, label: "0.00" },
      { y: BASELINE - PLOT_HEIGHT / 2, label: "0.01" },
      { y: CHART.top, label: "0.02" },
    ]);
    expect([chart.total, chart.calls, chart.peak]).toEqual([15_001n, 4, { date: "2026-11-22", spent: 15_000n }]);
  });

  it("sums exactly beyond 2^53 and fits the bars side by side inside the plot", () => {
    const chart = chartOf([day("2026-11-22", "9007199254740993"), day("2026-11-23", "9007199254740993")]);
    expect(chart.total).toBe(18_014_398_509_481_986n);
    const [a, b] = chart.bars;
    expect(a!.x).toBeGreaterThanOrEqual(CHART.left);
    expect(a!.x + a!.width).toBeLessThanOrEqual(b!.x);
    expect(b!.x + b!.width).toBeLessThanOrEqual(CHART.width - CHART.right);
  });

  it("labels at most about 8 days, always the last one, never two next to each other", () => {
    const days = Array.from({ length: 30 }, (_, i) => day(new Date(Date.UTC(2026, 9, 25) + i * 86_400_000).toISOString().slice(0, 10), "0", 0));
    const { ticks } = chartOf(days);
    expect(ticks.length).toBeLessThanOrEqual(9);
    expect(ticks.at(-1)).toMatchObject({ date: "2026-11-23", label: "Nov 23" });
    expect(ticks[0]).toMatchObject({ date: "2026-10-25", label: "Oct 25" });
    const positions = ticks.map((t) => days.findIndex((d) => d.date === t.date));
    for (let i = 1; i < positions.length; i++) expect(positions[i]! - positions[i - 1]!).toBeGreaterThanOrEqual(2);
    expect(chartOf(days.slice(-7)).ticks).toHaveLength(7);
  });

  it("draws no scale when nothing was spent, and has no peak", () => {
    const chart = chartOf([day("2026-11-23", "0", 0)]);
    expect([chart.gridlines, chart.peak, chart.total, chart.bars[0]!.height]).toEqual([[], undefined, 0n, 0]);
    expect(chartOf([day("2026-11-23", "1")]).gridlines.map((g) => g.label)).toEqual(["0.00", "0.000001"]);
  });

  it("refuses a malformed amount instead of guessing", () => {
    expect(() => chartOf([day("2026-11-23", "1.5")])).toThrow(TypeError);
  });
});

describe("percentOf", () => {
  it("rounds half up to one decimal in integers", () => {
    expect([percentOf(1n, 3n), percentOf(2n, 3n), percentOf(1n, 1n), percentOf(0n, 5n), percentOf(1n, 2000n), percentOf(1n, 2001n)]).toEqual([
      "33.3%",
      "66.7%",
      "100.0%",
      "0.0%",
      "0.1%",
      "<0.1%",
    ]);
    expect(percentOf(0n, 2001n)).toBe("0.0%");
    expect(percentOf(9_007_199_254_740_993n, 18_014_398_509_481_986n)).toBe("50.0%");
  });

  it("is a dash when there is nothing to share", () => {
    expect(percentOf(0n, 0n)).toBe("—");
  });
});

describe("modelRows", () => {
  it("keeps the gateway's order, names the charges without a model, and gives each its share", () => {
    const rows = modelRows(
      [
        { modelId: null, spent: "1550000", calls: 21 },
        { modelId: "gpt-4o", spent: "300000", calls: 2 },
        { modelId: "text-embedding-3-small", spent: "150000", calls: 1 },
      ],
      2_000_000n,
    );
    expect(rows).toEqual([
      { id: "", label: NO_MODEL_LABEL, spent: 1_550_000n, calls: 21, share: "77.5%" },
      { id: "gpt-4o", label: "gpt-4o", spent: 300_000n, calls: 2, share: "15.0%" },
      { id: "text-embedding-3-small", label: "text-embedding-3-small", spent: 150_000n, calls: 1, share: "7.5%" },
    ]);
  });
});
