/**
 * {@link AuthStore} on SQLite: SIWE nonces and wallet sessions. Each guarded operation is one
 * statement (atomic on its own: SQLite runs a writing statement under the database write lock);
 * `pruneAuth` is one `BEGIN IMMEDIATE` transaction around its two deletes.
 */
import type Database from "better-sqlite3";
import { authNonceFromRow, sessionFromRow, type AuthStore, type SqlAuthNonceRow, type SqlSessionRow } from "@tollgate/core";
import type { Migration } from "./migrations.js";

type NonceRow = SqlAuthNonceRow<bigint>;
type SessionRow = SqlSessionRow<bigint>;

export function createAuthOps(db: Database.Database): AuthStore {
  const insertNonce = db.prepare(`
    INSERT INTO auth_nonces (nonce, address, chain_id, issued_at, expires_at)
    VALUES (@nonce, @address, @chain_id, @issued_at, @expires_at)`);
  // The guard is the WHERE clause: a nonce of another address or past its expiry stays in place.
  const consume = db.prepare<{ nonce: string; address: string; now: number }, NonceRow>(`
    DELETE FROM auth_nonces WHERE nonce = @nonce AND address = @address AND expires_at > @now RETURNING *`);
  const insertSession = db.prepare(`
    INSERT INTO auth_sessions (session_id, token_hash, address, chain_id, signer, domain, created_at, expires_at, revoked_at)
    VALUES (@session_id, @token_hash, @address, @chain_id, @signer, @domain, @created_at, @expires_at, @revoked_at)`);
  const byToken = db.prepare<[string], SessionRow>("SELECT * FROM auth_sessions WHERE token_hash = ?");
  const revoke = db.prepare<[number, string], SessionRow>("UPDATE auth_sessions SET revoked_at = COALESCE(revoked_at, ?) WHERE token_hash = ? RETURNING *");
  const pruneNonces = db.prepare<[number]>("DELETE FROM auth_nonces WHERE expires_at <= ?");
  const pruneSessions = db.prepare<[number]>("DELETE FROM auth_sessions WHERE expires_at <= ?");
  const pruneTx = db.transaction((now: number) => pruneNonces.run(now).changes + pruneSessions.run(now).changes);

  return {
    async insertAuthNonce(record) {
      insertNonce.run({
        nonce: record.nonce,
        address: record.address.toLowerCase(),
        chain_id: record.chainId,
        issued_at: record.issuedAt,
        expires_at: record.expiresAt,
      });
    },

    async consumeAuthNonce({ nonce, address, now }) {
      const row = consume.get({ nonce, address: address.toLowerCase(), now });
      return row ? authNonceFromRow(row) : null;
    },

    async insertSession(s) {
      insertSession.run({
        session_id: s.sessionId,
        token_hash: s.tokenHash,
        address: s.address,
        chain_id: s.chainId,
        signer: s.signer,
        domain: s.domain,
        created_at: s.createdAt,
        expires_at: s.expiresAt,
        revoked_at: s.revokedAt ?? null,
      });
    },

    async getSessionByTokenHash(tokenHash) {
      const row = byToken.get(tokenHash);
      return row ? sessionFromRow(row) : null;
    },

    async revokeSession(tokenHash, at) {
      const row = revoke.get(at, tokenHash);
      return row ? sessionFromRow(row) : null;
    },

    async pruneAuth(now) {
      return pruneTx.immediate(now);
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
        nonce      TEXT PRIMARY KEY,
        address    TEXT NOT NULL,
        chain_id   INTEGER NOT NULL,
        issued_at  INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX auth_nonces_expiry ON auth_nonces (expires_at);

      CREATE TABLE auth_sessions (
        session_id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        address    TEXT NOT NULL,
        chain_id   INTEGER NOT NULL,
        domain     TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        revoked_at INTEGER
      ) STRICT;
      CREATE INDEX auth_sessions_expiry ON auth_sessions (expires_at);
    `,
  },
  {
    version: 17,
    name: "sessions name their signer",
    // Sessions opened before this version are taken as smart-wallet sessions, bound to their chain:
    // nothing recorded whether a contract proved them.
    sql: "ALTER TABLE auth_sessions ADD COLUMN signer TEXT NOT NULL DEFAULT 'contract'",
  },
];
