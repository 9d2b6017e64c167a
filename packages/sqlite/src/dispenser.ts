/**
 * {@link DispenserStore} on SQLite. The (address, chain_id) primary key is what makes a claim
 * unique; the guarded insert runs in one `BEGIN IMMEDIATE` transaction so the `maxClaims` count
 * and the insert see the same state in every connection and process.
 */
import type Database from "better-sqlite3";
import type { Migration } from "./migrations.js";
import { dispenserClaimFromRow, type BeginDispenserClaimResult as BeginResult, type DispenserStore, type SqlDispenserClaimRow } from "@tollgate/core";
import { checkAmount } from "./rows.js";

type ClaimRow = SqlDispenserClaimRow<bigint>;

/** The dispenser operations over an open, migrated database. */
export function createDispenserOps(db: Database.Database): DispenserStore {
  const byPair = db.prepare<[string, number], ClaimRow>("SELECT * FROM dispenser_claims WHERE address = ? AND chain_id = ?");
  const count = db.prepare<[number], { n: bigint }>("SELECT count(*) AS n FROM dispenser_claims WHERE chain_id = ?");
  const insert = db.prepare<{ address: string; chain_id: number; amount: bigint; created_at: number }, ClaimRow>(`
    INSERT INTO dispenser_claims (address, chain_id, status, amount, created_at)
    VALUES (@address, @chain_id, 'pending', @amount, @created_at) RETURNING *`);
  // A pending claim is this request's only while it is the claim the request took (`created_at`) and
  // its recorded transfer is the one the request knows (`IS`: NULL-safe).
  const mine = "address = @address AND chain_id = @chain_id AND status = 'pending' AND created_at = @created_at AND transfer_tx IS @tx";
  type Mine = { address: string; chain_id: number; created_at: number; tx: string | null };
  const complete = db.prepare<Mine & { tx_hash: string; now: number }, ClaimRow>(
    `UPDATE dispenser_claims SET status = 'claimed', tx_hash = @tx_hash, claimed_at = @now, transfer_tx = NULL WHERE ${mine} RETURNING *`,
  );
  const record = db.prepare<Mine & { next: string }>(`UPDATE dispenser_claims SET transfer_tx = @next WHERE ${mine}`);
  const release = db.prepare<Mine>(`DELETE FROM dispenser_claims WHERE ${mine}`);
  const byAddress = db.prepare<[string], ClaimRow>("SELECT * FROM dispenser_claims WHERE address = ? ORDER BY chain_id");

  const begin = db.transaction((claim: { address: string; chainId: number; amount: bigint; createdAt: number }, maxClaims: number | undefined): BeginResult => {
    const existing = byPair.get(claim.address, claim.chainId);
    if (existing) return { ok: false, reason: "already_claimed", claim: dispenserClaimFromRow(existing) };
    if (maxClaims !== undefined) {
      const n = Number(count.get(claim.chainId)?.n ?? 0n);
      if (n >= maxClaims) return { ok: false, reason: "limit_reached", count: n };
    }
    const row = insert.get({ address: claim.address, chain_id: claim.chainId, amount: claim.amount, created_at: claim.createdAt });
    if (!row) throw new Error("sqlite store: dispenser claim insert returned no row");
    return { ok: true, claim: dispenserClaimFromRow(row) };
  });

  return {
    async beginDispenserClaim({ claim, maxClaims }) {
      checkAmount(claim.amount, "amount");
      return begin.immediate(claim, maxClaims);
    },

    async completeDispenserClaim({ address, chainId, createdAt, transferTx, txHash, now }) {
      const row = complete.get({ address, chain_id: chainId, created_at: createdAt, tx: transferTx, tx_hash: txHash, now });
      return row ? dispenserClaimFromRow(row) : null;
    },

    async recordDispenserTransfer({ address, chainId, createdAt, transferTx, previous }) {
      return record.run({ address, chain_id: chainId, created_at: createdAt, tx: previous, next: transferTx }).changes > 0;
    },

    async releaseDispenserClaim({ address, chainId, createdAt, transferTx }) {
      return release.run({ address, chain_id: chainId, created_at: createdAt, tx: transferTx }).changes > 0;
    },

    async listDispenserClaims(address) {
      return byAddress.all(address).map((r) => dispenserClaimFromRow(r));
    },

    async countDispenserClaims(chainId) {
      return Number(count.get(chainId)?.n ?? 0n);
    },
  };
}

/** Schema of this capability (migration version 5; add later changes as new versions). */
export const DISPENSER_MIGRATIONS: readonly Migration[] = [
  {
    version: 5,
    name: "dispenser claims",
    // The primary key is money invariant 5 (docs/architecture.md): one claim per (address, chain), whatever the code does.
    sql: `
      CREATE TABLE dispenser_claims (
        address    TEXT NOT NULL,
        chain_id   INTEGER NOT NULL,
        status     TEXT NOT NULL CHECK (status IN ('pending', 'claimed')),
        amount     INTEGER NOT NULL CHECK (amount >= 0),
        created_at INTEGER NOT NULL,
        claimed_at INTEGER,
        tx_hash    TEXT,
        PRIMARY KEY (address, chain_id),
        CHECK ((status = 'claimed') = (tx_hash IS NOT NULL))
      ) STRICT;
      CREATE INDEX dispenser_claims_by_chain ON dispenser_claims (chain_id);
    `,
  },
  {
    version: 20,
    name: "dispenser claims: the signed transfer of a pending claim",
    sql: "ALTER TABLE dispenser_claims ADD COLUMN transfer_tx TEXT;",
  },
];
