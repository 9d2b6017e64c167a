/** Row mappers of the key governance tables (migration 11), shared by the SQL stores (see sql-rows.ts). */
import type { KeyEventRecord, ModelSpendRecord } from "./types.js";
import type { SqlInt } from "./sql-rows.js";

/** A row of `key_model_spend` (migration 11): the per-model counters of a key. */
export interface SqlModelSpendRow<I extends SqlInt = SqlInt> {
  key_id: string;
  scope: string;
  budget_used: I;
  budget_reserved: I;
  period_start: I | null;
}

/** A row of `key_events` (migration 11); `changes` is JSON text. */
export interface SqlKeyEventRow<I extends SqlInt = SqlInt> {
  event_id: string;
  key_id: string;
  at: I;
  type: string;
  actor: string;
  changes: string;
}

/** The per-model counters of a `key_model_spend` row (no free-text columns). */
export function modelSpendFromRow(r: SqlModelSpendRow): ModelSpendRecord {
  const spend: ModelSpendRecord = { keyId: r.key_id, scope: r.scope, budgetUsed: BigInt(r.budget_used), budgetReserved: BigInt(r.budget_reserved) };
  if (r.period_start !== null) spend.periodStart = Number(r.period_start);
  return spend;
}

/** The event of a `key_events` row (no free-text columns: `changes` is JSON). */
export function keyEventFromRow(r: SqlKeyEventRow): KeyEventRecord {
  const changes = JSON.parse(r.changes) as KeyEventRecord["changes"];
  return { eventId: r.event_id, keyId: r.key_id, at: Number(r.at), type: r.type as KeyEventRecord["type"], actor: r.actor, changes };
}
