/**
 * Key governance from the dashboard: update a key (`PATCH /api/keys/{keyId}`), rotate its token
 * (`POST /api/keys/{keyId}/rotate`) and read its change history (`GET /api/keys/{keyId}/events`).
 * Plain `fetch` on this origin with the session cookie (same rules as {@link gatewayClient}: no
 * token in page memory, no cache); an error answer becomes the client's own error class
 * (`AuthenticationError`, `ConflictError`, …) so {@link describeError} shows the envelope's
 * message and a 401 ends the session like every other call.
 */
import { ConnectionError, ERROR_CLASSES, TollgateError, UserAbortError, type ServiceKey } from "@tollgate/client";

/** The budget windows a key may have (UTC calendar days, weeks from Monday, months). */
export const BUDGET_PERIODS = ["daily", "weekly", "monthly"] as const;
/** A key's budget window. */
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** One per-model cap of a key with its current window's counters (atomic units, decimal strings). */
export interface ModelBudget {
  limit: string;
  used: string;
  reserved: string;
  remaining: string;
}

/** The governance fields of the key view (declared here so the page does not wait on the client's types). */
type GovernanceField = "budgetPeriod" | "periodStartsAt" | "periodEndsAt" | "models" | "modelBudgets" | "previousTokenValidUntil";

/** A key as the gateway's key view returns it, with its governance fields. */
export interface GovernedKey extends Omit<ServiceKey, GovernanceField> {
  budgetPeriod?: BudgetPeriod;
  /** Unix ms: start of the current window (with `budgetPeriod`). */
  periodStartsAt?: number;
  /** Unix ms, exclusive: when the window resets (with `budgetPeriod`). */
  periodEndsAt?: number;
  /** Allowed models: catalog ids and `<provider>/*`; absent = every model. */
  models?: string[];
  /** Per-model caps by pattern. */
  modelBudgets?: Record<string, ModelBudget>;
  /** Unix ms until which the token before the last rotation still works (while in the future). */
  previousTokenValidUntil?: number;
}

/** The body of `PATCH /api/keys/{keyId}`: each field optional, `null` clears. Amounts are atomic-unit strings. */
export interface KeyUpdate {
  name?: string | null;
  budgetLimit?: string;
  budgetPeriod?: BudgetPeriod | null;
  models?: string[] | null;
  modelBudgets?: Record<string, string> | null;
}

/** The answer of a rotation: the key and its new token (shown this once). */
export interface RotatedKey extends GovernedKey {
  token: string;
  /** Unix ms: the old token authenticates until then, then answers 401 `key_rotated`. */
  previousTokenValidUntil: number;
}

/** One recorded change of a key. */
export interface KeyEvent {
  eventId: string;
  /** Unix ms. */
  at: number;
  type: "update" | "rotate";
  /** `wallet:<address>` or `key:<keyId>`. */
  actor: string;
  /** Per changed field, its old and new value (amounts as atomic-unit strings, times as Unix ms). */
  changes: Record<string, { from: unknown; to: unknown }>;
}

/** A newest-first page of a key's events. */
export interface KeyEventPage {
  events: KeyEvent[];
  next_cursor: string | null;
}

/** Events read per page of the history. */
export const EVENT_PAGE_SIZE = 20;

async function call<T>(method: "GET" | "POST" | "PATCH", path: string, body: unknown, signal: AbortSignal | undefined): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      cache: "no-store",
      credentials: "same-origin",
      headers: body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted) throw new UserAbortError("The request was cancelled.", { cause: error });
    throw new ConnectionError(error instanceof Error ? error.message : String(error), { cause: error });
  }
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  if (response.ok) return parsed as T;
  const envelope = (parsed as { error?: { code?: unknown; message?: unknown; param?: unknown; details?: unknown } } | null)?.error;
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  const code = str(envelope?.code);
  const Class = ERROR_CLASSES[response.status] ?? TollgateError;
  throw new Class(`${response.status}${code ? ` ${code}` : ""}: ${str(envelope?.message) ?? `HTTP ${response.status}`}`, {
    status: response.status,
    code,
    param: str(envelope?.param),
    details: typeof envelope?.details === "object" && envelope.details !== null ? (envelope.details as Record<string, unknown>) : undefined,
    headers: response.headers,
    body: parsed,
  });
}

const keyPath = (keyId: string) => `/api/keys/${encodeURIComponent(keyId)}`;

/** Applies `update` to the signed-in wallet's key; resolves to the key as the gateway now has it. */
export function updateKey(keyId: string, update: KeyUpdate, signal?: AbortSignal): Promise<GovernedKey> {
  return call<GovernedKey>("PATCH", keyPath(keyId), update, signal);
}

/** Issues a new token for the key; the old one keeps working for `graceSeconds`. */
export function rotateKey(keyId: string, graceSeconds: number, signal?: AbortSignal): Promise<RotatedKey> {
  return call<RotatedKey>("POST", `${keyPath(keyId)}/rotate`, { graceSeconds }, signal);
}

/** A page of the key's changes, newest first, after `cursor` when given. */
export function fetchKeyEvents(keyId: string, cursor: string | null, signal?: AbortSignal): Promise<KeyEventPage> {
  const query = new URLSearchParams({ limit: String(EVENT_PAGE_SIZE), ...(cursor ? { cursor } : {}) });
  return call<KeyEventPage>("GET", `${keyPath(keyId)}/events?${query}`, undefined, signal);
}

/** The key view of a rotation's answer, without its token (the token is shown once and never kept). */
export function withoutToken({ token: _token, ...key }: RotatedKey): GovernedKey {
  return key;
}
