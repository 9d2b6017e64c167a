"use client";
/**
 * "Create a key": name, purpose, budget in USDC and expiry (UTC) of a new key of the signed-in
 * wallet, on the chain it signed in with (`keys.create`). Fields the page can check are checked
 * before sending, each error under its field; anything the gateway refuses is shown with its own
 * message. The new key's token is shown this once ({@link TokenOnce}) and forgotten on "Done".
 * Opening the form puts the focus in its first field; a refused field takes the focus.
 */
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { actionError } from "../lib/api";
import { createKey, withoutToken, type GovernedKey } from "../lib/key-admin";
import { createParamsOf, emptyCreateForm, KEY_PURPOSES, type CreateKeyField, type CreateKeyForm } from "../lib/key-create";
import { formatUsdc } from "../lib/usdc";
import { controlProps, Field } from "./field";
import { TokenOnce } from "./token-once";

type Status =
  | { kind: "closed" }
  | { kind: "editing" }
  | { kind: "invalid"; field: CreateKeyField; message: string }
  | { kind: "creating" }
  | { kind: "failed"; message: string }
  | { kind: "created"; token: string; key: GovernedKey };

/** Props of {@link KeyCreate}. */
export interface KeyCreateProps {
  /** The chain the wallet signed in with: the new key's chain. */
  chainId: number;
  /** Called with the new key (without its token) once the gateway created it. */
  onCreated: (key: GovernedKey) => void;
  onSessionEnded: () => void;
}

/** See the file comment. */
export function KeyCreate({ chainId, onCreated, onSessionEnded }: KeyCreateProps) {
  const base = useId();
  const ids: Record<CreateKeyField, string> = { name: `${base}-name`, purpose: `${base}-purpose`, budget: `${base}-budget`, expiresAt: `${base}-expires` };
  const [form, setForm] = useState<CreateKeyForm>(() => emptyCreateForm(Date.now()));
  const [status, setStatus] = useState<Status>({ kind: "closed" });
  const inFlight = useRef<AbortController | null>(null);
  useEffect(() => () => inFlight.current?.abort(), []);

  const errorOf = (field: CreateKeyField) => (status.kind === "invalid" && status.field === field ? status.message : undefined);
  const set = (field: CreateKeyField) => (value: string) => {
    setForm((f) => ({ ...f, [field]: value }));
    if (status.kind === "invalid" || status.kind === "failed") setStatus({ kind: "editing" });
  };
  const control = (field: CreateKeyField) => controlProps(ids[field], field, form[field], set(field), errorOf(field));

  async function create(event: FormEvent) {
    event.preventDefault();
    const result = createParamsOf(form, { now: Date.now(), chainId });
    if (!result.ok) {
      setStatus({ kind: "invalid", field: result.field, message: result.message });
      document.getElementById(ids[result.field])?.focus();
      return;
    }
    inFlight.current?.abort();
    const controller = new AbortController();
    inFlight.current = controller;
    setStatus({ kind: "creating" });
    try {
      const created = await createKey(result.params, controller.signal);
      if (controller.signal.aborted) return;
      const key = withoutToken(created);
      setStatus({ kind: "created", token: created.token, key });
      setForm(emptyCreateForm(Date.now()));
      onCreated(key);
    } catch (error) {
      if (controller.signal.aborted) return;
      const message = actionError(error, onSessionEnded);
      setStatus(message === undefined ? { kind: "editing" } : { kind: "failed", message });
    }
  }

  const heading = (
    <h2 id={`${base}-title`} className="card-title">
      Create a key
    </h2>
  );
  if (status.kind === "closed")
    return (
      <section className="card create-key" aria-labelledby={`${base}-title`}>
        <div className="card-head">
          {heading}
          <button type="button" onClick={() => setStatus({ kind: "editing" })}>
            New key…
          </button>
        </div>
        <p className="hint">A key pays for calls to this gateway from its budget, on chain {chainId} (the chain your wallet signed in with).</p>
      </section>
    );
  if (status.kind === "created")
    return (
      <section className="card create-key" aria-labelledby={`${base}-title`}>
        {heading}
        <div aria-live="polite">
          <TokenOnce token={status.token} label="Token of the new key" hideLabel="Done: hide the token" onHide={() => setStatus({ kind: "closed" })}>
            <p>
              Created <strong>{status.key.name ?? "an unnamed key"}</strong> <code className="id">{status.key.keyId}</code> with a budget of{" "}
              {formatUsdc(status.key.budgetLimit)} USDC on chain {status.key.chainId}. Send the token as <code>Authorization: Bearer …</code>.
            </p>
          </TokenOnce>
        </div>
      </section>
    );

  return (
    <section className="card create-key" aria-labelledby={`${base}-title`}>
      <form onSubmit={(e) => void create(e)} aria-labelledby={`${base}-title`} noValidate>
        {heading}
        <div className="form-grid">
          <Field id={ids.name} label="Name" hint="Optional, up to 100 characters: how you will recognise the key." error={errorOf("name")}>
            <input type="text" maxLength={100} autoComplete="off" autoFocus {...control("name")} />
          </Field>
          <Field id={ids.purpose} label="Purpose" hint="An app session holds one session key per wallet and chain." error={errorOf("purpose")}>
            <select {...control("purpose")}>
              {KEY_PURPOSES.map((p) => (
                <option key={p.value} value={p.value}>
                  {p.label}
                </option>
              ))}
            </select>
          </Field>
          <Field
            id={ids.budget}
            label="Budget (USDC)"
            hint="The most the key may spend, up to 6 decimals (0.000001 is the smallest unit)."
            error={errorOf("budget")}
          >
            <input type="text" inputMode="decimal" autoComplete="off" spellCheck={false} {...control("budget")} />
          </Field>
          <Field id={ids.expiresAt} label="Expires (UTC)" hint="After this minute the gateway refuses the key (401 key_expired)." error={errorOf("expiresAt")}>
            <input type="datetime-local" step={60} {...control("expiresAt")} />
          </Field>
        </div>
        <div className="actions">
          <button type="submit" disabled={status.kind === "creating"}>
            {status.kind === "creating" ? "Creating…" : "Create key"}
          </button>
          <button type="button" className="secondary" onClick={() => setStatus({ kind: "closed" })} disabled={status.kind === "creating"}>
            Cancel
          </button>
          <span className="status" role="status">
            {status.kind === "invalid" && "Check the highlighted field."}
          </span>
        </div>
        {status.kind === "failed" && (
          <div className="error" role="alert">
            <strong>Could not create the key.</strong> {status.message}
          </div>
        )}
      </form>
    </section>
  );
}
