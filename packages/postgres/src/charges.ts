/** {@link ChargeStore} on PostgreSQL. Each write is one statement, atomic on its own. */
import type { ChargeStore } from "@tollgate/core";
import type { Migration } from "./migrations.js";
import type { Queryable } from "./queryable.js";
import { CHARGE_COLS, enc, toCharge, type ChargeRow, type TableName } from "./rows.js";

/** The charges' own schema steps after the ledger's first. */
export const CHARGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 19,
    name: "charges: the signed transfer of an unfinished batch",
    sql: "ALTER TABLE charges ADD COLUMN transfer_tx text",
  },
];

export function createChargeOps(db: Queryable, t: TableName): ChargeStore {
  const charges = t("charges");
  // `free` locks the oldest free charges that no concurrent claim holds (SKIP LOCKED: a claim never
  // waits for another and never gets its charges); a charge leased by a claim that committed after
  // this statement began is re-checked on its latest version and dropped.
  const claim = `
    WITH free AS MATERIALIZED (
      SELECT charge_id FROM ${charges}
      WHERE status = 'queued' AND (lease_until IS NULL OR lease_until <= $2::bigint)
        AND ($5::bigint[] IS NULL OR chain_id = ANY ($5::bigint[]))
      ORDER BY transfer_tx IS NULL, error IS NOT NULL, CASE WHEN error IS NULL THEN created_at ELSE COALESCE(lease_until, 0) END, created_at, charge_id LIMIT $4::int FOR NO KEY UPDATE SKIP LOCKED
    ),
    claimed AS (
      UPDATE ${charges} c SET batch_id = $1::text, lease_until = $3::bigint
      FROM free WHERE c.charge_id = free.charge_id
      RETURNING c.*
    )
    SELECT ${CHARGE_COLS} FROM claimed x ORDER BY x.created_at, x.charge_id`;
  // The given charges still queued and held by batch $2, locked in charge_id order (re-checked on
  // their latest versions), so two statements over overlapping lists never wait in a cycle.
  const held = `charge_id = ANY (ARRAY(
      SELECT charge_id FROM ${charges}
      WHERE charge_id IN (SELECT json_array_elements_text($1::json)) AND batch_id = $2::text AND status = 'queued'
      ORDER BY charge_id FOR NO KEY UPDATE))`;
  const complete = `UPDATE ${charges} SET status = 'settled', tx_hash = $3::text, settled_at = $4::bigint, lease_until = NULL, transfer_tx = NULL WHERE ${held} RETURNING 1`;
  // All or none: a transfer for a group's sum must never sit on a part of the group.
  const record = `
    WITH h AS MATERIALIZED (SELECT charge_id FROM ${charges} WHERE ${held})
    UPDATE ${charges} SET transfer_tx = $3::text
    WHERE charge_id IN (SELECT charge_id FROM h)
      AND (SELECT count(*) FROM h) = (SELECT count(DISTINCT v) FROM json_array_elements_text($1::json) v)
    RETURNING 1`;
  const fail = `UPDATE ${charges} SET batch_id = NULL, lease_until = $5::bigint, error = $3::text, transfer_tx = CASE WHEN $4::boolean THEN NULL ELSE transfer_tx END WHERE ${held} RETURNING 1`;

  return {
    async listQueuedCharges({ limit }) {
      const { rows } = await db.query<ChargeRow>(`SELECT ${CHARGE_COLS} FROM ${charges} x WHERE status = 'queued' ORDER BY x.created_at, x.charge_id LIMIT $1::int`, [
        Math.max(0, Math.floor(limit)),
      ]);
      return rows.map(toCharge);
    },

    async getCharge(chargeId) {
      const { rows } = await db.query<ChargeRow>(`SELECT ${CHARGE_COLS} FROM ${charges} WHERE charge_id = $1::text`, [chargeId]);
      return rows[0] ? toCharge(rows[0]) : null;
    },

    /** One statement: `FOR NO KEY UPDATE SKIP LOCKED` in a CTE, then the lease UPDATE. */
    async claimCharges({ batchId, now, leaseMs, limit, chainIds }) {
      const { rows } = await db.query<ChargeRow>(claim, [batchId, now, now + leaseMs, Math.max(0, Math.floor(limit)), chainIds === undefined ? null : chainIds.map(String)]);
      return rows.map(toCharge);
    },

    /** One conditional UPDATE, as completeCharges. */
    async recordChargeTransfer({ chargeIds, batchId, transferTx }) {
      return (await db.query(record, [JSON.stringify(chargeIds), batchId, transferTx])).rows.length;
    },

    /** One UPDATE of the rows `held` locks: `batch_id` and `status` are checked on each row's latest version. */
    async completeCharges({ chargeIds, batchId, txHash, now }) {
      return (await db.query(complete, [JSON.stringify(chargeIds), batchId, txHash, now])).rows.length;
    },

    /** One conditional UPDATE, as completeCharges. */
    async failCharges({ chargeIds, batchId, error, dropTransfer, retryAt }) {
      return (await db.query(fail, [JSON.stringify(chargeIds), batchId, enc(error), dropTransfer === true, retryAt ?? null])).rows.length;
    },

    async pendingChargeTotals(owner, chainId) {
      // NUMERIC sums exactly, beyond 2^256 too.
      const { rows } = await db.query<{ amount: string; count: string }>(
        `SELECT COALESCE(sum(amount), 0)::text AS amount, count(*)::text AS count FROM ${charges} WHERE owner = $1::text AND chain_id = $2::bigint AND status = 'queued'`,
        [owner, chainId],
      );
      return { amount: BigInt(rows[0]?.amount ?? "0"), count: Number(rows[0]?.count ?? 0) };
    },
  };
}
