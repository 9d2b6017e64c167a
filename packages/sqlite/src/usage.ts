/**
 * {@link UsageStore} on SQLite: one aggregate statement over the per-day rollups of the wallet's
 * keys (whole days; the charges themselves for a part of a day at an end of the range), grouped by
 * UTC day and by the model the charges' intents recorded, and one over its open reservations (its
 * keys' reserved budgets less their overdue intents), read in one snapshot.
 *
 * Exact sums: SQLite's SUM of INTEGERs raises "integer overflow" past 2^63-1, which a wallet's
 * charges over many keys and windows may reach (each is at most 2^63-1). So every amount is summed
 * as two halves, `amount >> 32` (< 2^31) and `amount & 0xffffffff` (< 2^32), neither of which
 * can overflow below 2^31 rows per group, and the halves are joined as bigint here.
 */
import type Database from "better-sqlite3";
import { heldKeysSince, splitUsageRange, type UsageStore } from "@tollgate/core";
import type { Migration } from "./migrations.js";

/** The model a charge paid for: its intent request's `modelId` when that is a JSON string (the ledger writes one); '' for none. */
const MODEL_OF = (intent: string) =>
  `COALESCE((SELECT CASE WHEN json_type(i.request, '$.modelId') = 'text' THEN json_extract(i.request, '$.modelId') END FROM intents i WHERE i.intent_id = ${intent}), '')`;
const DAY_OF = (createdAt: string) => `(${createdAt} / 86400000) * 86400000`;

/**
 * Migrations 12 and 15 (the same numbers as PostgreSQL's): a wallet's charges by time, then the
 * per-day rollups of the usage read. `usage_days` holds, per key, UTC day and model ('' for
 * none), the charges' amounts summed as two halves (see the file comment) and counted; a trigger
 * adds each new charge in the statement that inserts it (charges are never deleted and their
 * amount, key, time and intent never change), and the migration sums the charges already there.
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
      CREATE TABLE usage_days (
        key_id TEXT NOT NULL,
        day_start INTEGER NOT NULL,
        model_id TEXT NOT NULL,
        owner TEXT NOT NULL,
        chain_id INTEGER NOT NULL,
        spent_hi INTEGER NOT NULL,
        spent_lo INTEGER NOT NULL,
        calls INTEGER NOT NULL,
        PRIMARY KEY (key_id, day_start, model_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX usage_days_by_owner ON usage_days (owner, day_start);
      CREATE TRIGGER charges_usage_days AFTER INSERT ON charges BEGIN
        INSERT INTO usage_days (key_id, day_start, model_id, owner, chain_id, spent_hi, spent_lo, calls)
        VALUES (NEW.key_id, ${DAY_OF("NEW.created_at")}, ${MODEL_OF("NEW.intent_id")}, NEW.owner, NEW.chain_id, NEW.amount >> 32, NEW.amount & 4294967295, 1)
        ON CONFLICT (key_id, day_start, model_id) DO UPDATE
          SET spent_hi = spent_hi + excluded.spent_hi, spent_lo = spent_lo + excluded.spent_lo, calls = calls + 1;
      END;
      INSERT INTO usage_days (key_id, day_start, model_id, owner, chain_id, spent_hi, spent_lo, calls)
        SELECT c.key_id, ${DAY_OF("c.created_at")}, ${MODEL_OF("c.intent_id")}, MIN(c.owner), MIN(c.chain_id), SUM(c.amount >> 32), SUM(c.amount & 4294967295), COUNT(*)
        FROM charges c GROUP BY 1, 2, 3;
    `,
  },
];

/** The two halves of an amount column, summed (see the file comment). */
const splitSum = (column: string) => `SUM(${column} >> 32) AS hi, SUM(${column} & 4294967295) AS lo`;
/** The sum of a row of {@link splitSum}; 0 for SUM over no rows (NULL). */
const joined = (row: { hi: bigint | null; lo: bigint | null } | undefined): bigint => ((row?.hi ?? 0n) << 32n) + (row?.lo ?? 0n);

interface Bounds {
  wallet: string;
  chain: number | null;
  from: number;
  to: number;
  now: number;
  /** {@link heldKeysSince} of `now`. */
  since: number;
}

