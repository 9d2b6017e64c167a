/** {@link PaymentNonceStore} on PostgreSQL: one statement per operation (each atomic on its own), but a claim with `maxOpen`. */
import { nonceFromRow, unsureNonceFromRow, type PaymentNonceStore, type SqlNonceRow, type SqlUnsureNonceRow } from "@tollgate/core";
import type { Migration } from "./migrations.js";
import { inTransaction, type Queryable } from "./queryable.js";
import { selectList, type TableName } from "./rows.js";
import { VIDEO_JOB_INSERT_COLUMNS, videoJobPlaceholders, videoJobValues } from "./video.js";

type NonceRow = SqlNonceRow<string>;

const COLS = selectList("network payer nonce request_id status tx_hash", "claimed_at expires_at settled_at check_until");
const UNSURE_COLS = selectList("network payer nonce request_id pay_to", "amount check_until");

/** $1 network, $2 payer, $3 nonce: the key of a claim, lower-cased. */
const key = (k: { network: string; payer: string; nonce: string }) => [k.network, k.payer.toLowerCase(), k.nonce.toLowerCase()];
const BY_KEY = "network = $1::text AND payer = $2::text AND nonce = $3::text";

/** The x402 nonce claims (invariant 5): the primary key makes a second claim a no-op insert. */
/**
 * `db` runs each statement (it may be a wrapper that prepares or groups them); `txDb`, the pool
 * itself, runs the transaction of a claim with `maxOpen` on one connection.
 */
