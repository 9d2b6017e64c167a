/** The wallet's service keys with their budgets and state. */
import type { ServiceKey } from "@tollgate/client";
import { capitalize, formatTime } from "../lib/format";
import { formatUsdc } from "../lib/usdc";
import { DataTable, type Column } from "./data-table";

const PURPOSE: Record<ServiceKey["purpose"], string> = { api: "API", session: "Session" };

const COLUMNS: readonly [Column<ServiceKey>, ...Column<ServiceKey>[]] = [
  {
    label: "Name",
    cell: (key) => (
      <>
        <span className="name">{key.name ?? "Unnamed key"}</span>
        <code className="id">{key.keyId}</code>
      </>
    ),
  },
  { label: "Purpose", cell: (key) => PURPOSE[key.purpose] ?? key.purpose },
  { label: "Chain", cell: (key) => key.chainId },
  { label: "Limit", numeric: true, cell: (key) => formatUsdc(key.budgetLimit) },
  { label: "Used", numeric: true, cell: (key) => formatUsdc(key.budgetUsed) },
  { label: "Reserved", numeric: true, cell: (key) => formatUsdc(key.budgetReserved) },
  { label: "Remaining", numeric: true, cell: (key) => formatUsdc(key.budgetRemaining) },
  { label: "Expires", cell: (key) => formatTime(key.expiresAt) },
  {
    label: "State",
    cell: (key) => (
      <span className={`badge badge-${key.status}`} title={key.revokedAt === undefined ? undefined : `Revoked ${formatTime(key.revokedAt)}`}>
        {capitalize(key.status)}
      </span>
    ),
  },
];

/** One row per key, newest first; amounts in USDC. */
export function KeysTable({ keys }: { keys: readonly ServiceKey[] }) {
  return <DataTable id="keys-heading" title="Service keys" empty="This wallet has no keys yet." rows={keys} rowKey={(key) => key.keyId} columns={COLUMNS} />;
}
