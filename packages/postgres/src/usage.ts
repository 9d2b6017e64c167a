/**
 * {@link UsageStore} on PostgreSQL: one statement (so one snapshot, one round trip) that groups
 * the per-day rollups of the wallet's keys (whole days; the charges themselves for a part of a day
 * at an end of the range) by UTC day and by the model their intents recorded, beside the sum of
 * its open reservations. NUMERIC sums are exact at any size; they leave the database as text.
 */
import { heldKeysSince, splitUsageRange, type UsageStore } from "@tollgate/core";
import type { Migration } from "./migrations.js";
import type { Queryable } from "./queryable.js";
import type { TableName } from "./rows.js";

/** The model a charge paid for: its intent request's `modelId` when that is a JSON string (the ledger writes one); '' for none. */
const MODEL_OF = (intents: string, intent: string) =>
  `COALESCE((SELECT CASE WHEN json_typeof(i.request -> 'modelId') = 'string' THEN i.request ->> 'modelId' END FROM ${intents} i WHERE i.intent_id = ${intent}), '')`;
const DAY_OF = (createdAt: string) => `(${createdAt} / 86400000) * 86400000`;

/**
 * Migrations 12 and 15 (the same numbers as `@tollgate/sqlite`): a wallet's charges by time, then
 * the per-day rollups of the usage read. `usage_days` holds, per key, UTC day and model ('' for
 * none), the charges' summed amount and count; a trigger adds each new charge at the end of the
 * statement that inserts it (charges are never deleted and their amount, key, time and intent never
 * change), and the migration sums the charges already there, with inserts held off meanwhile. A
 * rollup row belongs to one key, and every statement that inserts a charge has locked its key's row
 * first (the group's leading statement, or the step's own key update, which runs before a row
 * trigger fires at the statement's end): two transactions never wait for each other's rollup
 * rows in a cycle.
 */
export const USAGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 12,
    name: "charges by owner and time (usage)",
    sql: "CREATE INDEX charges_by_owner ON charges (owner, created_at);",
  },
  {
    version: 15,
    name: "usage: per-day rollups of the charges",
    sql: `
      LOCK TABLE charges IN SHARE MODE;
      CREATE TABLE usage_days (
        key_id text NOT NULL,
        day_start bigint NOT NULL,
        model_id text NOT NULL,
        owner text NOT NULL,
        chain_id bigint NOT NULL,
        spent numeric NOT NULL,
        calls bigint NOT NULL,
        PRIMARY KEY (key_id, day_start, model_id)
      );
      CREATE INDEX usage_days_by_owner ON usage_days (owner, day_start);
      CREATE FUNCTION usage_days_add() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
      BEGIN
        INSERT INTO usage_days AS u (key_id, day_start, model_id, owner, chain_id, spent, calls)
        VALUES (NEW.key_id, ${DAY_OF("NEW.created_at")}, ${MODEL_OF("intents", "NEW.intent_id")}, NEW.owner, NEW.chain_id, NEW.amount, 1)
        ON CONFLICT (key_id, day_start, model_id) DO UPDATE SET spent = u.spent + EXCLUDED.spent, calls = u.calls + 1;
        RETURN NULL;
      END
      $fn$;
      CREATE TRIGGER charges_usage_days AFTER INSERT ON charges FOR EACH ROW EXECUTE FUNCTION usage_days_add();
      INSERT INTO usage_days (key_id, day_start, model_id, owner, chain_id, spent, calls)
        SELECT c.key_id, ${DAY_OF("c.created_at")}, ${MODEL_OF("intents", "c.intent_id")}, min(c.owner), min(c.chain_id), sum(c.amount), count(*)
        FROM charges c GROUP BY 1, 2, 3;
    `,
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
 * The usage statement over the tables of `t`: $1 wallet, $4 chain id or NULL, $5 now, and the
 * range as {@link splitUsageRange} splits it: $6–$7 whole days, $2–$3 and $8–$9 parts of a day
 * (each [from, to) in ms). The model is the intent request's `modelId` when it is a JSON string
 * (the ledger writes one). `held` is what the wallet's keys hold reserved (a key's
 * `budget_reserved` is the sum of its authorized intents) less what their overdue authorized
 * intents hold, read through the partial index intents_due_by_key (authorized only; plans.test.ts),
 * over `held_keys`: only the keys that may still hold an open reservation at $10
 * ({@link heldKeysSince}), unrevoked ones expiring after it (keys_live_by_owner) and ones revoked
 * after it (keys_revoked_by_owner). It grows with the wallet's recent keys and their overdue
 * intents, never with its open ones nor with the keys it revoked long ago.
 */
