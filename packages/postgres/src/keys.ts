/** {@link KeyStore} on PostgreSQL. */
import { heldKeysSince, isLiveKey, keysetPage, pageQuerySize, tooManyKeys } from "@tollgate/core";
import type { KeyRecord, KeyStore } from "@tollgate/core";
import { createGovernanceOps } from "./governance.js";
import { inTransaction, retryOnConflict, type Queryable } from "./queryable.js";
import { checkAmount, enc, KEY_COLS, modelBudgetsJson, toJson, toKey, type KeyRow, type TableName } from "./rows.js";

const INSERT_COLUMNS = `key_id, token_hash, owner, chain_id, purpose, name, budget_limit, budget_used, budget_reserved, created_at, expires_at, revoked_at, last_used_at, rate_limit_rpm,
  budget_period, period_start, models, model_budgets, previous_token_hash, previous_token_valid_until, current_session`;
const INSERT_VALUES = `$1::text, $2::text, $3::text, $4::bigint, $5::text, $6::text, $7::numeric, $8::numeric, $9::numeric, $10::bigint, $11::bigint, $12::bigint, $13::bigint, $14::integer,
  $15::text, $16::bigint, $17::json, $18::json, $19::text, $20::bigint`;

/** A wallet's live keys at $2, read from keys_live_by_owner alone (its unrevoked keys, by expiry; plans.test.ts). */
export function liveKeysSql(t: TableName): string {
  return `SELECT count(*)::int AS n FROM ${t("keys")} WHERE owner = $1::text AND revoked_at IS NULL AND expires_at > $2::bigint`;
}

/** The owner's active session key on chain $2 at $3, by keys_live_by_owner or keys_active_session (plans.test.ts). */
export function activeSessionSql(t: TableName): string {
  return `SELECT ${KEY_COLS} FROM ${t("keys")} x WHERE owner = $1::text AND revoked_at IS NULL AND expires_at > $3::bigint AND chain_id = $2::bigint AND purpose = 'session'
    ORDER BY x.created_at DESC, x.key_id DESC LIMIT 1`;
}

/** The owner's keys on chain $2 that may still add to its charges (Store.listHeldKeys; live after $3, held since $4), by keys_live_by_owner and keys_revoked_by_owner (plans.test.ts). */
export function heldKeysSql(t: TableName): string {
  return `SELECT ${KEY_COLS} FROM ${t("keys")} x WHERE owner = $1::text AND revoked_at IS NULL AND expires_at > $4::bigint AND chain_id = $2::bigint AND (expires_at > $3::bigint OR budget_reserved > 0)
    UNION ALL
    SELECT ${KEY_COLS} FROM ${t("keys")} x WHERE owner = $1::text AND revoked_at > $4::bigint AND chain_id = $2::bigint AND budget_reserved > 0`;
}

/**
 * `db` runs the statements; `txDb` (the pool itself, not a wrapper that names statements) runs
 * the transaction of an insert under a cap of live keys.
 */
