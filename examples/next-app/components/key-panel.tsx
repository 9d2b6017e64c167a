"use client";
/**
 * The panel of one key, opened by its row's "Edit": the edit form, token rotation and the key's
 * change history. Every change the gateway accepts goes up to the page (table and totals) and
 * reloads the history, where it shows as a new event.
 */
import { useEffect, useRef, useState } from "react";
import type { GovernedKey } from "../lib/key-admin";
import { KeyEditForm } from "./key-edit-form";
import { KeyHistory } from "./key-history";
import { KeyRotate } from "./key-rotate";

/** Props of {@link KeyPanel}. */
export interface KeyPanelProps {
  serviceKey: GovernedKey;
  onKeyChanged: (key: GovernedKey) => void;
  onSessionEnded: () => void;
  onClose: () => void;
}

/** See the file comment. */
export function KeyPanel({ serviceKey, onKeyChanged, onSessionEnded, onClose }: KeyPanelProps) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Bumped after each accepted change: the history reads the key's events again.
  const [historyVersion, setHistoryVersion] = useState(0);
  const label = serviceKey.name ?? serviceKey.keyId;

  useEffect(() => heading.current?.focus(), []);

  const changed = (key: GovernedKey) => {
    onKeyChanged(key);
    setHistoryVersion((v) => v + 1);
  };

  return (
    <section id="key-panel" className="panel" aria-labelledby="key-panel-heading">
      <div className="panel-head">
        <h3 id="key-panel-heading" ref={heading} tabIndex={-1}>
          Manage {label} <code className="id">{serviceKey.keyId}</code>
        </h3>
        <button type="button" className="secondary small" onClick={onClose}>
          Close
        </button>
      </div>
      <div className="panel-grid">
        <KeyEditForm serviceKey={serviceKey} onSaved={changed} onSessionEnded={onSessionEnded} />
        <div className="panel-side">
          <KeyRotate serviceKey={serviceKey} onRotated={changed} onSessionEnded={onSessionEnded} />
          <KeyHistory keyId={serviceKey.keyId} version={historyVersion} onSessionEnded={onSessionEnded} />
        </div>
      </div>
    </section>
  );
}