export function createPaymentNonceOps(db: Queryable, t: TableName, txDb: Queryable = db): PaymentNonceStore {
  const [nonces, jobs] = [t("x402_nonces"), t("video_jobs")];
  return {
    /**
     * One INSERT … ON CONFLICT DO NOTHING: a concurrent claim of the key waits for the first and then
     * does nothing. With `maxOpen`, a transaction: the payer's advisory lock, then the INSERT only if
     * the payer's open claims leave room (its snapshot, taken after the lock, sees every claim that
     * held the lock before).
     */
    async claimPaymentNonce(input) {
      const params = [...key(input), input.requestId, input.now, input.expiresAt, (input.amount ?? 0n).toString()];
      const insert = `INSERT INTO ${nonces} (network, payer, nonce, request_id, status, claimed_at, expires_at, amount)`;
      if (input.maxOpen === undefined) {
        const { rows } = await db.query(
          `${insert} VALUES ($1::text, $2::text, $3::text, $4::text, 'claimed', $5::bigint, $6::bigint, $7::numeric)
           ON CONFLICT (network, payer, nonce) DO NOTHING RETURNING 1`,
          params,
        );
        return rows.length === 1;
      }
      const maxOpen = input.maxOpen.toString();
      return inTransaction(txDb, async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))", [`tollgate:x402:${params[0]}:${params[1]}`]);
        const { rows } = await tx.query(
          `${insert}
           SELECT $1::text, $2::text, $3::text, $4::text, 'claimed', $5::bigint, $6::bigint, $7::numeric
           WHERE (SELECT COALESCE(SUM(amount), 0) FROM ${nonces}
                  WHERE network = $1::text AND payer = $2::text
                    AND ((status = 'claimed' AND expires_at > $5::bigint AND claimed_at >= $9::bigint) OR (status = 'settled' AND settled_at >= $10::bigint))) + $7::numeric <= $8::numeric
           ON CONFLICT (network, payer, nonce) DO NOTHING RETURNING 1`,
          [...params, maxOpen, input.openSince ?? 0, input.settledSince ?? Number.MAX_SAFE_INTEGER],
        );
        return rows.length === 1;
      });
    },
    /** One conditional DELETE (status and holder re-checked on the latest version). */
    async releasePaymentNonce(input) {
      const { rows } = await db.query(`DELETE FROM ${nonces} WHERE ${BY_KEY} AND request_id = $4::text AND status = 'claimed' RETURNING 1`, [...key(input), input.requestId]);
      return rows.length === 1;
    },
    /**
     * One statement: a conditional UPDATE (status and holder re-checked on the latest version) and
     * the insert of the video job ($7…, all NULL when none) only from the row it marked; a
     * duplicate job id fails the statement, mark included.
     */
    async markPaymentNonceSettled(input) {
      const { rows } = await db.query(
        `WITH upd AS (
           UPDATE ${nonces} SET status = 'settled', tx_hash = $5::text, settled_at = $6::bigint
           WHERE ${BY_KEY} AND request_id = $4::text AND status = 'claimed' RETURNING 1
         ),
         job AS (
           INSERT INTO ${jobs} (${VIDEO_JOB_INSERT_COLUMNS})
           SELECT ${videoJobPlaceholders(7)} FROM upd WHERE $7::text IS NOT NULL
         )
         SELECT 1 FROM upd`,
        [...key(input), input.requestId, input.txHash, input.now, ...videoJobValues(input.videoJob)],
      );
      return rows.length === 1;
    },
    /** One conditional UPDATE (status and holder re-checked on the latest version). */
    async markPaymentNonceUnsure(input) {
      const { rows } = await db.query(
        `UPDATE ${nonces} SET pay_to = $5::text, check_until = $6::bigint WHERE ${BY_KEY} AND request_id = $4::text AND status = 'claimed' RETURNING 1`,
        [...key(input), input.requestId, input.payTo.toLowerCase(), input.checkUntil],
      );
      return rows.length === 1;
    },
    async listUnsurePaymentNonces({ now, limit, after }) {
      const { rows } = await db.query<SqlUnsureNonceRow<string>>(
        `SELECT ${UNSURE_COLS} FROM ${nonces}
         WHERE status = 'claimed' AND check_until > $1::bigint AND (check_until, network, payer, nonce) > ($3::bigint, $4::text, $5::text, $6::text)
         ORDER BY check_until, network, payer, nonce LIMIT $2::int`,
        [now, limit, after?.checkUntil ?? -1, after?.network ?? "", after?.payer ?? "", after?.nonce ?? ""],
      );
      return rows.map(unsureNonceFromRow);
    },
    async getPaymentNonce(k) {
      const { rows } = await db.query<NonceRow>(`SELECT ${COLS} FROM ${nonces} WHERE ${BY_KEY}`, key(k));
      return rows[0] ? nonceFromRow(rows[0]) : null;
    },
  };
}

/** Schema of this capability (migration versions 6, 18 and 22; add later changes as new versions). */
export const X402_MIGRATIONS: readonly Migration[] = [
  {
    version: 6,
    name: "x402 nonce claims",
    sql: `
      CREATE TABLE x402_nonces (
        network     text NOT NULL,
        payer       text NOT NULL,
        nonce       text NOT NULL,
        request_id  text NOT NULL,
        status      text NOT NULL CHECK (status IN ('claimed', 'settled')),
        claimed_at  bigint NOT NULL,
        expires_at  bigint NOT NULL,
        tx_hash     text,
        settled_at  bigint,
        PRIMARY KEY (network, payer, nonce)
      );
    `,
  },
  {
    version: 18,
    name: "x402 claims record their amount",
    // Claims from before this version count as 0: they were served one by one against the balance check.
    sql: "ALTER TABLE x402_nonces ADD COLUMN amount numeric(78, 0) NOT NULL DEFAULT 0",
  },
  {
    version: 22,
    name: "x402 claims whose settlement failed unsure are watched from the store",
    sql: `
      ALTER TABLE x402_nonces ADD COLUMN pay_to text, ADD COLUMN check_until bigint;
      CREATE INDEX x402_nonces_unsure ON x402_nonces (check_until) WHERE status = 'claimed' AND check_until IS NOT NULL;
    `,
  },
];
