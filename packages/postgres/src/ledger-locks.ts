/** The leading lock statement of a group of ledger statements (group-commit.ts `lead`). */
import type { LockHint, Value } from "./group-commit.js";
import type { TableName } from "./rows.js";

/**
 * The statement that opens a group of ledger statements (group-commit.ts): it locks, in the order
 * every single statement keeps (intents in (expires_at, intent_id) order, then keys in key_id
 * order), the intents the group finishes, the overdue intents (at the latest `now`) of the keys
 * whose statements expire them (a hint with `now`; the lean reserve expires nothing), and the keys
 * of all three. The group's statements then find those rows locked by their own transaction,
 * so two groups (of two instances) never wait for each other in a cycle, whatever order their
 * statements came in. `i` is materialized, and every key row passes the sort (or the semi-join's
 * hash of `i`) before it is locked, so the intents are all locked first. Literal SQL: planned for
 * the arrays of this group.
 */
export function groupLocks(t: TableName) {
  const [keys, intents] = [t("keys"), t("intents")];
  return (hints: readonly LockHint[], literal: (v: Value) => string): string[] => {
    const array = (items: readonly string[]) => `ARRAY[${[...new Set(items)].map(literal).join(", ")}]::text[]`;
    const finishes = array(hints.flatMap((h) => (h.intent === undefined ? [] : [h.intent])));
    const spends = array(hints.flatMap((h) => (h.key === undefined ? [] : [h.key])));
    // Only statements that expire (a hint with `now`) lock their keys' overdue intents.
    const expiring = hints.filter((h) => h.key !== undefined && h.now !== undefined);
    const now = expiring.reduce((max, h) => Math.max(max, h.now!), Number.MIN_SAFE_INTEGER);
    const overdue =
      expiring.length === 0
        ? ""
        : `
           OR (key_id = ANY (${array(expiring.map((h) => h.key!))}) AND status = 'authorized' AND expires_at <= ${literal(now)}::bigint)`;
    return [
      `WITH i AS MATERIALIZED (
         SELECT key_id FROM ${intents} WHERE intent_id = ANY (${finishes})${overdue}
         ORDER BY expires_at, intent_id FOR NO KEY UPDATE)
       SELECT key_id FROM ${keys} WHERE key_id IN (SELECT unnest(${spends}) UNION SELECT key_id FROM i)
       ORDER BY key_id FOR NO KEY UPDATE`,
    ];
  };
}
