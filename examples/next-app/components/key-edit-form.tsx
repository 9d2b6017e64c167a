"use client";
/**
 * The edit form of a key: name, budget limit (USDC), budget period, allowed models and per-model
 * caps. Sends only what changed (`PATCH /api/keys/{keyId}`); a field the page can check is
 * checked before sending, anything the gateway refuses is shown with its own message.
 */
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { actionError } from "../lib/api";
import { BUDGET_PERIODS, updateKey, type GovernedKey } from "../lib/key-admin";
import { formOf, keyUpdateOf, updateErrorHint, type KeyForm, type KeyFormField } from "../lib/key-form";
import { capitalize } from "../lib/format";
import { controlProps, Field } from "./field";

type Status =
  | { kind: "idle" }
  | { kind: "saving" }
  | { kind: "saved"; fields: number }
  | { kind: "unchanged" }
  | { kind: "invalid"; field: KeyFormField; message: string }
  | { kind: "failed"; message: string; hint: string | undefined };

/** Props of {@link KeyEditForm}. */
export interface KeyEditFormProps {
  serviceKey: GovernedKey;
  /** Called with the key as the gateway answered the update. */
  onSaved: (key: GovernedKey) => void;
  onSessionEnded: () => void;
}

/** See the file comment. */
export function KeyEditForm({ serviceKey, onSaved, onSessionEnded }: KeyEditFormProps) {
  const base = useId();
  const ids: Record<KeyFormField, string> = {
    name: `${base}-name`,
    budgetLimit: `${base}-limit`,
    budgetPeriod: `${base}-period`,
    models: `${base}-models`,
    modelBudgets: `${base}-caps`,
  };
  const [form, setForm] = useState<KeyForm>(() => formOf(serviceKey));
  const [status, setStatus] = useState<Status>({ kind: "idle" });
  const inFlight = useRef<AbortController | null>(null);
  useEffect(() => () => inFlight.current?.abort(), []);

  const errorOf = (field: KeyFormField) => (status.kind === "invalid" && status.field === field ? status.message : undefined);
  const set = (field: KeyFormField) => (value: string) => {
    setForm((f) => ({ ...f, [field]: value }));
    if (status.kind !== "saving") setStatus({ kind: "idle" });
  };
  const control = (field: KeyFormField) => controlProps(ids[field], field, form[field], set(field), errorOf(field));

  async function save(event: FormEvent) {
    event.preventDefault();
    const result = keyUpdateOf(serviceKey, form);
    if (!result.ok) {
      setStatus({ kind: "invalid", field: result.field, message: result.message });
      document.getElementById(ids[result.field])?.focus();
      return;
    }
    const fields = Object.keys(result.update).length;
    if (fields === 0) {
      setStatus({ kind: "unchanged" });
      return;
    }
    inFlight.current?.abort();
    const controller = new AbortController();
    inFlight.current = controller;
    setStatus({ kind: "saving" });
    try {
      const key = await updateKey(serviceKey.keyId, result.update, controller.signal);
      if (controller.signal.aborted) return;
      setForm(formOf(key));
      setStatus({ kind: "saved", fields });
      onSaved(key);
    } catch (error) {
      if (controller.signal.aborted) return;
      const message = actionError(error, onSessionEnded);
      if (message !== undefined) setStatus({ kind: "failed", message, hint: updateErrorHint(error) });
    }
  }

  const reset = () => {
    setForm(formOf(serviceKey));
    setStatus({ kind: "idle" });
  };

  return (
    <form className="key-form" onSubmit={(e) => void save(e)} aria-labelledby={`${base}-title`} noValidate>
      <h4 id={`${base}-title`}>Settings</h4>
      <Field id={ids.name} label="Name" hint="Empty removes the name." error={errorOf("name")}>
        <input type="text" maxLength={100} autoComplete="off" {...control("name")} />
      </Field>
      <Field
        id={ids.budgetLimit}
        label="Budget limit (USDC)"
        hint="Up to 6 decimals; never below what the key has used and reserved in its window."
        error={errorOf("budgetLimit")}
      >
        <input type="text" inputMode="decimal" autoComplete="off" spellCheck={false} {...control("budgetLimit")} />
      </Field>
      <Field
        id={ids.budgetPeriod}
        label="Budget period"
        hint="The limit applies per UTC day, week (from Monday) or calendar month. Setting or changing it starts a fresh window now: used goes back to 0, open reservations carry over."
        error={errorOf("budgetPeriod")}
      >
        <select {...control("budgetPeriod")}>
          <option value="">None (lifetime budget)</option>
          {BUDGET_PERIODS.map((period) => (
            <option key={period} value={period}>
              {capitalize(period)}
            </option>
          ))}
        </select>
      </Field>
      <Field
        id={ids.models}
        label="Allowed models"
        hint={
          <>
            Catalog model ids or <code>provider/*</code>, separated by commas or new lines. Empty allows every model.
          </>
        }
        error={errorOf("models")}
      >
        <textarea rows={3} spellCheck={false} {...control("models")} />
      </Field>
      <Field
        id={ids.modelBudgets}
        label="Per-model caps (USDC)"
        hint={
          <>
            One <code>model-or-provider/* = amount</code> per line, per budget window. Empty removes every cap.
          </>
        }
        error={errorOf("modelBudgets")}
      >
        <textarea rows={3} spellCheck={false} {...control("modelBudgets")} />
      </Field>
      <div className="actions">
        <button type="submit" disabled={status.kind === "saving"}>
          {status.kind === "saving" ? "Saving…" : "Save changes"}
        </button>
        <button type="button" className="secondary" onClick={reset} disabled={status.kind === "saving"}>
          Reset
        </button>
        <span className="status" role="status">
          {status.kind === "saved" && `Saved (${status.fields} ${status.fields === 1 ? "field" : "fields"} changed).`}
          {status.kind === "unchanged" && "Nothing changed: there is nothing to save."}
          {status.kind === "invalid" && "Check the highlighted field."}
        </span>
      </div>
      {status.kind === "failed" && (
        <div className="error" role="alert">
          <strong>Could not save.</strong> {status.message}
          {status.hint && <p className="error-hint">{status.hint}</p>}
        </div>
      )}
    </form>
  );
}
