"use client";
/**
 * A service-key token shown this one time (after a key is created or its token rotated): the
 * warning that it will not be shown again, the token in a read-only box, "Copy token" (the box is
 * selected for copying by hand when the browser refuses the clipboard), what else to know
 * (`children`), and the button that hides it. The token lives only in the parent's state: the
 * gateway keeps its hash alone.
 */
import { useId, useRef, useState, type ReactNode } from "react";

/** Props of {@link TokenOnce}. */
export interface TokenOnceProps {
  /** The token (`svc-…`). */
  token: string;
  /** The box's label, e.g. "New token". */
  label: string;
  /** The button that forgets the token, e.g. "Hide token". */
  hideLabel: string;
  onHide: () => void;
  /** Shown under the box (the old token's end, how to use the key). */
  children?: ReactNode;
}

/** See the file comment. */
export function TokenOnce({ token, label, hideLabel, onHide, children }: TokenOnceProps) {
  const id = useId();
  const [copy, setCopy] = useState<"idle" | "copied" | "failed">("idle");
  const box = useRef<HTMLInputElement>(null);

  async function copyToken() {
    try {
      await navigator.clipboard.writeText(token);
      setCopy("copied");
    } catch {
      box.current?.select();
      setCopy("failed");
    }
  }

  return (
    <div className="token-once">
      <p>
        <strong>{label}, shown only this once.</strong> Copy it now: you won&apos;t see it again. The gateway keeps only its hash, and this page forgets it when
        you hide it.
      </p>
      <label htmlFor={id}>{label}</label>
      <div className="copy-row">
        <input id={id} ref={box} type="text" readOnly value={token} spellCheck={false} onFocus={(e) => e.target.select()} />
        <button type="button" className="secondary" onClick={() => void copyToken()}>
          Copy token
        </button>
      </div>
      <p className="status" role="status">
        {copy === "copied" ? "Copied to the clipboard." : copy === "failed" ? "The browser did not allow copying: the token is selected, copy it by hand." : ""}
      </p>
      {children}
      <button type="button" className="secondary" onClick={onHide}>
        {hideLabel}
      </button>
    </div>
  );
}
