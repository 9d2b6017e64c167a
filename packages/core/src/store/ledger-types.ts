/** What the guarded ledger steps of a {@link LedgerStore} answer (types.ts re-exports these). */
import type { IntentRecord, KeyRecord, LedgerStore } from "./types.js";

/**
 * Why a key cannot be charged. `too_many_open_intents`: a reserve's `openLimit` was reached
 * (only {@link LedgerStore.reserve} gives it).
 */
export type KeyGuardReason = "key_revoked" | "key_expired" | "too_many_open_intents" | "budget_exhausted" | "model_budget_exhausted";

/**
 * A key's budget as a guarded ledger step left it (its window rolled by that step): what the
 * budget headers and the remaining amount need. A successful reserve, settle or abort returns only
 * this, so that the paid call's hot statements return a handful of columns instead of the whole
 * key row (a full {@link KeyRecord} is one too: a store may return it).
 */
export type KeyBudget = Pick<KeyRecord, "keyId" | "budgetLimit" | "budgetUsed" | "budgetReserved" | "budgetPeriod" | "periodStart">;

/** Outcome of {@link LedgerStore.reserve}. */
export type ReserveResult =
  | { ok: true; intent: IntentRecord; key: KeyBudget }
  | { ok: false; reason: "key_not_found" }
  | { ok: false; reason: KeyGuardReason; key: KeyRecord }
  /** An intent with the same (keyId, idempotencyKey) exists: it is returned, nothing reserved. */
  | { ok: false; reason: "idempotent_replay"; intent: IntentRecord; key: KeyRecord };

/**
 * Outcome of {@link LedgerStore.settle} and {@link LedgerStore.abort}. Success returns the key's
 * budget after the release, not the finished intent (read it with `getIntent` when needed).
 */
export type FinishResult =
  | { ok: true; key: KeyBudget }
  | { ok: false; reason: "not_found" }
  /**
   * `invalid_state`: the intent is no longer authorized (its stored `result` can be replayed);
   * `expired`: it was past `expiresAt` and has just been expired, its reservation released;
   * `exceeds_reservation` (settle only): `finalAmount > maxAmount`, nothing changed.
   */
  | { ok: false; reason: "invalid_state" | "expired" | "exceeds_reservation"; intent: IntentRecord };

/** Outcome of {@link LedgerStore.chargeDirect}. */
export type ChargeDirectResult = { ok: true; key: KeyRecord } | { ok: false; reason: "key_not_found" } | { ok: false; reason: KeyGuardReason; key: KeyRecord };
