/**
 * The wallet-session part of the Store: Sign-In with Ethereum nonces and the sessions they buy.
 *
 * Life of a sign-in: `insertAuthNonce` when a wallet asks for a nonce; `consumeAuthNonce` once its
 * signed message verified (single use: exactly one of N concurrent consumers wins, and only for
 * the address it was issued to, before it expires); `insertSession` with the SHA-256 of the new
 * `sess_…` token; `getSessionByTokenHash` on every request that sends it; `revokeSession` on
 * sign-out. `pruneAuth` deletes expired nonces and sessions (the sweeper calls it).
 *
 * Addresses are lower-case; timestamps are milliseconds since the epoch.
 */

/** A nonce issued for one wallet to sign into a SIWE message. */
export interface AuthNonceRecord {
  /** The SIWE nonce (alphanumeric, at least 8 characters). */
  nonce: string;
  /** Lower-case wallet address it was issued to. */
  address: string;
  /** The chain the wallet asked with; the signed message must name the same chain. */
  chainId: number;
  issuedAt: number;
  /** Unusable once `expiresAt <= now`. */
  expiresAt: number;
}

/**
 * What proved a session's wallet: `"eoa"`, the address's own key (which controls the address on
 * every chain), or `"contract"`, a smart wallet's EIP-1271/6492 check on the session's chain (the
 * same address on another chain may be another contract, with other owners, or none yet).
 */
export type SessionSigner = "eoa" | "contract";

/** A wallet session bought by a verified SIWE message. Only the SHA-256 of its token is stored. */
export interface SessionRecord {
  /** `ses_…` (never secret; the token is). */
  sessionId: string;
  /** Lower-case hex SHA-256 of the `sess_…` token. */
  tokenHash: string;
  /** Lower-case wallet address the session proves. */
  address: string;
  /** The chain id of the signed message: the only chain the session acts on when `signer` is `"contract"`. */
  chainId: number;
  /** What proved the wallet; a `"contract"` session proves it on `chainId` only. */
  signer: SessionSigner;
  /** The SIWE message's domain (the host the wallet signed in to). */
  domain: string;
  createdAt: number;
  /** Unusable once `expiresAt <= now`. */
  expiresAt: number;
  /** Set by sign-out. */
  revokedAt?: number;
}

/** SIWE nonces and wallet sessions. Every guarded method is a single native atomic operation. */
export interface AuthStore {
  /** Inserts a nonce. Rejects on a duplicate nonce. */
  insertAuthNonce(record: AuthNonceRecord): Promise<void>;
  /**
   * Consumes (deletes) the nonce if it exists, was issued to `address` (compared lower-case) and
   * `expiresAt > now`. Single native atomic operation; returns the consumed record, or null when
   * the guard fails (unknown, already consumed, another address, expired). Of N concurrent
   * consumers of one nonce exactly one gets the record.
   */
  consumeAuthNonce(input: { nonce: string; address: string; now: number }): Promise<AuthNonceRecord | null>;
  /** Inserts a session. Rejects on a duplicate `sessionId` or `tokenHash`. */
  insertSession(record: SessionRecord): Promise<void>;
  /** The session whose token hashes to `tokenHash` (whatever its state), or null. */
  getSessionByTokenHash(tokenHash: string): Promise<SessionRecord | null>;
  /**
   * Sets `revokedAt = at` if it is not set. Single native atomic operation; returns the session
   * (unchanged when already revoked), or null when unknown.
   */
  revokeSession(tokenHash: string, at: number): Promise<SessionRecord | null>;
  /**
   * Deletes nonces with `expiresAt <= now` and sessions with `expiresAt <= now` (revoked ones
   * too, once expired).
   * @returns how many rows it deleted.
   */
  pruneAuth(now: number): Promise<number>;
}
