/** The wallet's service keys with their budgets and state. */
import type { KeyView } from "../lib/api";
import { capitalize, formatTime } from "../lib/format";
import { formatUsdc } from "../lib/usdc";

const PURPOSE: Record<KeyView["purpose"], string> = { api: "API", session: "Session" };

/** One row per key, newest first; amounts in USDC. */
export function KeysTable({ keys }: { keys: readonly KeyView[] }) {
  return (
    <section aria-labelledby="keys-heading" className="card">
      <h2 id="keys-heading">Service keys</h2>
      {keys.length === 0 ? (
        <p className="empty">This wallet has no keys yet.</p>
      ) : (
        <div className="scroll">
          <table aria-labelledby="keys-heading">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Purpose</th>
                <th scope="col">Chain</th>
                <th scope="col" className="num">
                  Limit
                </th>
                <th scope="col" className="num">
                  Used
                </th>
                <th scope="col" className="num">
                  Reserved
                </th>
                <th scope="col" className="num">
                  Remaining
                </th>
                <th scope="col">Expires</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key.keyId}>
                  <th scope="row">
                    <span className="name">{key.name ?? "Unnamed key"}</span>
                    <code className="id">{key.keyId}</code>
                  </th>
                  <td>{PURPOSE[key.purpose] ?? key.purpose}</td>
                  <td>{key.chainId}</td>
                  <td className="num">{formatUsdc(key.budgetLimit)}</td>
                  <td className="num">{formatUsdc(key.budgetUsed)}</td>
                  <td className="num">{formatUsdc(key.budgetReserved)}</td>
                  <td className="num">{formatUsdc(key.budgetRemaining)}</td>
                  <td>{formatTime(key.expiresAt)}</td>
                  <td>
                    <span className={`badge badge-${key.status}`} title={key.revokedAt === undefined ? undefined : `Revoked ${formatTime(key.revokedAt)}`}>
                      {capitalize(key.status)}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
