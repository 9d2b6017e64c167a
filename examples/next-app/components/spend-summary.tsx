/**
 * The "Spend" card: the range (last 7, 30 or 90 UTC days), what was spent in it (settled charges
 * from the gateway's ledger, never open reservations) and the budget still available, and the
 * spend-over-time chart; with its loading and error states.
 */
import type { ReactNode } from "react";
import type { ServiceKey, WalletUsage } from "@tollgate/client";
import { plural, RANGE_DAYS, type RangeDays } from "../lib/usage";
import { formatUsdc, parseAtomic, spendTotals } from "../lib/usdc";
import { SpendChart } from "./spend-chart";

/** Where the usage read is. */
export type UsageState = { state: "loading" } | { state: "error"; message: string } | { state: "ready"; report: WalletUsage };

/** Props of {@link SpendSummary}. */
export interface SpendSummaryProps {
  usage: UsageState;
  /** The wallet's keys, for the available budget. */
  keys: readonly ServiceKey[];
  range: RangeDays;
  onRange: (days: RangeDays) => void;
  /** Reads the usage again. */
  onRefresh: () => void;
}

function Tile({ id, label, value, hint }: { id: string; label: string; value: ReactNode; hint: ReactNode }) {
  return (
    <div className="total" data-total={id}>
      <dt>{label}</dt>
      <dd>{value}</dd>
      <dd className="hint">{hint}</dd>
    </div>
  );
}

const usdc = (atomic: bigint | string) => (
  <>
    <span className="amount">{formatUsdc(atomic)}</span> <span className="unit">USDC</span>
  </>
);

/** See the file comment. */
export function SpendSummary({ usage, keys, range, onRange, onRefresh }: SpendSummaryProps) {
  const { available } = spendTotals(keys);
  const active = keys.filter((k) => k.status === "active").length;
  const report = usage.state === "ready" ? usage.report : undefined;
  const pending = usage.state === "loading" ? "Loading…" : "Not available";
  return (
    <section aria-labelledby="spend-heading" className="card" aria-busy={usage.state === "loading"}>
      <div className="card-head">
        <h2 id="spend-heading">Spend</h2>
        <div className="actions">
          <label htmlFor="spend-range">Range</label>
          <select id="spend-range" value={range} onChange={(e) => onRange(Number(e.target.value) as RangeDays)}>
            {RANGE_DAYS.map((days) => (
              <option key={days} value={days}>
                Last {days} days
              </option>
            ))}
          </select>
          <button type="button" className="secondary small" onClick={onRefresh} disabled={usage.state === "loading"}>
            Refresh
          </button>
        </div>
      </div>
      <dl className="totals">
        <Tile
          id="spent"
          label="Spent"
          value={report ? usdc(parseAtomic(report.totals.spent)) : <span className="amount muted">{pending}</span>}
          hint={report ? `${plural(report.totals.calls, "call")}, ${report.from} to ${report.to} (UTC), settled charges only` : "settled charges in the range"}
        />
        <Tile id="available" label="Available" value={usdc(available)} hint={`budget left across ${plural(active, "active key")}`} />
      </dl>
      {usage.state === "loading" && (
        <p className="status" role="status">
          Loading the wallet&apos;s spend…
        </p>
      )}
      {usage.state === "error" && (
        <div className="error" role="alert">
          <strong>Could not load the spend.</strong> {usage.message}{" "}
          <button type="button" className="secondary small" onClick={onRefresh}>
            Try again
          </button>
        </div>
      )}
      {report && <SpendChart days={report.days} />}
    </section>
  );
}
