/**
 * {@link DispenserStore} on PostgreSQL. The (address, chain_id) primary key makes a claim unique;
 * the per-chain counter row of `dispenser_chains` is what serializes the `maxClaims` check (a
 * single statement cannot count rows that concurrent claims insert, but it can lock and re-read
 * one counter row).
 */
import { dispenserClaimFromRow, type BeginDispenserClaimResult as BeginResult, type DispenserStore, type SqlDispenserClaimRow } from "@tollgate/core";
import type { Migration } from "./migrations.js";
import { retryOnConflict, type Queryable } from "./queryable.js";
import { checkAmount, parseRow, rowJson, selectList, type TableName } from "./rows.js";

type ClaimRow = SqlDispenserClaimRow<string>;

const COLS = selectList("address status tx_hash transfer_tx", "chain_id amount created_at claimed_at");

/** The dispenser operations over a migrated schema. */
export function createDispenserOps(db: Queryable, t: TableName): DispenserStore {
  const [claims, chains] = [t("dispenser_claims"), t("dispenser_chains")];
  // One statement. `slot` takes a place on the chain's counter row: ON CONFLICT DO UPDATE locks
  // the row and checks `claims < max` on its latest version, so concurrent claims of one chain
  // queue there and at most `max` get through. `ins` then inserts the claim; a concurrent claim of
  // the same pair that committed after this statement began fails it on the primary key, and the
  // statement (counter included) is re-run.
  const begin = `
    WITH existing AS (SELECT * FROM ${claims} WHERE address = $1::text AND chain_id = $2::bigint),
    slot AS (
      INSERT INTO ${chains} AS c (chain_id, claims)
      SELECT $2::bigint, 1 WHERE NOT EXISTS (SELECT 1 FROM existing) AND ($5::int IS NULL OR $5::int > 0)
      ON CONFLICT (chain_id) DO UPDATE SET claims = c.claims + 1 WHERE $5::int IS NULL OR c.claims < $5::int
      RETURNING claims
    ),
    ins AS (
      INSERT INTO ${claims} (address, chain_id, status, amount, created_at)
      SELECT $1::text, $2::bigint, 'pending', $3::numeric, $4::bigint FROM slot
      RETURNING *
    )
    SELECT ${rowJson(COLS, "existing")} AS existing, ${rowJson(COLS, "ins")} AS inserted`;
  // One statement, counter row first (the lock order of `begin`), then the pending claim.
  const release = `
    WITH c AS MATERIALIZED (SELECT chain_id FROM ${chains} WHERE chain_id = $2::bigint FOR NO KEY UPDATE),
    d AS (DELETE FROM ${claims} WHERE address = $1::text AND chain_id = (SELECT chain_id FROM c) AND status = 'pending' AND created_at = $4::bigint
      AND transfer_tx IS NOT DISTINCT FROM $3::text RETURNING chain_id),
    u AS (UPDATE ${chains} SET claims = claims - 1 WHERE chain_id = (SELECT chain_id FROM d))
    SELECT count(*)::text AS n FROM d`;
  const count = async (chainId: number) => {
    const { rows } = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${claims} WHERE chain_id = $1::bigint`, [chainId]);
    return Number(rows[0]?.n ?? 0);
  };

  return {
    async beginDispenserClaim({ claim, maxClaims }): Promise<BeginResult> {
      const params = [claim.address, claim.chainId, checkAmount(claim.amount, "amount"), claim.createdAt, maxClaims ?? null];
      const { rows } = await retryOnConflict(["dispenser_claims_pkey"], () => db.query<{ existing: string | null; inserted: string | null }>(begin, params));
      const existing = parseRow<ClaimRow>(rows[0]?.existing);
      if (existing) return { ok: false, reason: "already_claimed", claim: dispenserClaimFromRow(existing) };
      const inserted = parseRow<ClaimRow>(rows[0]?.inserted);
      if (inserted) return { ok: true, claim: dispenserClaimFromRow(inserted) };
      // The counter refused: report the count as it stands now (it was at the limit when refused).
      return { ok: false, reason: "limit_reached", count: await count(claim.chainId) };
    },

    /** One conditional UPDATE; the status is re-checked on the row's latest version. */
    async completeDispenserClaim({ address, chainId, createdAt, transferTx, txHash, now }) {
      const { rows } = await db.query<ClaimRow>(
        `UPDATE ${claims} SET status = 'claimed', tx_hash = $3::text, claimed_at = $4::bigint, transfer_tx = NULL
         WHERE address = $1::text AND chain_id = $2::bigint AND status = 'pending' AND created_at = $6::bigint AND transfer_tx IS NOT DISTINCT FROM $5::text
         RETURNING ${COLS}`,
        [address, chainId, txHash, now, transferTx, createdAt],
      );
      return rows[0] ? dispenserClaimFromRow(rows[0]) : null;
    },

    /** One conditional UPDATE, as completeDispenserClaim. */
    async recordDispenserTransfer({ address, chainId, createdAt, transferTx, previous }) {
      const { rows } = await db.query(
        `UPDATE ${claims} SET transfer_tx = $3::text
         WHERE address = $1::text AND chain_id = $2::bigint AND status = 'pending' AND created_at = $5::bigint AND transfer_tx IS NOT DISTINCT FROM $4::text
         RETURNING 1`,
        [address, chainId, transferTx, previous, createdAt],
      );
      return rows.length > 0;
    },

    async releaseDispenserClaim({ address, chainId, createdAt, transferTx }) {
      const { rows } = await db.query<{ n: string }>(release, [address, chainId, transferTx, createdAt]);
      return Number(rows[0]?.n ?? 0) > 0;
    },

    async listDispenserClaims(address) {
      const { rows } = await db.query<ClaimRow>(`SELECT ${COLS} FROM ${claims} x WHERE address = $1::text ORDER BY x.chain_id`, [address]);
      return rows.map((r) => dispenserClaimFromRow(r));
    },

    countDispenserClaims: count,
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
        address    text NOT NULL,
        chain_id   bigint NOT NULL,
        status     text NOT NULL CHECK (status IN ('pending', 'claimed')),
        amount     numeric(78, 0) NOT NULL CHECK (amount >= 0),
        created_at bigint NOT NULL,
        claimed_at bigint,
        tx_hash    text,
        CONSTRAINT dispenser_claims_pkey PRIMARY KEY (address, chain_id),
        CHECK ((status = 'claimed') = (tx_hash IS NOT NULL))
      );
      CREATE INDEX dispenser_claims_by_chain ON dispenser_claims (chain_id);
      CREATE TABLE dispenser_chains (
        chain_id bigint PRIMARY KEY,
        claims   integer NOT NULL CHECK (claims >= 0)
      );
    `,
  },
  {
    version: 20,
    name: "dispenser claims: the signed transfer of a pending claim",
    sql: "ALTER TABLE dispenser_claims ADD COLUMN transfer_tx text",
  },
];
