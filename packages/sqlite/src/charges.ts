/** {@link ChargeStore} on SQLite. Each write is one statement, atomic on its own. */
import type Database from "better-sqlite3";
import { chargeFromRow, type ChargeStore } from "@tollgate/core";
import type { ChargeRow } from "./rows.js";

const byAge = (a: ChargeRow, b: ChargeRow) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.charge_id < b.charge_id ? -1 : 1);

export function createChargeOps(db: Database.Database): ChargeStore {
  const queued = db.prepare<[number], ChargeRow>("SELECT * FROM charges WHERE status = 'queued' ORDER BY created_at, charge_id LIMIT ?");
  const byId = db.prepare<[string], ChargeRow>("SELECT * FROM charges WHERE charge_id = ?");
  // One UPDATE picks and leases: a write statement holds the write lock from its first read, so
  // two claims (connections or processes) can never select the same free charge.
  const claim = db.prepare<{ batch_id: string; now: number; until: number; limit: number }, ChargeRow>(`
    UPDATE charges SET batch_id = @batch_id, lease_until = @until
    WHERE charge_id IN (
      SELECT charge_id FROM charges
      WHERE status = 'queued' AND (lease_until IS NULL OR lease_until <= @now)
      ORDER BY created_at, charge_id LIMIT @limit)
    RETURNING *`);
  const complete = db.prepare<{ ids: string; batch_id: string; tx_hash: string; now: number }>(`
    UPDATE charges SET status = 'settled', tx_hash = @tx_hash, settled_at = @now, lease_until = NULL
    WHERE charge_id IN (SELECT value FROM json_each(@ids)) AND batch_id = @batch_id AND status = 'queued'`);
  const fail = db.prepare<{ ids: string; batch_id: string; error: string }>(`
    UPDATE charges SET batch_id = NULL, lease_until = NULL, error = @error
    WHERE charge_id IN (SELECT value FROM json_each(@ids)) AND batch_id = @batch_id AND status = 'queued'`);
  const pending = db.prepare<[string, number], { amount: bigint }>("SELECT amount FROM charges WHERE owner = ? AND chain_id = ? AND status = 'queued'");

  return {
    async listQueuedCharges({ limit }) {
      return queued.all(Math.max(0, Math.floor(limit))).map((r) => chargeFromRow(r));
    },

    async getCharge(chargeId) {
      const row = byId.get(chargeId);
      return row ? chargeFromRow(row) : null;
    },

    async claimCharges({ batchId, now, leaseMs, limit }) {
      return claim.all({ batch_id: batchId, now, until: now + leaseMs, limit: Math.max(0, Math.floor(limit)) }).sort(byAge).map((r) => chargeFromRow(r));
    },

    async completeCharges({ chargeIds, batchId, txHash, now }) {
      return complete.run({ ids: JSON.stringify(chargeIds), batch_id: batchId, tx_hash: txHash, now }).changes;
    },

    async failCharges({ chargeIds, batchId, error }) {
      return fail.run({ ids: JSON.stringify(chargeIds), batch_id: batchId, error }).changes;
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
