/** The spend totals of a wallet, summed over its keys with bigint arithmetic. */
import type { ServiceKey } from "@tollgate/client";
import { formatUsdc, spendTotals } from "../lib/usdc";

/** Settled, reserved, settled + reserved, and still available budget, in USDC. */
export function SpendSummary({ keys }: { keys: readonly ServiceKey[] }) {
  const totals = spendTotals(keys);
  const active = keys.filter((k) => k.status === "active").length;
  const items = [
    { id: "settled", label: "Settled", value: totals.settled, hint: "charged to budgets" },
    { id: "reserved", label: "Reserved", value: totals.reserved, hint: "held by open intents" },
    { id: "committed", label: "Total spend", value: totals.committed, hint: "settled + reserved" },
    { id: "available", label: "Available", value: totals.available, hint: `across ${active} active ${active === 1 ? "key" : "keys"}` },
  ];
  return (
    <section aria-labelledby="spend-heading" className="card">
      <h2 id="spend-heading">Spend</h2>
      <dl className="totals">
        {items.map((item) => (
          <div key={item.id} className="total">
            <dt>{item.label}</dt>
            <dd>
              <span className="amount">{formatUsdc(item.value)}</span> <span className="unit">USDC</span>
            </dd>
            <dd className="hint">{item.hint}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
