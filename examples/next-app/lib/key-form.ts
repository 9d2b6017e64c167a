/**
 * The key edit form as text fields, and the `PATCH /api/keys/{keyId}` body they mean: only the
 * fields that differ from the key are sent, amounts are parsed to atomic units as strings (never
 * floats), an empty allow-list or cap list clears it (`null`). Pure: tested in key-form.test.ts.
 */
import { TollgateError } from "@tollgate/client";
import { BUDGET_PERIODS, type BudgetPeriod, type GovernedKey, type KeyUpdate, type ModelBudget } from "./key-admin";
import { formatUsdc, parseAtomic, parseBudget, parseUsdc } from "./usdc";

/** Longest key name the gateway takes. */
export const MAX_KEY_NAME_LENGTH = 100;

/** Why a trimmed key name cannot be sent, or undefined when it can (an empty name means none). */
export function checkKeyName(trimmed: string): string | undefined {
  return trimmed.length > MAX_KEY_NAME_LENGTH ? `The name is longer than ${MAX_KEY_NAME_LENGTH} characters.` : undefined;
}

/** The form's fields, as typed. */
export interface KeyForm {
  name: string;
  /** USDC, e.g. `"25.000000"`. */
  budgetLimit: string;
  /** `""` = no period (a lifetime budget). */
  budgetPeriod: BudgetPeriod | "";
  /** Allowed models, separated by commas or new lines; empty = every model. */
  models: string;
  /** One `pattern = USDC amount` per line; empty = no per-model caps. */
  modelBudgets: string;
}

/** A field of {@link KeyForm}. */
export type KeyFormField = keyof KeyForm;

/** The outcome of {@link keyUpdateOf}: the body to send, or the first field in error. */
export type KeyUpdateResult = { ok: true; update: KeyUpdate } | { ok: false; field: KeyFormField; message: string };

/** Per-model caps as the form shows them: `pattern = amount` lines, amounts in USDC. */
export function formatModelCaps(caps: Readonly<Record<string, Pick<ModelBudget, "limit">>> | undefined): string {
  return Object.entries(caps ?? {})
    .map(([pattern, cap]) => `${pattern} = ${formatUsdc(cap.limit)}`)
    .join("\n");
}

/** The form filled with `key`'s current values. */
export function formOf(key: GovernedKey): KeyForm {
  return {
    name: key.name ?? "",
    budgetLimit: formatUsdc(key.budgetLimit),
    budgetPeriod: key.budgetPeriod ?? "",
    models: (key.models ?? []).join("\n"),
    modelBudgets: formatModelCaps(key.modelBudgets),
  };
}

/** The model patterns of the allow-list text, in order, without duplicates; null when empty (every model). */
export function parseModelList(text: string): string[] | null {
  const models = [
    ...new Set(
      text
        .split(/[,\n]/)
        .map((m) => m.trim())
        .filter(Boolean),
    ),
  ];
  return models.length === 0 ? null : models;
}

/**
 * The per-model caps of the cap text: one `pattern = amount` (USDC) per line, blank lines
 * ignored; null when empty. Splits at the last `=` (model ids may hold `:` and `/`).
 * @throws RangeError naming the line when one is malformed or repeats a pattern.
 */
export function parseModelCaps(text: string): Record<string, string> | null {
  const caps: Record<string, string> = {};
  const lines = text.split("\n");
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "") continue;
    const at = line.lastIndexOf("=");
    const pattern = at < 0 ? "" : line.slice(0, at).trim();
    const amount = at < 0 ? "" : line.slice(at + 1).trim();
    if (pattern === "" || amount === "") throw new RangeError(`Line ${index + 1}: write "model-or-provider/* = amount in USDC".`);
    if (Object.hasOwn(caps, pattern)) throw new RangeError(`Line ${index + 1}: ${pattern} has a cap already.`);
    try {
      caps[pattern] = parseUsdc(amount).toString();
    } catch (error) {
      throw new RangeError(`Line ${index + 1}: ${(error as Error).message}`);
    }
  }
  return Object.keys(caps).length === 0 ? null : caps;
}

const sameList = (a: readonly string[] | null, b: readonly string[] | null) => JSON.stringify(a) === JSON.stringify(b);
const capsOf = (key: GovernedKey): Record<string, string> | null =>
  key.modelBudgets === undefined ? null : Object.fromEntries(Object.entries(key.modelBudgets).map(([p, c]) => [p, parseAtomic(c.limit).toString()]));
const sameCaps = (a: Record<string, string> | null, b: Record<string, string> | null) =>
  a === null || b === null ? a === b : Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([p, v]) => b[p] === v);

/**
 * The update that turns `key` into what `form` says: only changed fields (an empty object when
 * nothing changed). An emptied name clears it; the limit must be a positive USDC amount.
 */
export function keyUpdateOf(key: GovernedKey, form: KeyForm): KeyUpdateResult {
  const update: KeyUpdate = {};
  const name = form.name.trim();
  const nameError = checkKeyName(name);
  if (nameError) return { ok: false, field: "name", message: nameError };
  if (name !== (key.name ?? "")) update.name = name === "" ? null : name;

  let limit: bigint;
  try {
    limit = parseBudget(form.budgetLimit);
  } catch (error) {
    return { ok: false, field: "budgetLimit", message: (error as Error).message };
  }
  if (limit !== parseAtomic(key.budgetLimit)) update.budgetLimit = limit.toString();

  if (form.budgetPeriod !== "" && !BUDGET_PERIODS.includes(form.budgetPeriod))
    return { ok: false, field: "budgetPeriod", message: `Unknown budget period ${JSON.stringify(form.budgetPeriod)}.` };
  const period = form.budgetPeriod === "" ? null : form.budgetPeriod;
  if (period !== (key.budgetPeriod ?? null)) update.budgetPeriod = period;

  const models = parseModelList(form.models);
  if (!sameList(models, key.models ?? null)) update.models = models;

  let caps: Record<string, string> | null;
  try {
    caps = parseModelCaps(form.modelBudgets);
  } catch (error) {
    return { ok: false, field: "modelBudgets", message: (error as Error).message };
  }
  if (!sameCaps(caps, capsOf(key))) update.modelBudgets = caps;
  return { ok: true, update };
}

/**
 * A hint beside the gateway's message for a refused update: for 409 `limit_below_committed`,
 * the window's used and reserved amounts in USDC and the lowest limit it takes now.
 */
export function updateErrorHint(error: unknown): string | undefined {
  if (!(error instanceof TollgateError) || error.code !== "limit_below_committed") return undefined;
  const used = error.details?.["budgetUsed"];
  const reserved = error.details?.["budgetReserved"];
  if (typeof used !== "string" || typeof reserved !== "string" || !/^\d+$/.test(used) || !/^\d+$/.test(reserved)) return undefined;
  const floor = BigInt(used) + BigInt(reserved);
  return `In its current window the key has used ${formatUsdc(used)} and reserved ${formatUsdc(reserved)} USDC, so the limit must be at least ${formatUsdc(floor)} USDC.`;
}
