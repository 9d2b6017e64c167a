/**
 * The create-key form as text fields, and the `keys.create` body they mean: the budget is parsed
 * from USDC text to atomic units by string arithmetic (never floats), the expiry is a UTC date and
 * time, the key is made on the chain the wallet signed in with. Pure: tested in key-create.test.ts.
 */
import type { CreateKeyParams } from "@tollgate/client";
import { checkKeyName } from "./key-form";
import { parseBudget } from "./usdc";

/** What a key is for: `api` for programs, `session` for one app session (one per wallet and chain). */
export type KeyPurpose = CreateKeyParams["purpose"];

/** The purposes the form offers, with what each means. */
export const KEY_PURPOSES: readonly { value: KeyPurpose; label: string }[] = [
  { value: "api", label: "API: a program or agent calls the gateway with it" },
  { value: "session", label: "Session: replaces this wallet's active session key on the chain" },
];

/** The form's fields, as typed. */
export interface CreateKeyForm {
  name: string;
  purpose: KeyPurpose;
  /** USDC, e.g. `"5"` or `"12.5"`. */
  budget: string;
  /** UTC date and time as `YYYY-MM-DDTHH:MM` (the value of an `<input type="datetime-local">`). */
  expiresAt: string;
}

/** A field of {@link CreateKeyForm}. */
export type CreateKeyField = keyof CreateKeyForm;

/** The outcome of {@link createParamsOf}: the body to send, or the first field in error. */
export type CreateKeyResult = { ok: true; params: CreateKeyParams } | { ok: false; field: CreateKeyField; message: string };

/** How long a new key lives unless the form says otherwise: 30 days. */
export const DEFAULT_KEY_LIFETIME_MS = 30 * 86_400_000;
/** The budget a new key starts with in the form, in USDC. */
export const DEFAULT_BUDGET = "5.00";

const MINUTE = 60_000;
const UTC_MINUTE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/;

/** Unix ms as `YYYY-MM-DDTHH:MM` in UTC (seconds dropped), the form of {@link CreateKeyForm.expiresAt}. */
export function formatUtcMinute(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16);
}

/**
 * Reads `YYYY-MM-DDTHH:MM` as a UTC instant (Unix ms).
 * @throws RangeError with a sentence for the user when the text is not a real date and time.
 */
export function parseUtcMinute(text: string): number {
  const trimmed = text.trim();
  const ms = UTC_MINUTE.test(trimmed) ? Date.parse(`${trimmed}:00Z`) : Number.NaN;
  // A date that does not exist (2031-02-30) is refused or rolled over: either way it does not read back.
  if (Number.isNaN(ms) || formatUtcMinute(ms) !== trimmed)
    throw new RangeError("Enter the expiry as a UTC date and time (YYYY-MM-DDTHH:MM, e.g. 2031-01-15T12:00).");
  return ms;
}

/** A fresh form: no name, an API key, {@link DEFAULT_BUDGET} USDC, expiring {@link DEFAULT_KEY_LIFETIME_MS} after `now` (to the minute). */
export function emptyCreateForm(now: number): CreateKeyForm {
  return { name: "", purpose: "api", budget: DEFAULT_BUDGET, expiresAt: formatUtcMinute(Math.ceil((now + DEFAULT_KEY_LIFETIME_MS) / MINUTE) * MINUTE) };
}

/**
 * The `keys.create` body of `form` for a key on `chainId`, checked as far as the page can: a name
 * of at most 100 characters (empty: no name), a known purpose, a budget of more than 0 USDC with at
 * most 6 decimals, an expiry after `now`. The gateway checks the rest and answers in its envelope.
 */
export function createParamsOf(form: CreateKeyForm, context: { now: number; chainId: number }): CreateKeyResult {
  const name = form.name.trim();
  const nameError = checkKeyName(name);
  if (nameError) return { ok: false, field: "name", message: nameError };
  if (!KEY_PURPOSES.some((p) => p.value === form.purpose)) return { ok: false, field: "purpose", message: `Unknown purpose ${JSON.stringify(form.purpose)}.` };

  let budget: bigint;
  try {
    budget = parseBudget(form.budget);
  } catch (error) {
    return { ok: false, field: "budget", message: (error as Error).message };
  }

  let expiresAt: number;
  try {
    expiresAt = parseUtcMinute(form.expiresAt);
  } catch (error) {
    return { ok: false, field: "expiresAt", message: (error as Error).message };
  }
  if (expiresAt <= context.now) return { ok: false, field: "expiresAt", message: "The expiry must be in the future." };

  return {
    ok: true,
    params: {
      ...(name === "" ? {} : { name }),
      purpose: form.purpose,
      budgetLimit: budget.toString(),
      expiresAt,
      networkId: context.chainId,
    },
  };
}