/**
 * A wallet's open reservations: what its keys hold reserved (a key's `budget_reserved` is the sum
 * of its authorized intents, money invariant 1's bookkeeping) less what their overdue authorized
 * intents still hold (each key's by `intents_due_by_key`, which only reaches the overdue ones).
 * Only the keys that may still hold an open reservation are read: those unrevoked and expiring
 * after `@since` (keys_live_by_owner) and those revoked after it (keys_revoked_by_owner); every
 * intent of an older key is overdue ({@link heldKeysSince}), so leaving it out changes no sum. So
 * the read grows with the wallet's recent keys and their overdue intents, never with its open ones
 * (up to `limits.openIntentsPerKey` per key) nor with the keys it revoked long ago. CROSS JOIN
 * fixes the keys-first order: with statistics of a small or empty intents table SQLite would
 * otherwise scan every wallet's authorized intents first (plans.test.ts).
 */
export const HELD_SQL = `
    WITH held_keys AS (
      SELECT key_id, budget_reserved FROM keys WHERE owner = @wallet AND revoked_at IS NULL AND expires_at > @since AND (@chain IS NULL OR chain_id = @chain)
      UNION ALL
      SELECT key_id, budget_reserved FROM keys WHERE owner = @wallet AND revoked_at > @since AND (@chain IS NULL OR chain_id = @chain)
    )
    SELECT r.hi, r.lo, d.hi AS due_hi, d.lo AS due_lo
    FROM (SELECT ${splitSum("budget_reserved")} FROM held_keys) r,
      (SELECT ${splitSum("i.max_amount")}
       FROM held_keys k CROSS JOIN intents i ON i.key_id = k.key_id
       WHERE i.status = 'authorized' AND i.expires_at <= @now) d`;

interface HeldRow {
  hi: bigint | null;
  lo: bigint | null;
  due_hi: bigint | null;
  due_lo: bigint | null;
}

interface CellRow {
  day_start: bigint;
  model_id: string | null;
  hi: bigint | null;
  lo: bigint | null;
  calls: bigint;
}

/**
 * The cells of whole UTC days in `[@from, @to)` (both day starts), from the rollups of the wallet's
 * keys (`usage_days_by_owner`): as many rows as (key, day, model) triples, not charges.
 */
export const DAY_CELLS_SQL = `
    SELECT day_start, NULLIF(model_id, '') AS model_id, SUM(spent_hi) AS hi, SUM(spent_lo) AS lo, SUM(calls) AS calls
    FROM usage_days WHERE owner = @wallet AND day_start >= @from AND day_start < @to AND (@chain IS NULL OR chain_id = @chain)
    GROUP BY day_start, model_id`;

/** The cells of a part of a day, from its charges (`charges_by_owner`). */
const CHARGE_CELLS_SQL = `
    SELECT ${DAY_OF("created_at")} AS day_start, NULLIF(${MODEL_OF("c.intent_id")}, '') AS model_id, ${splitSum("c.amount")}, COUNT(*) AS calls
    FROM charges c
    WHERE c.owner = @wallet AND c.created_at >= @from AND c.created_at < @to AND (@chain IS NULL OR c.chain_id = @chain)
    GROUP BY 1, 2`;

export function createUsageOps(db: Database.Database): UsageStore {
  const dayCells = db.prepare<Bounds, CellRow>(DAY_CELLS_SQL);
  const chargeCells = db.prepare<Bounds, CellRow>(CHARGE_CELLS_SQL);
  const reserved = db.prepare<Bounds, HeldRow>(HELD_SQL);
  const held = (row: HeldRow | undefined) => joined(row) - joined(row && { hi: row.due_hi, lo: row.due_lo });
  // A deferred transaction: the statements read one snapshot (WAL), and take no write lock.
  const read = db.transaction((bounds: Bounds) => {
    const split = splitUsageRange(bounds.from, bounds.to);
    const rows = split.days ? dayCells.all(Object.assign({}, bounds, { from: split.days[0], to: split.days[1] })) : [];
    for (const [from, to] of split.charges) rows.push(...chargeCells.all(Object.assign({}, bounds, { from, to })));
    return { rows, reserved: held(reserved.get(bounds)) };
  });

  return {
    async usageByWallet({ wallet, chainId, fromMs, toMs, now }) {
      const { rows, reserved: held } = read({ wallet, chain: chainId ?? null, from: fromMs, to: toMs, now, since: heldKeysSince(now) });
      return {
        cells: rows.map((r) => ({ dayStart: Number(r.day_start), modelId: r.model_id, spent: joined(r), calls: Number(r.calls) })),
        reserved: held,
      };
    },
  };
}
