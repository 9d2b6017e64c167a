/**
 * Key governance from the dashboard: update a key, rotate its token and read its change history,
 * through the typed client's `keys.update` / `keys.rotate` / `keys.events` on this origin with
 * the session cookie (the same {@link gatewayClient} as every other call: no token in page memory,
 * no cache). Errors are the client's own classes, so {@link describeError} shows the envelope's
 * message and a 401 ends the session like every other call.
 */
import type { BudgetPeriod, KeyEvent, KeyEventList, ModelBudget, RotatedServiceKey, ServiceKey, UpdateKeyParams } from "@tollgate/client";
import { gatewayClient } from "./api";

export type { BudgetPeriod, KeyEvent, ModelBudget };

/** The budget windows a key may have (UTC calendar days, weeks from Monday, months). */
export const BUDGET_PERIODS = ["daily", "weekly", "monthly"] as const satisfies readonly BudgetPeriod[];

/** A key as the gateway's key view returns it, governance fields included. */
export type GovernedKey = ServiceKey;
/** The body of `PATCH /api/keys/{keyId}` the edit form sends. */
export type KeyUpdate = Pick<UpdateKeyParams, "name" | "budgetPeriod" | "models"> & { budgetLimit?: string; modelBudgets?: Record<string, string> | null };
/** The answer of a rotation: the key and its new token (shown this once). */
export type RotatedKey = RotatedServiceKey;
/** A newest-first page of a key's events. */
export type KeyEventPage = KeyEventList;

/** Events read per page of the history. */
export const EVENT_PAGE_SIZE = 20;

/** Applies `update` to the signed-in wallet's key; resolves to the key as the gateway now has it. */
export function updateKey(keyId: string, update: KeyUpdate, signal?: AbortSignal): Promise<GovernedKey> {
  return gatewayClient().keys.update(keyId, update, { signal });
}

/** Issues a new token for the key; the old one keeps working for `graceSeconds`. */
export function rotateKey(keyId: string, graceSeconds: number, signal?: AbortSignal): Promise<RotatedKey> {
  return gatewayClient().keys.rotate(keyId, { graceSeconds }, { signal });
}

/** A page of the key's changes, newest first, after `cursor` when given. */
export function fetchKeyEvents(keyId: string, cursor: string | null, signal?: AbortSignal): Promise<KeyEventPage> {
  return gatewayClient().keys.events(keyId, { limit: EVENT_PAGE_SIZE, ...(cursor ? { cursor } : {}) }, { signal });
}

/** The key view of a rotation's answer, without its token (the token is shown once and never kept). */
export function withoutToken({ token: _token, ...key }: RotatedKey): GovernedKey {
  return key;
}
