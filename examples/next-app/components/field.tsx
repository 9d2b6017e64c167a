/** A labelled form field with its hint and its inline error, shared by the dashboard's forms. */
import type { ReactNode } from "react";

/** Props of {@link Field}. */
export interface FieldProps {
  /** The control's id; its hint is `${id}-hint`, its error `${id}-error`. */
  id: string;
  label: string;
  hint: ReactNode;
  /** The field's error, shown under it (and announced through the control's `aria-describedby`). */
  error: string | undefined;
  children: ReactNode;
}

/** A label, its control (`children`, which sets `aria-describedby={describedBy(id, error)}`), a hint and the field's error. */
export function Field({ id, label, hint, error, children }: FieldProps) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      <p className="hint" id={`${id}-hint`}>
        {hint}
      </p>
      {error && (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** The `aria-describedby` of the control of a {@link Field}: its hint, and its error when there is one. */
export const describedBy = (id: string, error: string | undefined): string => (error ? `${id}-hint ${id}-error` : `${id}-hint`);

/**
 * The props of a {@link Field}'s control (input, select or textarea): its id and name, its value,
 * a change handler receiving the new text, and the invalid state and description of `error`.
 */
export function controlProps(id: string, name: string, value: string, onChange: (value: string) => void, error: string | undefined) {
  return {
    id,
    name,
    value,
    onChange: (event: { target: { value: string } }) => onChange(event.target.value),
    "aria-invalid": error ? true : undefined,
    "aria-describedby": describedBy(id, error),
  };
}
