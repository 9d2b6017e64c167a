/**
 * {@link UsageStore} on SQLite: one aggregate statement over the wallet's charges (grouped by UTC
 * day and by the model its intent recorded) and one over its open reservations (its keys'
 * reserved budgets less their overdue intents), read in one snapshot.
 *
 * Exact sums: SQLite's SUM of INTEGERs raises "integer overflow" past 2^63-1, which a wallet's
 * charges over many keys and windows may reach (each is at most 2^63-1). So every amount is summed
 * as two halves, `amount >> 32` (< 2^31) and `amount & 0xffffffff` (< 2^32), neither of which
 * can overflow below 2^31 rows per group, and the halves are joined as bigint here.
 */
import type Database from "better-sqlite3";
import type { UsageStore } from "@tollgate/core";
import type { Migration } from "./migrations.js";

/** Migration 12 (the same number as PostgreSQL's): a wallet's charges by time, for the usage read. */
export const USAGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 12,
    name: "charges by owner and time (usage)",
    sql: "CREATE INDEX charges_by_owner ON charges (owner, created_at);",
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
}

/**
 * A wallet's open reservations: what its keys hold reserved (`keys_by_owner`; a key's
 * `budget_reserved` is the sum of its authorized intents, money invariant 1's bookkeeping) less
 * what its overdue authorized intents still hold (each key's by `intents_due_by_key`, which
 * only reaches the overdue ones). So the read grows with the wallet's keys and their overdue
 * intents, never with its open ones (up to `limits.openIntentsPerKey` per key). CROSS JOIN fixes
 * the keys-first order: with statistics of a small or empty intents table SQLite would otherwise
 * scan every wallet's authorized intents first (plans.test.ts).
 */
export const HELD_SQL = `
    SELECT r.hi, r.lo, d.hi AS due_hi, d.lo AS due_lo
    FROM (SELECT ${splitSum("budget_reserved")} FROM keys WHERE owner = @wallet AND (@chain IS NULL OR chain_id = @chain)) r,
      (SELECT ${splitSum("i.max_amount")}
       FROM keys k CROSS JOIN intents i ON i.key_id = k.key_id
       WHERE k.owner = @wallet AND (@chain IS NULL OR k.chain_id = @chain) AND i.status = 'authorized' AND i.expires_at <= @now) d`;

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

export function createUsageOps(db: Database.Database): UsageStore {
  // The model is the intent request's `modelId` when it is a JSON string (the ledger writes one).
  const cells = db.prepare<Bounds, CellRow>(`
    SELECT (c.created_at / 86400000) * 86400000 AS day_start,
           CASE WHEN json_type(i.request, '$.modelId') = 'text' THEN json_extract(i.request, '$.modelId') END AS model_id,
           ${splitSum("c.amount")}, COUNT(*) AS calls
    FROM charges c LEFT JOIN intents i ON i.intent_id = c.intent_id
    WHERE c.owner = @wallet AND c.created_at >= @from AND c.created_at < @to AND (@chain IS NULL OR c.chain_id = @chain)
    GROUP BY day_start, model_id`);
  const reserved = db.prepare<Bounds, HeldRow>(HELD_SQL);
  const held = (row: HeldRow | undefined) => joined(row) - joined(row && { hi: row.due_hi, lo: row.due_lo });
  // A deferred transaction: both statements read one snapshot (WAL), and take no write lock.
  const read = db.transaction((bounds: Bounds) => ({ rows: cells.all(bounds), reserved: held(reserved.get(bounds)) }));

  return {
    async usageByWallet({ wallet, chainId, fromMs, toMs, now }) {
      const { rows, reserved: held } = read({ wallet, chain: chainId ?? null, from: fromMs, to: toMs, now });
      return {
        cells: rows.map((r) => ({ dayStart: Number(r.day_start), modelId: r.model_id, spent: joined(r), calls: Number(r.calls) })),
        reserved: held,
      };
    },
  };
}
