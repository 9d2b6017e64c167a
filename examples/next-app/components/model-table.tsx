/** Spend by model over the usage range: one row per model (most spent first) with its calls, amount and share. */
import type { UsageModel } from "@tollgate/client";
import { modelRows, plural } from "../lib/usage";
import { formatUsdc } from "../lib/usdc";
import { DataTable, type Column } from "./data-table";

/** Props of {@link ModelTable}. */
export interface ModelTableProps {
  /** The usage answer's `models`. */
  models: readonly UsageModel[];
  /** The range's spend (the usage answer's `totals.spent`), the whole each share is of. */
  total: bigint;
  calls: number;
  /** The range, for the empty line. */
  from: string;
  to: string;
}

type Row = ReturnType<typeof modelRows>[number];

const COLUMNS: readonly [Column<Row>, ...Column<Row>[]] = [
  { label: "Model", cell: (row) => (row.id === "" ? <span className="muted">{row.label}</span> : <code>{row.label}</code>) },
  { label: "Calls", numeric: true, cell: (row) => row.calls },
  { label: "Spent (USDC)", numeric: true, cell: (row) => formatUsdc(row.spent) },
  { label: "Share", numeric: true, cell: (row) => row.share },
];

/** See the file comment. */
export function ModelTable({ models, total, calls, from, to }: ModelTableProps) {
  const rows = modelRows(models, total);
  return (
    <DataTable id="models-heading" title="Spend by model" empty={`No spend from ${from} to ${to}.`} rows={rows} rowKey={(row) => row.id} columns={COLUMNS}>
      {rows.length > 0 && (
        <p className="count">
          Total {formatUsdc(total)} USDC in {plural(calls, "call")}, {from} to {to} (UTC). Open reservations are not spend: they are listed apart.
        </p>
      )}
    </DataTable>
  );
}