export function createKeyOps(db: Queryable, t: TableName, txDb: Queryable = db): KeyStore {
  const keys = t("keys");
  // A wallet's inserts under a cap take its advisory lock (per schema and owner) for their
  // transaction; the count then sees every insert committed before, read from keys_live_by_owner.
  const lockOwner = "SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))";
  const liveOfOwner = liveKeysSql(t);
  const activeSession = activeSessionSql(t);
  const heldKeys = heldKeysSql(t);
  const insertApi = `INSERT INTO ${keys} (${INSERT_COLUMNS}) VALUES (${INSERT_VALUES}, NULL)`;
  // One statement. `old` locks, in key_id order, the current session key of (owner, chain) and
  // every other one still active at $21 (the latest versions, re-checked after any wait); `sup`
  // revokes the active ones and clears the current mark; the insert runs after `sup` (it reads
  // it) and marks the new key current. A concurrent insert that committed after this statement
  // began is invisible to `old`, but its current mark is not invisible to the unique index
  // keys_current_session: this statement then fails, changes nothing, and is re-run.
  const insertSession = `
    WITH old AS MATERIALIZED (
      SELECT key_id, CASE WHEN revoked_at IS NULL AND expires_at > $21::bigint THEN key_id END AS superseded
      FROM ${keys}
      WHERE owner = $3::text AND chain_id = $4::bigint AND purpose = 'session'
        AND (current_session OR (revoked_at IS NULL AND expires_at > $21::bigint))
      ORDER BY key_id FOR NO KEY UPDATE
    ),
    sup AS (
      UPDATE ${keys} k SET current_session = NULL, revoked_at = CASE WHEN old.superseded IS NULL THEN k.revoked_at ELSE $21::bigint END
      FROM old WHERE k.key_id = old.key_id
      RETURNING old.superseded
    ),
    ins AS (
      INSERT INTO ${keys} (${INSERT_COLUMNS})
      SELECT ${INSERT_VALUES}, true WHERE (SELECT count(*) FROM sup) >= 0
    )
    SELECT superseded FROM sup WHERE superseded IS NOT NULL ORDER BY superseded`;
  const page = `
    SELECT ${KEY_COLS} FROM ${keys} x
    WHERE owner = $1::text AND ($2::bigint IS NULL OR chain_id = $2::bigint)
      AND ($3::bigint IS NULL OR created_at < $3::bigint OR (created_at = $3::bigint AND key_id < $4::text))
    ORDER BY x.created_at DESC, x.key_id DESC
    LIMIT $5::int`;

  async function one(sql: string, params: unknown[]): Promise<KeyRecord | null> {
    const { rows } = await db.query<KeyRow>(sql, params);
    return rows[0] ? toKey(rows[0]) : null;
  }

  const governance = createGovernanceOps(db, t);
  return {
    ...governance,

    /**
     * One statement (governance.ts). Under a `liveLimit`, a patch that may revive a key (it sets
     * `expiresAt`) runs in a transaction after the owner's advisory lock (the one inserts take), then
     * the count of the owner's live keys; one too many rolls it back.
     */
    async updateKey(input) {
      const { liveLimit, keyId, now } = input;
      if (liveLimit === undefined || input.patch.expiresAt === undefined) return governance.updateKey(input);
      const before = await one(`SELECT ${KEY_COLS} FROM ${keys} WHERE key_id = $1::text`, [keyId]);
      if (!before) return { ok: false, reason: "not_found" };
      return inTransaction(txDb, async (tx) => {
        await tx.query(lockOwner, [`${keys}:${before.owner}`]);
        const locked = (await tx.query<KeyRow>(`SELECT ${KEY_COLS} FROM ${keys} WHERE key_id = $1::text`, [keyId])).rows[0];
        const result = await createGovernanceOps(tx, t).updateKey(input);
        if (result.ok && locked && !isLiveKey(toKey(locked), now) && isLiveKey(result.key, now)) {
          const { rows } = await tx.query<{ n: number }>(liveOfOwner, [before.owner, now]);
          if (rows[0]!.n > liveLimit) throw tooManyKeys(before.owner, liveLimit);
        }
        return result;
      });
    },

    /**
     * One statement. A session key: see `insertSession` above; of N concurrent inserts for one
     * (owner, chain), each supersedes the one current before it, so one stays active. Under a
     * `liveLimit`, that statement runs in a transaction after the owner's advisory lock, then the
     * count of the owner's live keys; one too many rolls it back.
     */
    async insertKey(key, options = {}) {
      const values = [
        key.keyId,
        key.tokenHash,
        key.owner,
        key.chainId,
        key.purpose,
        enc(key.name),
        checkAmount(key.budgetLimit, "budgetLimit"),
        checkAmount(key.budgetUsed, "budgetUsed"),
        checkAmount(key.budgetReserved, "budgetReserved"),
        key.createdAt,
        key.expiresAt,
        key.revokedAt ?? null,
        key.lastUsedAt ?? null,
        key.rateLimit?.requestsPerMinute ?? null,
        key.budgetPeriod ?? null,
        key.periodStart ?? null,
        toJson(key.models),
        modelBudgetsJson(key.modelBudgets),
        key.previousTokenHash ?? null,
        key.previousTokenValidUntil ?? null,
      ];
      const at = options.supersedeSessionAt ?? key.createdAt;
      const insert = async (q: Queryable): Promise<string[]> => {
        if (key.purpose === "session") return (await q.query<{ superseded: string }>(insertSession, [...values, at])).rows.map((r) => r.superseded);
        await q.query(insertApi, values);
        return [];
      };
      const limit = options.liveLimit;
      if (limit === undefined || !isLiveKey(key, at)) return { superseded: await retryOnConflict(["keys_current_session"], () => insert(db)) };
      const superseded = await retryOnConflict(["keys_current_session"], () =>
        inTransaction(txDb, async (tx) => {
          await tx.query(lockOwner, [`${keys}:${key.owner}`]);
          const superseded = await insert(tx);
          const { rows } = await tx.query<{ n: number }>(liveOfOwner, [key.owner, at]);
          if (rows[0]!.n > limit) throw tooManyKeys(key.owner, limit);
          return superseded;
        }),
      );
      return { superseded };
    },

    async getKeyById(keyId) {
      return one(`SELECT ${KEY_COLS} FROM ${keys} WHERE key_id = $1::text`, [keyId]);
    },

    /** The current token first (one index lookup, as before rotation existed); the previous token only when no key has it as current. */
    async getKeyByTokenHash(tokenHash) {
      return (
        (await one(`SELECT ${KEY_COLS} FROM ${keys} WHERE token_hash = $1::text`, [tokenHash])) ??
        (await one(`SELECT ${KEY_COLS} FROM ${keys} WHERE previous_token_hash = $1::text`, [tokenHash]))
      );
    },

    async listKeys(owner, { limit, cursor, chainId }) {
      const { rows } = await db.query<KeyRow>(page, [owner, chainId ?? null, cursor?.createdAt ?? null, cursor?.keyId ?? null, pageQuerySize(limit)]);
      const { items: keys, more } = keysetPage(rows, limit, toKey);
      return { keys, nextCursor: more && { createdAt: more.createdAt, keyId: more.keyId } };
    },

    async listHeldKeys(owner, chainId, liveAfter) {
      const { rows } = await db.query<KeyRow>(heldKeys, [owner, chainId, liveAfter, heldKeysSince(liveAfter)]);
      return rows.map(toKey);
    },

    /** One indexed read of the owner's unrevoked keys (plans.test.ts), never its whole key list. */
    async findActiveSessionKey(owner, chainId, now) {
      return one(activeSession, [owner, chainId, now]);
    },

    /** One conditional UPDATE: the row lock makes the first revocation time win. */
    async revokeKey(keyId, at) {
      return one(`UPDATE ${keys} SET revoked_at = COALESCE(revoked_at, $2::bigint) WHERE key_id = $1::text RETURNING ${KEY_COLS}`, [keyId, at]);
    },
  };
}
