"use client";
/**
 * The wallet's service keys with their budgets and state; under a governed key's row, its budget
 * window ("resets …"), allowed models and per-model caps. "Edit" opens the key's panel below the
 * table, "Revoke" (live keys only) the confirmation of its revocation; one at a time.
 */
import { useEffect, useRef, useState } from "react";
import { capitalize, formatTime } from "../lib/format";
import type { GovernedKey } from "../lib/key-admin";
import { formatUsdc } from "../lib/usdc";
import { DataTable, type Column } from "./data-table";
import { canRevoke } from "../lib/key-revoke";
import { KeyPanel } from "./key-panel";
import { KeyRevoke } from "./key-revoke";

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
  /** Called with the key as the gateway now has it after an update, a rotation or a revocation. */
  onKeyChanged: (key: GovernedKey) => void;
  /** Called when the gateway no longer accepts the session. */
  onSessionEnded: () => void;
}

type Mode = "edit" | "revoke";
const buttonId = (mode: Mode, keyId: string) => `${mode}-${keyId}`;
const PANEL_ID: Record<Mode, string> = { edit: "key-panel", revoke: "key-revoke" };

/** One row per key, newest first; amounts in USDC; see the file comment. */
export function KeysTable({ keys, onKeyChanged, onSessionEnded }: KeysTableProps) {
  const [opened, setOpened] = useState<{ keyId: string; mode: Mode } | null>(null);
  const returnFocusTo = useRef<string | null>(null);
  const open = keys.find((key) => key.keyId === opened?.keyId);

  // Closing a panel puts the focus back on the button that opened it ("Edit" after a revocation).
  useEffect(() => {
    if (opened !== null || returnFocusTo.current === null) return;
    document.getElementById(returnFocusTo.current)?.focus();
    returnFocusTo.current = null;
  }, [opened]);

  const close = (focus: string | null = opened && buttonId(opened.mode, opened.keyId)) => {
    returnFocusTo.current = focus;
    setOpened(null);
  };
  const toggle = (mode: Mode, keyId: string) => (opened?.keyId === keyId && opened.mode === mode ? close() : setOpened({ keyId, mode }));
  const manageButton = (mode: Mode, key: GovernedKey, text: string) => {
    const isOpen = opened?.keyId === key.keyId && opened.mode === mode;
    return (
      <button
        type="button"
        id={buttonId(mode, key.keyId)}
        className={`secondary small${mode === "revoke" ? " danger-text" : ""}`}
        aria-label={`${text} ${keyLabel(key)}`}
        aria-expanded={isOpen}
        aria-controls={isOpen ? PANEL_ID[mode] : undefined}
        onClick={() => toggle(mode, key.keyId)}
      >
        {text}
      </button>
    );
  };
  const columns: readonly [Column<GovernedKey>, ...Column<GovernedKey>[]] = [
    ...COLUMNS,
    {
      label: "Manage",
      cell: (key) => (
        <span className="manage">
          {manageButton("edit", key, "Edit")}
          {canRevoke(key) && manageButton("revoke", key, "Revoke")}
        </span>
      ),
    },
  ];
  const revoked = (key: GovernedKey) => {
    onKeyChanged(key);
    close(buttonId("edit", key.keyId));
  };
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
      {open && opened?.mode === "edit" && (
        <KeyPanel key={open.keyId} serviceKey={open} onKeyChanged={onKeyChanged} onSessionEnded={onSessionEnded} onClose={() => close()} />
      )}
      {open && opened?.mode === "revoke" && (
        <KeyRevoke key={open.keyId} serviceKey={open} onRevoked={revoked} onSessionEnded={onSessionEnded} onCancel={() => close()} />
      )}
    </DataTable>
  );
}
