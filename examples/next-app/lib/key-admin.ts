/**
 * Key governance from the dashboard: create a key, update it, rotate its token, read its change
 * history and revoke it, through the typed client's `keys.create` / `keys.update` / `keys.rotate`
 * / `keys.events` (and {@link revokeKey}) on this origin with
 * the session cookie (the same {@link gatewayClient} as every other call: no token in page memory,
 * no cache). Errors are the client's own classes, so {@link describeError} shows the envelope's
 * message and a 401 ends the session like every other call.
 */
import type {
  BudgetPeriod,
  CreatedServiceKey,
  CreateKeyParams,
  KeyEvent,
  KeyEventList,
  ModelBudget,
  RevokedKey,
  RotatedServiceKey,
  ServiceKey,
  UpdateKeyParams,
} from "@tollgate/client";
import { gatewayClient } from "./api";
import { revokeKey } from "./key-revoke";

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

/** Creates a key for the signed-in wallet; the answer carries its token, shown once and never kept. */
export function createKey(params: CreateKeyParams, signal?: AbortSignal): Promise<CreatedServiceKey> {
  return gatewayClient().keys.create(params, { signal });
}

/** Revokes the signed-in wallet's key (see {@link revokeKey}); every token of the key is refused from then on. */
export function revokeOwnKey(keyId: string, signal?: AbortSignal): Promise<RevokedKey> {
  return revokeKey(gatewayClient(), keyId, signal);
}

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

/** The key view of a creation's or rotation's answer, without its token (the token is shown once and never kept). */
export function withoutToken({ token: _token, ...key }: RotatedKey | CreatedServiceKey): GovernedKey {
  return key;
}
