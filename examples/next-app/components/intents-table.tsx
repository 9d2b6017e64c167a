/** The wallet's recent payment intents, with "load more" over the gateway's cursor. */
import type { IntentView, KeyView } from "../lib/api";
import { capitalize, formatTime } from "../lib/format";
import { formatUsdc } from "../lib/usdc";

/** Props of {@link IntentsTable}. */
export interface IntentsTableProps {
  intents: readonly IntentView[];
  /** The wallet's keys, to show key names instead of ids. */
  keys: readonly KeyView[];
  hasMore: boolean;
  loadingMore: boolean;
  loadMoreError: string | undefined;
  onLoadMore: () => void;
}

const amountOrDash = (value: string | null) => (value === null ? "—" : formatUsdc(value));

/** One row per intent, newest first; amounts in USDC. */
export function IntentsTable({ intents, keys, hasMore, loadingMore, loadMoreError, onLoadMore }: IntentsTableProps) {
  const names = new Map(keys.map((k) => [k.keyId, k.name ?? k.keyId]));
  return (
    <section aria-labelledby="intents-heading" className="card">
      <h2 id="intents-heading">Payment intents</h2>
      {intents.length === 0 ? (
        <p className="empty">No payment intents yet.</p>
      ) : (
        <div className="scroll">
          <table aria-labelledby="intents-heading">
            <thead>
              <tr>
                <th scope="col">Intent</th>
                <th scope="col">Key</th>
                <th scope="col">Request</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  Max
                </th>
                <th scope="col" className="num">
                  Final
                </th>
                <th scope="col" className="num">
                  Released
                </th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {intents.map((intent) => (
                <tr key={intent.paymentIntentId}>
                  <th scope="row">
                    <code className="id">{intent.paymentIntentId}</code>
                  </th>
                  <td>{names.get(intent.keyId) ?? intent.keyId}</td>
                  <td>{[intent.service, intent.action].filter(Boolean).join(" · ") || "—"}</td>
                  <td>
                    <span className={`badge badge-${intent.status}`} title={intent.reason ?? undefined}>
                      {capitalize(intent.status)}
                    </span>
                  </td>
                  <td className="num">{formatUsdc(intent.maxAmountWei)}</td>
                  <td className="num">{amountOrDash(intent.finalAmountWei)}</td>
                  <td className="num">{amountOrDash(intent.releasedWei)}</td>
                  <td>{formatTime(intent.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
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
    </section>
  );
}
