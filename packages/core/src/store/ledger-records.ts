/** The records a guarded ledger step hands back, built from what it returns (the SQL stores share them). */
import type { SqlInt, SqlKeyRow } from "./sql-rows.js";
import type { BudgetPeriod, IntentRecord, KeyBudget, NewIntent } from "./types.js";

/**
 * The record of an intent a reserve has just inserted: the caller's `intent` (its own `request`
 * value, not a copy: the stored copy is the row) with the owner and chain the key gave it.
 */
export function authorizedIntent(intent: NewIntent, owner: string, chainId: number): IntentRecord {
  return {
    intentId: intent.intentId,
    keyId: intent.keyId,
    owner,
    chainId,
    status: "authorized",
    maxAmount: intent.maxAmount,
    fingerprint: intent.fingerprint,
    request: intent.request ?? null,
    createdAt: intent.createdAt,
    expiresAt: intent.expiresAt,
    ...(intent.idempotencyKey === undefined ? {} : { idempotencyKey: intent.idempotencyKey }),
    ...(intent.budgetScope === undefined ? {} : { budgetScope: intent.budgetScope.scope }),
  };
}

/** The budget columns of a `keys` row: all that a successful guarded ledger step returns. */
export type SqlKeyBudgetRow<I extends SqlInt = SqlInt> = Pick<
  SqlKeyRow<I>,
  "key_id" | "budget_limit" | "budget_used" | "budget_reserved" | "budget_period" | "period_start"
>;

/** The budget of a key from the budget columns of a `keys` row. */
export function keyBudgetFromRow(r: SqlKeyBudgetRow): KeyBudget {
  const key: KeyBudget = { keyId: r.key_id, budgetLimit: BigInt(r.budget_limit), budgetUsed: BigInt(r.budget_used), budgetReserved: BigInt(r.budget_reserved) };
  if (r.budget_period != null) key.budgetPeriod = r.budget_period as BudgetPeriod;
  if (r.period_start != null) key.periodStart = Number(r.period_start);
  return key;
}
