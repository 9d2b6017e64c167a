/** The wallet's recent payment intents, with "load more" over the gateway's cursor. */
import type { IntentListItem, ServiceKey } from "@tollgate/client";
import { capitalize, formatTime } from "../lib/format";
import { formatUsdc } from "../lib/usdc";
import { DataTable, type Column } from "./data-table";

/** Props of {@link IntentsTable}. */
export interface IntentsTableProps {
  intents: readonly IntentListItem[];
  /** The wallet's keys, to show key names instead of ids. */
  keys: readonly ServiceKey[];
  hasMore: boolean;
  loadingMore: boolean;
  loadMoreError: string | undefined;
  onLoadMore: () => void;
}

const amountOrDash = (value: string | null) => (value === null ? "—" : formatUsdc(value));

/** One row per intent, newest first; amounts in USDC. */
export function IntentsTable({ intents, keys, hasMore, loadingMore, loadMoreError, onLoadMore }: IntentsTableProps) {
  const names = new Map(keys.map((k) => [k.keyId, k.name ?? k.keyId]));
  const columns: readonly [Column<IntentListItem>, ...Column<IntentListItem>[]] = [
    { label: "Intent", cell: (intent) => <code className="id">{intent.paymentIntentId}</code> },
    { label: "Key", cell: (intent) => names.get(intent.keyId) ?? intent.keyId },
    { label: "Request", cell: (intent) => [intent.service, intent.action].filter(Boolean).join(" · ") || "—" },
    {
      label: "Status",
      cell: (intent) => (
        <span className={`badge badge-${intent.status}`} title={intent.reason ?? undefined}>
          {capitalize(intent.status)}
        </span>
      ),
    },
    { label: "Max", numeric: true, cell: (intent) => formatUsdc(intent.maxAmountWei) },
    { label: "Final", numeric: true, cell: (intent) => amountOrDash(intent.finalAmountWei) },
    { label: "Released", numeric: true, cell: (intent) => amountOrDash(intent.releasedWei) },
    { label: "Created", cell: (intent) => formatTime(intent.createdAt) },
  ];
  return (
    <DataTable
      id="intents-heading"
      title="Payment intents"
      empty="No payment intents yet."
      rows={intents}
      rowKey={(intent) => intent.paymentIntentId}
      columns={columns}
    >
      <div className="more">
        <span className="count">
          {intents.length} {intents.length === 1 ? "intent" : "intents"} shown{hasMore ? "" : intents.length > 0 ? " (all)" : ""}
        </span>
        {hasMore && (
          <button type="button" onClick={onLoadMore} disabled={loadingMore}>
            {loadingMore ? "Loading…" : "Load more"}
          </button>
        )}
      </div>
      {loadMoreError && (
        <p className="error" role="alert">
          {loadMoreError}
        </p>
      )}
    </DataTable>
  );
}
