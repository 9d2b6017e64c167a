"use client";
/**
 * "Rotate token": issues a new token for the key (`POST /api/keys/{keyId}/rotate`) while the old
 * one keeps working for the chosen grace. The new token is shown this once ({@link TokenOnce}),
 * and lives only in this component's state: "Hide token", closing the panel or a reload forgets
 * it (the gateway keeps only its hash).
 */
import { useEffect, useId, useRef, useState } from "react";
import { actionError } from "../lib/api";
import { formatInstant } from "../lib/format";
import { rotateKey, withoutToken, type GovernedKey } from "../lib/key-admin";
import { TokenOnce } from "./token-once";

/** The grace choices, in seconds (the gateway's default is an hour, its maximum seven days). */
export const GRACE_OPTIONS: readonly { seconds: number; label: string }[] = [
  { seconds: 0, label: "None: the old token stops at once" },
  { seconds: 300, label: "5 minutes" },
  { seconds: 3600, label: "1 hour" },
  { seconds: 86_400, label: "1 day" },
  { seconds: 604_800, label: "7 days" },
];

type Status =
  | { kind: "idle" }
  | { kind: "rotating" }
  | { kind: "failed"; message: string }
  | { kind: "rotated"; token: string; previousTokenValidUntil: number; graceSeconds: number };

/** Props of {@link KeyRotate}. */
export interface KeyRotateProps {
  serviceKey: GovernedKey;
  /** Called with the key (without its token) after a rotation. */
  onRotated: (key: GovernedKey) => void;
  onSessionEnded: () => void;
}

/** See the file comment. */
export function KeyRotate({ serviceKey, onRotated, onSessionEnded }: KeyRotateProps) {
  const base = useId();
  const [grace, setGrace] = useState(3600);
  const [status, setStatus] = useState<Status>({ kind: "idle" });
  const inFlight = useRef<AbortController | null>(null);
  useEffect(() => () => inFlight.current?.abort(), []);
  const revoked = serviceKey.status === "revoked";

  async function rotate() {
    inFlight.current?.abort();
    const controller = new AbortController();
    inFlight.current = controller;
    setStatus({ kind: "rotating" });
    try {
      const rotated = await rotateKey(serviceKey.keyId, grace, controller.signal);
      if (controller.signal.aborted) return;
      setStatus({ kind: "rotated", token: rotated.token, previousTokenValidUntil: rotated.previousTokenValidUntil, graceSeconds: grace });
      onRotated(withoutToken(rotated));
    } catch (error) {
      if (controller.signal.aborted) return;
      const message = actionError(error, onSessionEnded);
      setStatus(message === undefined ? { kind: "idle" } : { kind: "failed", message });
    }
  }

  return (
    <section className="rotate" aria-labelledby={`${base}-title`}>
      <h4 id={`${base}-title`}>Token</h4>
      <p className="hint">
        A new token replaces the key&apos;s current one; budget, history and intents stay. Give the old token time to be replaced where it is used.
      </p>
      <div className="actions">
        <label htmlFor={`${base}-grace`}>Old token keeps working for</label>
        <select id={`${base}-grace`} value={grace} onChange={(e) => setGrace(Number(e.target.value))} disabled={revoked}>
          {GRACE_OPTIONS.map((option) => (
            <option key={option.seconds} value={option.seconds}>
              {option.label}
            </option>
          ))}
        </select>
        <button type="button" onClick={() => void rotate()} disabled={revoked || status.kind === "rotating"}>
          {status.kind === "rotating" ? "Rotating…" : "Rotate token"}
        </button>
      </div>
      {revoked && <p className="hint">This key is revoked: a new token would never work.</p>}
      {status.kind === "failed" && (
        <div className="error" role="alert">
          <strong>Could not rotate.</strong> {status.message}
        </div>
      )}
      <div aria-live="polite">
        {status.kind === "rotated" && (
          <TokenOnce token={status.token} label="New token" hideLabel="Hide token" onHide={() => setStatus({ kind: "idle" })}>
            <p>
              {status.graceSeconds === 0
                ? `The old token stopped working at ${formatInstant(status.previousTokenValidUntil)}.`
                : `The old token keeps working until ${formatInstant(status.previousTokenValidUntil)}, then the gateway refuses it (401 key_rotated).`}
            </p>
          </TokenOnce>
        )}
      </div>
    </section>
  );
}
