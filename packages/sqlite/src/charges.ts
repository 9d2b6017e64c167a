/** {@link ChargeStore} on SQLite. Each write is one statement, atomic on its own. */
import type Database from "better-sqlite3";
import { chargeFromRow, type ChargeStore } from "@tollgate/core";
import type { Migration } from "./migrations.js";
import type { ChargeRow } from "./rows.js";

const byAge = (a: ChargeRow, b: ChargeRow) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.charge_id < b.charge_id ? -1 : 1);

/** The charges' own schema steps after the ledger's first. */
export const CHARGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 19,
    name: "charges: the signed transfer of an unfinished batch",
    sql: "ALTER TABLE charges ADD COLUMN transfer_tx TEXT;",
  },
];

export function createChargeOps(db: Database.Database): ChargeStore {
  const queued = db.prepare<[number], ChargeRow>("SELECT * FROM charges WHERE status = 'queued' ORDER BY created_at, charge_id LIMIT ?");
  const byId = db.prepare<[string], ChargeRow>("SELECT * FROM charges WHERE charge_id = ?");
  // One UPDATE picks and leases: a write statement holds the write lock from its first read, so
  // two claims (connections or processes) can never select the same free charge.
  const claim = db.prepare<{ batch_id: string; now: number; until: number; limit: number; chains: string | null }, ChargeRow>(`
    UPDATE charges SET batch_id = @batch_id, lease_until = @until
    WHERE charge_id IN (
      SELECT charge_id FROM charges
      WHERE status = 'queued' AND (lease_until IS NULL OR lease_until <= @now)
        AND (@chains IS NULL OR chain_id IN (SELECT value FROM json_each(@chains)))
      ORDER BY transfer_tx IS NULL, error IS NOT NULL, CASE WHEN error IS NULL THEN created_at ELSE COALESCE(lease_until, 0) END, created_at, charge_id LIMIT @limit)
    RETURNING *`);
  const held = "charge_id IN (SELECT value FROM json_each(@ids)) AND batch_id = @batch_id AND status = 'queued'";
  // All or none: a transfer for a group's sum must never sit on a part of the group.
  const record = db.prepare<{ ids: string; batch_id: string; tx: string }>(
    `UPDATE charges SET transfer_tx = @tx WHERE ${held} AND (SELECT count(*) FROM charges WHERE ${held}) = (SELECT count(DISTINCT value) FROM json_each(@ids))`,
  );
  const complete = db.prepare<{ ids: string; batch_id: string; tx_hash: string; now: number }>(
    `UPDATE charges SET status = 'settled', tx_hash = @tx_hash, settled_at = @now, lease_until = NULL, transfer_tx = NULL WHERE ${held}`,
  );
  const fail = db.prepare<{ ids: string; batch_id: string; error: string; drop: number; retry_at: number | null }>(
    `UPDATE charges SET batch_id = NULL, lease_until = @retry_at, error = @error, transfer_tx = CASE WHEN @drop = 1 THEN NULL ELSE transfer_tx END WHERE ${held}`,
  );
  const pending = db.prepare<[string, number], { amount: bigint }>("SELECT amount FROM charges WHERE owner = ? AND chain_id = ? AND status = 'queued'");

  return {
    async listQueuedCharges({ limit }) {
      return queued.all(Math.max(0, Math.floor(limit))).map((r) => chargeFromRow(r));
    },

    async getCharge(chargeId) {
      const row = byId.get(chargeId);
      return row ? chargeFromRow(row) : null;
    },

    async claimCharges({ batchId, now, leaseMs, limit, chainIds }) {
      const chains = chainIds === undefined ? null : JSON.stringify(chainIds);
      return claim.all({ batch_id: batchId, now, until: now + leaseMs, limit: Math.max(0, Math.floor(limit)), chains }).sort(byAge).map((r) => chargeFromRow(r));
    },

    async recordChargeTransfer({ chargeIds, batchId, transferTx }) {
      return record.run({ ids: JSON.stringify(chargeIds), batch_id: batchId, tx: transferTx }).changes;
    },

    async completeCharges({ chargeIds, batchId, txHash, now }) {
      return complete.run({ ids: JSON.stringify(chargeIds), batch_id: batchId, tx_hash: txHash, now }).changes;
    },

    async failCharges({ chargeIds, batchId, error, dropTransfer, retryAt }) {
      return fail.run({ ids: JSON.stringify(chargeIds), batch_id: batchId, error, drop: dropTransfer ? 1 : 0, retry_at: retryAt ?? null }).changes;
    },

    async pendingChargeTotals(owner, chainId) {
      // Summed here, not with SUM(): the total over several keys may exceed 2^63-1.
      let amount = 0n;
      let count = 0;
      for (const row of pending.iterate(owner, chainId)) {
        amount += row.amount;
        count++;
      }
      return { amount, count };
    },
  };
}
