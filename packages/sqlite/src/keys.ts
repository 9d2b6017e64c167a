/** {@link KeyStore} on SQLite (its governance operations are in governance.ts). */
import type Database from "better-sqlite3";
import { heldKeysSince, isLiveKey, keyFromRow, keysetPage, pageQuerySize, tooManyKeys, type KeyRecord, type KeyStore } from "@tollgate/core";
import { checkAmount, keyParams, type KeyRow } from "./rows.js";

/** A wallet's live keys at `@at`, read from keys_live_by_owner alone (its unrevoked keys, by expiry; plans.test.ts). */
export const LIVE_KEYS_SQL = "SELECT count(*) AS n FROM keys WHERE owner = @owner AND revoked_at IS NULL AND expires_at > @at";

/** The owner's keys on a chain that may still add to its charges (Store.listHeldKeys), by keys_live_by_owner and keys_revoked_by_owner (plans.test.ts). */
export const HELD_KEYS_SQL = `
  SELECT * FROM keys WHERE owner = @owner AND revoked_at IS NULL AND expires_at > @since AND chain_id = @chain_id AND (expires_at > @live_after OR budget_reserved > 0)
  UNION ALL
  SELECT * FROM keys WHERE owner = @owner AND revoked_at > @since AND chain_id = @chain_id AND budget_reserved > 0`;

/** The owner's active session key on a chain, by keys_live_by_owner or keys_active_session (plans.test.ts). */
export const ACTIVE_SESSION_SQL = `SELECT * FROM keys WHERE owner = @owner AND revoked_at IS NULL AND expires_at > @now AND chain_id = @chain_id AND purpose = 'session'
  ORDER BY created_at DESC, key_id DESC LIMIT 1`;

/** Insert, reads, listing and revocation of keys. */
export function createKeyOps(db: Database.Database): Omit<KeyStore, "updateKey" | "rotateKey" | "listKeyEvents" | "getModelSpend"> {
  const insert = db.prepare(`
    INSERT INTO keys (key_id, token_hash, owner, chain_id, purpose, name, budget_limit, budget_used, budget_reserved, created_at, expires_at, revoked_at, last_used_at,
      rate_limit_rpm, budget_period, period_start, models, model_budgets, previous_token_hash, previous_token_valid_until)
    VALUES (@key_id, @token_hash, @owner, @chain_id, @purpose, @name, @budget_limit, @budget_used, @budget_reserved, @created_at, @expires_at, @revoked_at, @last_used_at,
      @rate_limit_rpm, @budget_period, @period_start, @models, @model_budgets, @previous_token_hash, @previous_token_valid_until)`);
  const supersede = db.prepare<{ at: number; owner: string; chain_id: number }, { key_id: string }>(`
    UPDATE keys SET revoked_at = @at
    WHERE owner = @owner AND chain_id = @chain_id AND purpose = 'session' AND revoked_at IS NULL AND expires_at > @at
    RETURNING key_id`);
  const liveOfOwner = db.prepare<{ owner: string; at: number }, { n: number | bigint }>(LIVE_KEYS_SQL);
  const activeSession = db.prepare<{ owner: string; chain_id: number; now: number }, KeyRow>(ACTIVE_SESSION_SQL);
  const heldKeys = db.prepare<{ owner: string; chain_id: number; live_after: number; since: number }, KeyRow>(HELD_KEYS_SQL);
  const byId = db.prepare<[string], KeyRow>("SELECT * FROM keys WHERE key_id = ?");
  const byToken = db.prepare<[string], KeyRow>("SELECT * FROM keys WHERE token_hash = ?");
  const byPreviousToken = db.prepare<[string], KeyRow>("SELECT * FROM keys WHERE previous_token_hash = ?");
  const revoke = db.prepare<[number, string], KeyRow>("UPDATE keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ? RETURNING *");
  // Keyset pagination: (created_at, key_id) strictly before the cursor, newest first.
  const page = db.prepare<Record<string, unknown>, KeyRow>(`
    SELECT * FROM keys
    WHERE owner = @owner
      AND (@chain_id IS NULL OR chain_id = @chain_id)
      AND (@cursor_created IS NULL OR created_at < @cursor_created OR (created_at = @cursor_created AND key_id < @cursor_key))
    ORDER BY created_at DESC, key_id DESC
    LIMIT @limit`);

  // Under BEGIN IMMEDIATE: another process's insert waits for this one, so the count is exact.
  const insertTx = db.transaction((key: KeyRecord, at: number, liveLimit: number | undefined): string[] => {
    const superseded = key.purpose === "session" ? supersede.all({ at, owner: key.owner, chain_id: key.chainId }).map((r) => r.key_id) : [];
    insert.run(keyParams(key));
    if (liveLimit !== undefined && isLiveKey(key, at) && Number(liveOfOwner.get({ owner: key.owner, at })!.n) > liveLimit)
      throw tooManyKeys(key.owner, liveLimit);
    return superseded.sort();
  });

  return {
    async insertKey(key, options = {}) {
      checkAmount(key.budgetLimit, "budgetLimit");
      checkAmount(key.budgetUsed, "budgetUsed");
      checkAmount(key.budgetReserved, "budgetReserved");
      return { superseded: insertTx.immediate(key, options.supersedeSessionAt ?? key.createdAt, options.liveLimit) };
    },

    async getKeyById(keyId) {
      const row = byId.get(keyId);
      return row ? keyFromRow(row) : null;
    },

    async getKeyByTokenHash(tokenHash) {
      // The previous token (kept by a rotation) only when no current token matches.
      const row = byToken.get(tokenHash) ?? byPreviousToken.get(tokenHash);
      return row ? keyFromRow(row) : null;
    },

    async listKeys(owner, { limit, cursor, chainId }) {
      const rows = page.all({
        owner,
        chain_id: chainId ?? null,
        cursor_created: cursor?.createdAt ?? null,
        cursor_key: cursor?.keyId ?? null,
        limit: pageQuerySize(limit),
      });
      const { items: keys, more } = keysetPage(rows, limit, (r) => keyFromRow(r));
      return { keys, nextCursor: more && { createdAt: more.createdAt, keyId: more.keyId } };
    },

    async listHeldKeys(owner, chainId, liveAfter) {
      return heldKeys.all({ owner, chain_id: chainId, live_after: liveAfter, since: heldKeysSince(liveAfter) }).map((r) => keyFromRow(r));
    },

    async findActiveSessionKey(owner, chainId, now) {
      const row = activeSession.get({ owner, chain_id: chainId, now });
      return row ? keyFromRow(row) : null;
    },

    async revokeKey(keyId, at) {
      const row = revoke.get(at, keyId);
      return row ? keyFromRow(row) : null;
    },
  };
}
