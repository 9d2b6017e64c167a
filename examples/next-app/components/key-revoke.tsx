"use client";
/**
 * The confirmation of "Revoke", opened under the keys table by a key's row: what revoking means
 * (every token of the key is refused from now on; it cannot be undone; its spend and open
 * reservations stay), then "Revoke key" or "Cancel". A refusal shows the gateway's message.
 */
import { useEffect, useId, useRef, useState } from "react";
import { actionError } from "../lib/api";
import { revokeOwnKey, type GovernedKey } from "../lib/key-admin";
import { revokedView } from "../lib/key-revoke";
import { formatUsdc, parseAtomic } from "../lib/usdc";

/** Props of {@link KeyRevoke}. */
export interface KeyRevokeProps {
  serviceKey: GovernedKey;
  /** Called with the key as revoked. */
  onRevoked: (key: GovernedKey) => void;
  onSessionEnded: () => void;
  onCancel: () => void;
}

/** See the file comment. */
export function KeyRevoke({ serviceKey, onRevoked, onSessionEnded, onCancel }: KeyRevokeProps) {
  const base = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  const [status, setStatus] = useState<{ kind: "idle" } | { kind: "revoking" } | { kind: "failed"; message: string }>({ kind: "idle" });
  const inFlight = useRef<AbortController | null>(null);
  useEffect(() => {
    heading.current?.focus();
    return () => inFlight.current?.abort();
  }, []);
  const label = serviceKey.name ?? serviceKey.keyId;
  const reserved = parseAtomic(serviceKey.budgetReserved);

  async function revoke() {
    const controller = new AbortController();
    inFlight.current = controller;
    setStatus({ kind: "revoking" });
    try {
      const answer = await revokeOwnKey(serviceKey.keyId, controller.signal);
      if (!controller.signal.aborted) onRevoked(revokedView(serviceKey, answer));
    } catch (error) {
      if (controller.signal.aborted) return;
      const message = actionError(error, onSessionEnded);
      setStatus(message === undefined ? { kind: "idle" } : { kind: "failed", message });
    }
  }

  return (
    <section id="key-revoke" className="panel revoke" role="alertdialog" aria-labelledby={`${base}-title`} aria-describedby={`${base}-what`}>
      <h3 id={`${base}-title`} ref={heading} tabIndex={-1}>
        Revoke {label}? <code className="id">{serviceKey.keyId}</code>
      </h3>
      <p id={`${base}-what`}>
        Every request with this key&apos;s token is refused from now on (401 key_revoked), and the key cannot be used again: this cannot be undone. Its spend
        stays in the totals
        {reserved > 0n ? `, and the ${formatUsdc(reserved)} USDC its open intents hold stays reserved until they settle, abort or expire` : ""}.
      </p>
      <div className="actions">
        <button type="button" className="danger" onClick={() => void revoke()} disabled={status.kind === "revoking"}>
          {status.kind === "revoking" ? "Revoking…" : "Revoke key"}
        </button>
        <button type="button" className="secondary" onClick={onCancel} disabled={status.kind === "revoking"}>
          Cancel
        </button>
      </div>
      {status.kind === "failed" && (
        <div className="error" role="alert">
          <strong>Could not revoke.</strong> {status.message}
        </div>
      )}
    </section>
  );
}
