/**
 * {@link PaymentNonceStore} on SQLite: one statement per operation (each atomic on its own), except
 * the mark (one `BEGIN IMMEDIATE` transaction around the conditional UPDATE and its video job
 * insert) and a claim with `maxOpen` (one around the sum of the payer's open claims and the insert).
 */
import type Database from "better-sqlite3";
import type { Migration } from "./migrations.js";
import { nonceFromRow, unsureNonceFromRow, type PaymentNonceStore, type SqlNonceRow, type SqlUnsureNonceRow, type VideoJobRecord } from "@tollgate/core";
import { videoJobInserter } from "./video.js";

type NonceRow = SqlNonceRow<bigint>;

const key = (k: { network: string; payer: string; nonce: string }) => ({ network: k.network, payer: k.payer.toLowerCase(), nonce: k.nonce.toLowerCase() });

/** A keyset position before every unsure claim (`checkUntil` is after `now`, never negative). */
const FIRST = { after_until: -1, after_network: "", after_payer: "", after_nonce: "" };

/** The x402 nonce claims (invariant 5): the primary key makes a second claim a no-op insert. */
export function createPaymentNonceOps(db: Database.Database): PaymentNonceStore {
  const claim = db.prepare(`
    INSERT INTO x402_nonces (network, payer, nonce, request_id, status, claimed_at, expires_at, amount)
    VALUES (@network, @payer, @nonce, @request_id, 'claimed', @now, @expires_at, @amount)
    ON CONFLICT (network, payer, nonce) DO NOTHING`);
  /** The amounts of the payer's open claims: added up in JavaScript (their SQL SUM overflows past 2^63 - 1). */
  const open = db
    .prepare<Record<string, unknown>, bigint>(
      `
    SELECT amount FROM x402_nonces
    WHERE network = @network AND payer = @payer
      AND ((status = 'claimed' AND expires_at > @now AND claimed_at >= @open_since) OR (status = 'settled' AND settled_at >= @settled_since))`,
    )
    .pluck();
  /** The payer's open amounts and the insert in one BEGIN IMMEDIATE: other processes wait for it. */
  const claimWithin = db.transaction((params: Record<string, unknown>, maxOpen: bigint): boolean => {
    let total = params.amount as bigint;
    for (const amount of open.iterate(params)) if ((total += amount) > maxOpen) return false;
    return total <= maxOpen && claim.run(params).changes === 1;
  });
  const release = db.prepare(`
    DELETE FROM x402_nonces
    WHERE network = @network AND payer = @payer AND nonce = @nonce AND request_id = @request_id AND status = 'claimed'`);
  const settle = db.prepare(`
    UPDATE x402_nonces SET status = 'settled', tx_hash = @tx_hash, settled_at = @now
    WHERE network = @network AND payer = @payer AND nonce = @nonce AND request_id = @request_id AND status = 'claimed'`);
  const unsure = db.prepare(`
    UPDATE x402_nonces SET pay_to = @pay_to, check_until = @check_until
    WHERE network = @network AND payer = @payer AND nonce = @nonce AND request_id = @request_id AND status = 'claimed'`);
  const listUnsure = db.prepare<Record<string, unknown>, SqlUnsureNonceRow<bigint>>(`
    SELECT network, payer, nonce, request_id, amount, pay_to, check_until FROM x402_nonces
    WHERE status = 'claimed' AND check_until > @now AND (check_until, network, payer, nonce) > (@after_until, @after_network, @after_payer, @after_nonce)
    ORDER BY check_until, network, payer, nonce LIMIT @limit`);
  const get = db.prepare<Record<string, unknown>, NonceRow>("SELECT * FROM x402_nonces WHERE network = @network AND payer = @payer AND nonce = @nonce");
  const insertVideoJob = videoJobInserter(db);
  /** The job only when the claim was marked; a duplicate job id throws and rolls the mark back. */
  const markTx = db.transaction((params: Record<string, unknown>, videoJob: VideoJobRecord | undefined): boolean => {
    if (settle.run(params).changes !== 1) return false;
    if (videoJob) insertVideoJob(videoJob);
    return true;
  });

  return {
    async claimPaymentNonce(input) {
      const params = Object.assign(key(input), {
        request_id: input.requestId,
        now: input.now,
        expires_at: input.expiresAt,
        amount: input.amount ?? 0n,
        open_since: input.openSince ?? 0,
        settled_since: input.settledSince ?? Number.MAX_SAFE_INTEGER,
      });
      return input.maxOpen === undefined ? claim.run(params).changes === 1 : claimWithin.immediate(params, input.maxOpen);
    },
    async releasePaymentNonce(input) {
      return release.run(Object.assign(key(input), { request_id: input.requestId })).changes === 1;
    },
    async markPaymentNonceSettled(input) {
      const params = Object.assign(key(input), { request_id: input.requestId, tx_hash: input.txHash, now: input.now });
      return markTx.immediate(params, input.videoJob);
    },
    async markPaymentNonceUnsure(input) {
      const params = Object.assign(key(input), { request_id: input.requestId, pay_to: input.payTo.toLowerCase(), check_until: input.checkUntil });
      return unsure.run(params).changes === 1;
    },
    async listUnsurePaymentNonces({ now, limit, after }) {
      const from = after ? { after_until: after.checkUntil, after_network: after.network, after_payer: after.payer, after_nonce: after.nonce } : FIRST;
      return listUnsure.all(Object.assign({ now, limit }, from)).map(unsureNonceFromRow);
    },
    async getPaymentNonce(k) {
      const row = get.get(key(k));
      return row ? nonceFromRow(row) : null;
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
        network     TEXT NOT NULL,
        payer       TEXT NOT NULL,
        nonce       TEXT NOT NULL,
        request_id  TEXT NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('claimed', 'settled')),
        claimed_at  INTEGER NOT NULL,
        expires_at  INTEGER NOT NULL,
        tx_hash     TEXT,
        settled_at  INTEGER,
        PRIMARY KEY (network, payer, nonce)
      ) STRICT, WITHOUT ROWID;
    `,
  },
  {
    version: 18,
    name: "x402 claims record their amount",
    // Claims from before this version count as 0: they were served one by one against the balance check.
    sql: "ALTER TABLE x402_nonces ADD COLUMN amount INTEGER NOT NULL DEFAULT 0",
  },
  {
    version: 22,
    name: "x402 claims whose settlement failed unsure are watched from the store",
    sql: `
      ALTER TABLE x402_nonces ADD COLUMN pay_to TEXT;
      ALTER TABLE x402_nonces ADD COLUMN check_until INTEGER;
      CREATE INDEX x402_nonces_unsure ON x402_nonces (check_until) WHERE status = 'claimed' AND check_until IS NOT NULL;
    `,
  },
];
