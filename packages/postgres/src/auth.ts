/**
 * {@link AuthStore} on PostgreSQL: SIWE nonces and wallet sessions, one statement per operation
 * (each atomic on its own).
 */
import { authNonceFromRow, sessionFromRow, type AuthStore, type SqlAuthNonceRow, type SqlSessionRow } from "@tollgate/core";
import type { Migration } from "./migrations.js";
import type { Queryable } from "./queryable.js";
import { dec, enc, selectList, type TableName } from "./rows.js";

type NonceRow = SqlAuthNonceRow<string>;
type SessionRow = SqlSessionRow<string>;

const NONCE_COLS = selectList("nonce address", "chain_id issued_at expires_at");
const SESSION_COLS = selectList("session_id token_hash address signer domain", "chain_id created_at expires_at revoked_at");

const toSession = (r: SessionRow) => sessionFromRow(r, dec);

export function createAuthOps(db: Queryable, t: TableName): AuthStore {
  const [nonces, sessions] = [t("auth_nonces"), t("auth_sessions")];

  async function oneSession(sql: string, params: unknown[]) {
    const { rows } = await db.query<SessionRow>(sql, params);
    return rows[0] ? toSession(rows[0]) : null;
  }

  return {
    async insertAuthNonce(r) {
      await db.query(
        `INSERT INTO ${nonces} (nonce, address, chain_id, issued_at, expires_at) VALUES ($1::text, $2::text, $3::bigint, $4::bigint, $5::bigint)`,
        [r.nonce, r.address.toLowerCase(), r.chainId, r.issuedAt, r.expiresAt],
      );
    },

    /**
     * One conditional DELETE: a concurrent consumer waits for the row lock, then re-checks the
     * guard on the latest version (the row is gone), so of N consumers exactly one gets it. A nonce
     * of another address or past its expiry stays in place.
     */
    async consumeAuthNonce({ nonce, address, now }) {
      const { rows } = await db.query<NonceRow>(
        `DELETE FROM ${nonces} WHERE nonce = $1::text AND address = $2::text AND expires_at > $3::bigint RETURNING ${NONCE_COLS}`,
        [nonce, address.toLowerCase(), now],
      );
      return rows[0] ? authNonceFromRow(rows[0]) : null;
    },

    async insertSession(s) {
      await db.query(
        `INSERT INTO ${sessions} (session_id, token_hash, address, chain_id, signer, domain, created_at, expires_at, revoked_at)
         VALUES ($1::text, $2::text, $3::text, $4::bigint, $5::text, $6::text, $7::bigint, $8::bigint, $9::bigint)`,
        [s.sessionId, s.tokenHash, s.address, s.chainId, s.signer, enc(s.domain), s.createdAt, s.expiresAt, s.revokedAt ?? null],
      );
    },

    async getSessionByTokenHash(tokenHash) {
      return oneSession(`SELECT ${SESSION_COLS} FROM ${sessions} WHERE token_hash = $1::text`, [tokenHash]);
    },

    /** One conditional UPDATE: the row lock makes the first revocation time win. */
    async revokeSession(tokenHash, at) {
      return oneSession(`UPDATE ${sessions} SET revoked_at = COALESCE(revoked_at, $2::bigint) WHERE token_hash = $1::text RETURNING ${SESSION_COLS}`, [
        tokenHash,
        at,
      ]);
    },

    /** One statement; a row that a concurrent prune deleted first is counted by that one only. */
    async pruneAuth(now) {
      const { rows } = await db.query<{ n: string }>(
        `WITH n AS (DELETE FROM ${nonces} WHERE expires_at <= $1::bigint RETURNING 1),
         s AS (DELETE FROM ${sessions} WHERE expires_at <= $1::bigint RETURNING 1)
         SELECT ((SELECT count(*) FROM n) + (SELECT count(*) FROM s))::text AS n`,
        [now],
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}

/** Schema of this capability (migration versions 9 and 17; add later changes as new versions). */
export const AUTH_MIGRATIONS: readonly Migration[] = [
  {
    version: 9,
    name: "auth nonces and sessions",
    sql: `
      CREATE TABLE auth_nonces (
        nonce      text COLLATE "C" PRIMARY KEY,
        address    text NOT NULL,
        chain_id   bigint NOT NULL,
        issued_at  bigint NOT NULL,
        expires_at bigint NOT NULL
      );
      CREATE INDEX auth_nonces_expiry ON auth_nonces (expires_at);

      CREATE TABLE auth_sessions (
        session_id text COLLATE "C" PRIMARY KEY,
        token_hash text NOT NULL UNIQUE,
        address    text NOT NULL,
        chain_id   bigint NOT NULL,
        domain     text NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        revoked_at bigint
      );
      CREATE INDEX auth_sessions_expiry ON auth_sessions (expires_at);
    `,
  },
  {
    version: 17,
    name: "sessions name their signer",
    // Sessions opened before this version are taken as smart-wallet sessions, bound to their chain:
    // nothing recorded whether a contract proved them.
    sql: "ALTER TABLE auth_sessions ADD COLUMN signer text NOT NULL DEFAULT 'contract'",
  },
];
