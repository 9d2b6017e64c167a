/**
 * Open reservations, apart from spend: what the wallet's authorized payment intents hold now, in
 * total and per key. A reservation is not spent: it becomes a charge (up to the amount held) when
 * its intent settles, and is released when it aborts or expires.
 */
import { keyLabel } from "./keys-table";
import type { GovernedKey } from "../lib/key-admin";
import { formatUsdc, parseAtomic, spendTotals } from "../lib/usdc";
import { DataTable, type Column } from "./data-table";

const COLUMNS: readonly [Column<GovernedKey>, ...Column<GovernedKey>[]] = [
  { label: "Key", cell: (key) => keyLabel(key) },
  { label: "Chain", cell: (key) => key.chainId },
  { label: "Reserved (USDC)", numeric: true, cell: (key) => formatUsdc(key.budgetReserved) },
];

/** See the file comment. */
export function ReservationsPanel({ keys }: { keys: readonly GovernedKey[] }) {
  const holding = keys.filter((key) => parseAtomic(key.budgetReserved) > 0n);
  const { reserved } = spendTotals(keys);
  return (
    <DataTable
      id="reservations-heading"
      title="Open reservations"
      empty="No open reservations: no payment intent holds any budget now."
      rows={holding}
      rowKey={(key) => key.keyId}
      columns={COLUMNS}
    >
      <p className="reserved-total">
        <span className="amount">{formatUsdc(reserved)}</span> <span className="unit">USDC held now</span>
      </p>
      <p className="hint">
        Held by authorized payment intents and not spent yet: an intent charges at most this when it settles and releases the rest; an aborted or expired one
        releases it all. Not counted in spend.
      </p>
    </DataTable>
  );
}