export function usageSql(t: TableName): string {
  const [keys, intents, charges, days] = [t("keys"), t("intents"), t("charges"), t("usage_days")];
  // $6, $7: whole days [from, to) read from the rollups (NULL: none); $2, $3 and $8, $9: the parts
  // of a day at the range's ends read from the charges (empty ranges when none).
  const ofCharges = (from: string, to: string) => `
      SELECT ${DAY_OF("c.created_at")} AS day_start, NULLIF(${MODEL_OF(intents, "c.intent_id")}, '') AS model_id, c.amount AS spent, 1 AS calls
      FROM ${charges} c
      WHERE c.owner = $1::text AND c.created_at >= ${from}::bigint AND c.created_at < ${to}::bigint AND ($4::bigint IS NULL OR c.chain_id = $4::bigint)`;
  return `
    WITH cells AS (
      SELECT day_start::text, model_id, sum(spent)::text AS spent, sum(calls)::text AS calls FROM (
        SELECT day_start, NULLIF(model_id, '') AS model_id, spent, calls
        FROM ${days}
        WHERE owner = $1::text AND day_start >= $6::bigint AND day_start < $7::bigint AND ($4::bigint IS NULL OR chain_id = $4::bigint)
        UNION ALL ${ofCharges("$2", "$3")}
        UNION ALL ${ofCharges("$8", "$9")}
      ) parts
      GROUP BY 1, 2
    ),
    held_keys AS MATERIALIZED (
      SELECT key_id, budget_reserved FROM ${keys}
      WHERE owner = $1::text AND revoked_at IS NULL AND expires_at > $10::bigint AND ($4::bigint IS NULL OR chain_id = $4::bigint)
      UNION ALL
      SELECT key_id, budget_reserved FROM ${keys}
      WHERE owner = $1::text AND revoked_at > $10::bigint AND ($4::bigint IS NULL OR chain_id = $4::bigint)
    ),
    held AS (
      SELECT ((SELECT COALESCE(sum(budget_reserved), 0) FROM held_keys)
        - (SELECT COALESCE(sum(i.max_amount), 0)
           FROM held_keys k JOIN ${intents} i ON i.key_id = k.key_id
           WHERE i.status = 'authorized' AND i.expires_at <= $5::bigint))::text AS reserved
    )
    SELECT held.reserved, cells.day_start, cells.model_id, cells.spent, cells.calls FROM held LEFT JOIN cells ON true`;
}

export function createUsageOps(db: Queryable, t: TableName): UsageStore {
  const usage = usageSql(t);

  return {
    async usageByWallet({ wallet, chainId, fromMs, toMs, now }) {
      const { days, charges } = splitUsageRange(fromMs, toMs);
      const [head, tail] = [charges[0] ?? [0, 0], charges[1] ?? [0, 0]];
      const { rows } = await db.query<UsageRow>(usage, [
        wallet,
        head[0],
        head[1],
        chainId ?? null,
        now,
        days?.[0] ?? 0,
        days?.[1] ?? 0,
        tail[0],
        tail[1],
        heldKeysSince(now),
      ]);
      const cells = rows
        .filter((r) => r.day_start !== null)
        .map((r) => ({ dayStart: Number(r.day_start), modelId: r.model_id, spent: BigInt(r.spent ?? "0"), calls: Number(r.calls ?? "0") }));
      return { cells, reserved: BigInt(rows[0]?.reserved ?? "0") };
    },
  };
}
