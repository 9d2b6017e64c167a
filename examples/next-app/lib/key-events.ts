/**
 * A key's recorded changes (`GET /api/keys/{keyId}/events`) as sentences for the history list:
 * field labels, amounts in USDC, times in UTC, cleared values named. Pure: tested in
 * key-events.test.ts.
 */
import { formatInstant } from "./format";
import type { KeyEvent } from "./key-admin";
import { formatUsdc } from "./usdc";

const LABELS: Record<string, string> = {
  name: "Name",
  budgetLimit: "Budget limit",
  expiresAt: "Expires",
  budgetPeriod: "Budget period",
  models: "Allowed models",
  modelBudgets: "Per-model caps",
  rateLimit: "Rate limit",
  previousTokenValidUntil: "Old token valid until",
};

/** What an absent (`null`) value of a field means. */
const CLEARED: Record<string, string> = {
  name: "no name",
  budgetPeriod: "none (lifetime budget)",
  models: "every model",
  modelBudgets: "none",
  rateLimit: "gateway default",
};

const isAtomic = (v: unknown): v is string => typeof v === "string" && /^\d+$/.test(v);
const usdc = (v: unknown) => (isAtomic(v) ? `${formatUsdc(v)} USDC` : JSON.stringify(v));

/** One value of `field` as shown in the history. */
export function formatChangeValue(field: string, value: unknown): string {
  if (value === null || value === undefined) return CLEARED[field] ?? "—";
  switch (field) {
    case "budgetLimit":
      return usdc(value);
    case "expiresAt":
    case "previousTokenValidUntil":
      return typeof value === "number" ? formatInstant(value) : JSON.stringify(value);
    case "models":
      return Array.isArray(value) ? value.join(", ") : JSON.stringify(value);
    case "modelBudgets":
      return typeof value === "object"
        ? Object.entries(value as Record<string, unknown>)
            .map(([pattern, cap]) => `${pattern} ≤ ${usdc(cap)}`)
            .join(", ")
        : JSON.stringify(value);
    case "rateLimit": {
      const rpm = (value as { requestsPerMinute?: unknown }).requestsPerMinute;
      return typeof rpm === "number" ? `${rpm} requests / minute` : JSON.stringify(value);
    }
    default:
      return typeof value === "string" ? value : JSON.stringify(value);
  }
}

/** One changed field of an event, ready to show. */
export interface ChangeLine {
  field: string;
  label: string;
  from: string;
  to: string;
}

/** The changes of `event` in a stable order (the form's order, then any other field). */
export function changeLines(event: Pick<KeyEvent, "changes">): ChangeLine[] {
  const order = Object.keys(LABELS);
  const rank = (field: string) => (order.includes(field) ? order.indexOf(field) : order.length);
  return Object.entries(event.changes)
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([field, { from, to }]) => ({ field, label: LABELS[field] ?? field, from: formatChangeValue(field, from), to: formatChangeValue(field, to) }));
}

/** What the event did: "Updated" or "Token rotated". */
export function eventTitle(event: Pick<KeyEvent, "type">): string {
  return event.type === "rotate" ? "Token rotated" : "Updated";
}

/** Who made the change: `wallet:0x…` → "wallet 0x…", `key:key_…` → "the key itself". */
export function actorLabel(actor: string, keyId: string): string {
  if (actor === `key:${keyId}`) return "the key itself";
  const at = actor.indexOf(":");
  return at < 0 ? actor : `${actor.slice(0, at)} ${actor.slice(at + 1)}`;
}
