/**
 * {@link UsageStore} on PostgreSQL: one statement (so one snapshot, one round trip) that groups
 * the wallet's charges by UTC day and by the model their intent recorded, beside the sum of its
 * open reservations. NUMERIC sums are exact at any size; they leave the database as text.
 */
import type { UsageStore } from "@tollgate/core";
import type { Migration } from "./migrations.js";
import type { Queryable } from "./queryable.js";
import type { TableName } from "./rows.js";

/** Migration 12 (the same number as `@tollgate/sqlite`): a wallet's charges by time, for the usage read. */
export const USAGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 12,
    name: "charges by owner and time (usage)",
    sql: "CREATE INDEX charges_by_owner ON charges (owner, created_at);",
  },
];

/** One result row: `reserved` on every row; the cell columns NULL on the single row of a wallet without charges in range. */
interface UsageRow {
  reserved: string;
  day_start: string | null;
  model_id: string | null;
  spent: string | null;
  calls: string | null;
}

/**
 * The usage statement over the tables of `t`: $1 wallet, $2 from (ms, included), $3 to (ms,
 * excluded), $4 chain id or NULL, $5 now. The model is the intent request's `modelId` when it is a
 * JSON string (the ledger writes one). `held` is what the wallet's keys hold reserved (a key's
 * `budget_reserved` is the sum of its authorized intents) less what their overdue authorized
 * intents hold, read through the partial index intents_due_by_key (authorized only; plans.test.ts):
 * it grows with the wallet's keys and overdue intents, never with its open ones.
 */
export function usageSql(t: TableName): string {
  const [keys, intents, charges] = [t("keys"), t("intents"), t("charges")];
  return `
    WITH cells AS (
      SELECT ((c.created_at / 86400000) * 86400000)::text AS day_start,
             CASE WHEN json_typeof(i.request -> 'modelId') = 'string' THEN i.request ->> 'modelId' END AS model_id,
             sum(c.amount)::text AS spent, count(*)::text AS calls
      FROM ${charges} c LEFT JOIN ${intents} i ON i.intent_id = c.intent_id
      WHERE c.owner = $1::text AND c.created_at >= $2::bigint AND c.created_at < $3::bigint AND ($4::bigint IS NULL OR c.chain_id = $4::bigint)
      GROUP BY 1, 2
    ),
    held AS (
      SELECT ((SELECT COALESCE(sum(budget_reserved), 0) FROM ${keys} WHERE owner = $1::text AND ($4::bigint IS NULL OR chain_id = $4::bigint))
        - (SELECT COALESCE(sum(i.max_amount), 0)
           FROM ${keys} k JOIN ${intents} i ON i.key_id = k.key_id
           WHERE k.owner = $1::text AND ($4::bigint IS NULL OR k.chain_id = $4::bigint) AND i.status = 'authorized' AND i.expires_at <= $5::bigint))::text AS reserved
    )
    SELECT held.reserved, cells.day_start, cells.model_id, cells.spent, cells.calls FROM held LEFT JOIN cells ON true`;
}

export function createUsageOps(db: Queryable, t: TableName): UsageStore {
  const usage = usageSql(t);

  return {
    async usageByWallet({ wallet, chainId, fromMs, toMs, now }) {
      const { rows } = await db.query<UsageRow>(usage, [wallet, fromMs, toMs, chainId ?? null, now]);
      const cells = rows
        .filter((r) => r.day_start !== null)
        .map((r) => ({ dayStart: Number(r.day_start), modelId: r.model_id, spent: BigInt(r.spent ?? "0"), calls: Number(r.calls ?? "0") }));
      return { cells, reserved: BigInt(rows[0]?.reserved ?? "0") };
    },
  };
}
