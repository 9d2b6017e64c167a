"use client";
/**
 * The wallet's service keys with their budgets and state; under a governed key's row, its budget
 * window ("resets …"), allowed models and per-model caps. "Edit" opens the key's panel below the
 * table (one at a time).
 */
import { useEffect, useRef, useState } from "react";
import { capitalize, formatTime } from "../lib/format";
import type { GovernedKey } from "../lib/key-admin";
import { formatUsdc } from "../lib/usdc";
import { DataTable, type Column } from "./data-table";
import { KeyPanel } from "./key-panel";

const PURPOSE: Record<GovernedKey["purpose"], string> = { api: "API", session: "Session" };

/** The name a person knows a key by. */
export const keyLabel = (key: Pick<GovernedKey, "name" | "keyId">) => key.name ?? key.keyId;

/** Whether the key has any rule beyond its limit: a budget period, an allow-list or per-model caps. */
const isGoverned = (key: GovernedKey) => key.budgetPeriod !== undefined || key.models !== undefined || Object.keys(key.modelBudgets ?? {}).length > 0;

/** The line under a governed key's row: its budget window, allowed models and per-model caps. */
function KeyRules({ serviceKey: key }: { serviceKey: GovernedKey }) {
  const caps = Object.entries(key.modelBudgets ?? {});
  return (
    <dl className="rules">
      <div>
        <dt>Period</dt>
        <dd>
          {key.budgetPeriod === undefined
            ? "None (lifetime budget)"
            : `${capitalize(key.budgetPeriod)}${key.periodEndsAt === undefined ? "" : `, resets ${formatTime(key.periodEndsAt)}`}`}
        </dd>
      </div>
      <div>
        <dt>Models</dt>
        <dd>{key.models === undefined ? "All models" : key.models.join(", ")}</dd>
      </div>
      {caps.length > 0 && (
        <div>
          <dt>Per-model caps</dt>
          <dd>
            {caps.map(([pattern, cap], i) => (
              <span key={pattern} title={`${pattern} may spend at most ${formatUsdc(cap.limit)} USDC per budget window`}>
                {i > 0 && " · "}
                {pattern} ≤ {formatUsdc(cap.limit)}
              </span>
            ))}{" "}
            USDC
          </dd>
        </div>
      )}
    </dl>
  );
}

const COLUMNS: readonly [Column<GovernedKey>, ...Column<GovernedKey>[]] = [
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

/** Props of {@link KeysTable}. */
export interface KeysTableProps {
  keys: readonly GovernedKey[];
  /** Called with the key as the gateway now has it after an update or a rotation. */
  onKeyChanged: (key: GovernedKey) => void;
  /** Called when the gateway no longer accepts the session. */
  onSessionEnded: () => void;
}

const editButtonId = (keyId: string) => `edit-${keyId}`;

/** One row per key, newest first; amounts in USDC; see the file comment. */
export function KeysTable({ keys, onKeyChanged, onSessionEnded }: KeysTableProps) {
  const [openId, setOpenId] = useState<string | null>(null);
  const returnFocusTo = useRef<string | null>(null);
  const open = keys.find((key) => key.keyId === openId);

  // Closing the panel puts the focus back on the row's "Edit" button.
  useEffect(() => {
    if (openId !== null || returnFocusTo.current === null) return;
    document.getElementById(editButtonId(returnFocusTo.current))?.focus();
    returnFocusTo.current = null;
  }, [openId]);

  const close = () => {
    returnFocusTo.current = openId;
    setOpenId(null);
  };
  const columns: readonly [Column<GovernedKey>, ...Column<GovernedKey>[]] = [
    ...COLUMNS,
    {
      label: "Manage",
      cell: (key) => (
        <button
          type="button"
          id={editButtonId(key.keyId)}
          className="secondary small"
          aria-label={`Edit ${keyLabel(key)}`}
          aria-expanded={openId === key.keyId}
          aria-controls={openId === key.keyId ? "key-panel" : undefined}
          onClick={() => (openId === key.keyId ? close() : setOpenId(key.keyId))}
        >
          Edit
        </button>
      ),
    },
  ];
  return (
    <DataTable
      id="keys-heading"
      title="Service keys"
      empty="This wallet has no keys yet."
      rows={keys}
      rowKey={(key) => key.keyId}
      columns={columns}
      detail={(key) => (isGoverned(key) ? <KeyRules serviceKey={key} /> : null)}
    >
      {open && <KeyPanel key={open.keyId} serviceKey={open} onKeyChanged={onKeyChanged} onSessionEnded={onSessionEnded} onClose={close} />}
    </DataTable>
  );
}
