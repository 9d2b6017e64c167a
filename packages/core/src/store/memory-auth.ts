/** The wallet-session part of the memory store: SIWE nonces and sessions. */
import type { AuthNonceRecord, AuthStore, SessionRecord } from "./auth-types.js";

const copyNonce = (n: AuthNonceRecord): AuthNonceRecord => ({ ...n });
const copySession = (s: SessionRecord): SessionRecord => ({ ...s });

/** In-memory auth operations (synchronous inside each method: that is their atomicity). */
export function createMemoryAuthStore(): AuthStore {
  const nonces = new Map<string, AuthNonceRecord>();
  const sessions = new Map<string, SessionRecord>();
  /** tokenHash -> sessionId. */
  const byToken = new Map<string, string>();

  return {
    async insertAuthNonce(record) {
      if (nonces.has(record.nonce)) throw new Error("memory store: duplicate auth nonce");
      const { nonce, chainId, issuedAt, expiresAt } = record;
      nonces.set(nonce, { nonce, address: record.address.toLowerCase(), chainId, issuedAt, expiresAt });
    },

    async consumeAuthNonce({ nonce, address, now }) {
      const record = nonces.get(nonce);
      // Another address or an expired nonce leaves it in place: knowing a nonce must not let
      // anyone burn it for its wallet.
      if (!record || record.address !== address.toLowerCase() || record.expiresAt <= now) return null;
      nonces.delete(nonce);
      return copyNonce(record);
    },

    async insertSession(record) {
      if (sessions.has(record.sessionId)) throw new Error(`memory store: duplicate sessionId ${record.sessionId}`);
      if (byToken.has(record.tokenHash)) throw new Error("memory store: duplicate session tokenHash");
      sessions.set(record.sessionId, copySession(record));
      byToken.set(record.tokenHash, record.sessionId);
    },

    async getSessionByTokenHash(tokenHash) {
      const id = byToken.get(tokenHash);
      const session = id === undefined ? undefined : sessions.get(id);
      return session ? copySession(session) : null;
    },

    async revokeSession(tokenHash, at) {
      const id = byToken.get(tokenHash);
      const session = id === undefined ? undefined : sessions.get(id);
      if (!session) return null;
      if (session.revokedAt === undefined) session.revokedAt = at;
      return copySession(session);
    },

    async pruneAuth(now) {
      let n = 0;
      for (const [nonce, record] of nonces) {
        if (record.expiresAt <= now && nonces.delete(nonce)) n++;
      }
      for (const [id, session] of sessions) {
        if (session.expiresAt > now) continue;
        sessions.delete(id);
        byToken.delete(session.tokenHash);
        n++;
      }
      return n;
    },
  };
}
