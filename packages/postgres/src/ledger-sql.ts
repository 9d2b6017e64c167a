/**
 * The statements of the ledger. Each guarded operation is ONE statement (data-modifying CTEs), so
 * it commits or rolls back as a whole; under READ COMMITTED a row lock taken by `FOR NO KEY
 * UPDATE` or by an UPDATE returns the row's latest committed version after any wait, and every
 * guard below is evaluated on such locked rows. Locks are always taken intents first (several of
 * them in (expires_at, intent_id) order, or with SKIP LOCKED), keys last (several in key_id
 * order), so two statements never wait for each other in a cycle.
 */
import { CHARGE_INSERT_COLUMNS, chargePlaceholders, INTENT_COLS, KEY_COLS, rowJson, type TableName } from "./rows.js";
import { VIDEO_JOB_INSERT_COLUMNS, videoJobPlaceholders } from "./video.js";

/** The result row of reserve and chargeDirect: JSON of each record, or NULL. */
export interface StepRow {
  /** The key as locked, before this statement changed it (null: unknown key). */
  before: string | null;
  /** The key after this statement changed it (null: unchanged). */
  after: string | null;
  /** "true" when the guard passed and the amount was reserved or charged. */
  fits?: string | null;
  /** reserve: the inserted intent. */
  inserted?: string | null;
  /** reserve: the existing intent of the idempotency key. */
  replay?: string | null;
}

/** The result row of the finishing statement. */
export interface FinishRow {
  /** The intent as locked, before this statement (null: unknown). */
  current: string | null;
  /** The intent as this statement left it (null: the guard failed, nothing changed). */
  finished: string | null;
  /** Its key after the release. */
  key: string | null;
}

export function ledgerSql(t: TableName) {
  const [keys, intents, charges, videoJobs] = [t("keys"), t("intents"), t("charges"), t("video_jobs")];

  /**
   * CTEs over $1 = key id, $2 = now, $3 = amount: `expired` expires the key's overdue intents
   * (locked in order, each re-checked), `rel` sums what they release, `k` then locks the key and
   * holds its latest version, `idem` is given by the caller, and `calc` evaluates the guard on the
   * locked key with the release applied (no `idem` row, unrevoked, unexpired, room for $3).
   */
  const keyStep = (idem: string) => `
    expired AS (
      UPDATE ${intents} SET status = 'expired', released_amount = max_amount, finished_at = $2::bigint
      WHERE intent_id = ANY (ARRAY(
        SELECT intent_id FROM ${intents}
        WHERE key_id = $1::text AND status = 'authorized' AND expires_at <= $2::bigint
        ORDER BY expires_at, intent_id FOR NO KEY UPDATE))
      RETURNING *
    ),
    rel AS (SELECT COALESCE(sum(max_amount), 0) AS amount FROM expired),
    k AS MATERIALIZED (
      SELECT kk.* FROM ${keys} kk WHERE kk.key_id = $1::text AND (SELECT amount FROM rel) IS NOT NULL FOR NO KEY UPDATE
    ),
    idem AS (${idem}),
    calc AS MATERIALIZED (
      SELECT k.key_id, k.owner, k.chain_id, rel.amount AS released,
        NOT EXISTS (SELECT 1 FROM idem) AND k.revoked_at IS NULL AND k.expires_at > $2::bigint
          AND k.budget_limit - k.budget_used - (k.budget_reserved - rel.amount) >= $3::numeric AS fits
      FROM k, rel
    )`;

  /** Applies the release and, when the guard passed, the amount to `column` of the key, in one UPDATE. */
  const spend = (column: "budget_reserved" | "budget_used") => {
    const add = (c: string) => (c === column ? " + CASE WHEN calc.fits THEN $3::numeric ELSE 0 END" : "");
    return `
    upd AS (
      UPDATE ${keys} kk SET
        budget_reserved = kk.budget_reserved - calc.released${add("budget_reserved")},
        budget_used = kk.budget_used${add("budget_used")},
        last_used_at = CASE WHEN calc.fits THEN $2::bigint ELSE kk.last_used_at END
      FROM calc WHERE kk.key_id = calc.key_id AND (calc.fits OR calc.released > 0)
      RETURNING kk.*
    )`;
  };

  /**
   * Expires the authorized intents the `due` query selects (and locks) at `now` (a placeholder),
   * releases their reservations with their keys locked in key_id order, and counts them.
   */
  const expireDue = (due: string, now: string) => `
      WITH due AS MATERIALIZED (${due}),
      expired AS (
        UPDATE ${intents} SET status = 'expired', released_amount = max_amount, finished_at = ${now}::bigint
        WHERE intent_id IN (SELECT intent_id FROM due)
        RETURNING key_id, max_amount
      ),
      rel AS MATERIALIZED (SELECT key_id, sum(max_amount) AS amount FROM expired GROUP BY key_id),
      upd AS (
        UPDATE ${keys} kk SET budget_reserved = kk.budget_reserved - rel.amount
        FROM rel
        WHERE kk.key_id = rel.key_id
          AND kk.key_id = ANY (ARRAY(SELECT key_id FROM ${keys} WHERE key_id IN (SELECT key_id FROM rel) ORDER BY key_id FOR NO KEY UPDATE))
      )
      SELECT count(*)::text AS n FROM expired`;

  const stepResult = `${rowJson(KEY_COLS, "k")} AS before, ${rowJson(KEY_COLS, "upd")} AS after, (SELECT fits::text FROM calc) AS fits`;

  return {
    /**
     * $1 key id, $2 now, $3 maxAmount, $4 intent id, $5 idempotency key, $6 fingerprint,
     * $7 request, $8 createdAt, $9 expiresAt. `idem` is the existing intent with this idempotency
     * key in its current state (expired just now, or as stored); `ins` inserts the new intent when
     * the guard passed. A concurrent reserve with the same idempotency key that committed after
     * this statement began is invisible to `idem` but not to the unique index intents_idempotency.
     */
    reserve: `
      WITH ${keyStep(`
        SELECT * FROM expired WHERE idempotency_key = $5::text
        UNION ALL
        SELECT * FROM ${intents}
        WHERE key_id = $1::text AND idempotency_key = $5::text AND intent_id NOT IN (SELECT intent_id FROM expired)`)},
      ins AS (
        INSERT INTO ${intents} (intent_id, key_id, owner, chain_id, status, max_amount, idempotency_key, fingerprint, request, created_at, expires_at)
        SELECT $4::text, key_id, owner, chain_id, 'authorized', $3::numeric, $5::text, $6::text, $7::json, $8::bigint, $9::bigint
        FROM calc WHERE fits
        RETURNING *
      ),
      ${spend("budget_reserved")}
      SELECT ${stepResult}, ${rowJson(INTENT_COLS, "ins")} AS inserted, ${rowJson(INTENT_COLS, "idem")} AS replay`,
    /** $1 key id, $2 now, $3 amount, $4… the charge (queued when the guard passed). */
    chargeDirect: `
      WITH ${keyStep("SELECT 1 WHERE false")},
      ${spend("budget_used")},
      chg AS (
        INSERT INTO ${charges} (${CHARGE_INSERT_COLUMNS})
        SELECT ${chargePlaceholders(4)} FROM calc WHERE fits AND $9::numeric > 0
      )
      SELECT ${stepResult}`,
    /**
     * $1 intent id, $2 now, $3 target status ('settled', 'aborted', or 'expired': only expire an
     * overdue intent), $4 final amount (settle), $5 result, $6 reason (abort), $7…$19 the charge,
     * $20…$31 the video job (settle; all NULL when none). `cur` locks the intent (its latest
     * version); `fin` moves it out of `authorized` (to `expired` when it is overdue); `upd`
     * releases the reservation on its key and adds the final amount to used; `chg` queues the
     * charge of a settle and `job` inserts its video job (a duplicate job id fails the statement,
     * so the settle and its job land together or not at all).
     */
    finish: `
      WITH cur AS MATERIALIZED (SELECT * FROM ${intents} WHERE intent_id = $1::text FOR NO KEY UPDATE),
      fin AS (
        UPDATE ${intents} ii SET
          status = CASE WHEN cur.expires_at > $2::bigint THEN $3::text ELSE 'expired' END,
          final_amount = CASE WHEN cur.expires_at > $2::bigint THEN $4::numeric END,
          released_amount = cur.max_amount - CASE WHEN cur.expires_at > $2::bigint THEN COALESCE($4::numeric, 0) ELSE 0 END,
          result = CASE WHEN cur.expires_at > $2::bigint THEN $5::json END,
          reason = CASE WHEN cur.expires_at > $2::bigint THEN $6::text END,
          finished_at = $2::bigint
        FROM cur
        WHERE ii.intent_id = cur.intent_id AND cur.status = 'authorized'
          AND (cur.expires_at <= $2::bigint OR ($3::text <> 'expired' AND cur.max_amount >= COALESCE($4::numeric, 0)))
        RETURNING ii.*
      ),
      upd AS (
        UPDATE ${keys} kk SET budget_reserved = kk.budget_reserved - fin.max_amount, budget_used = kk.budget_used + COALESCE(fin.final_amount, 0)
        FROM fin WHERE kk.key_id = fin.key_id
        RETURNING kk.*
      ),
      chg AS (
        INSERT INTO ${charges} (${CHARGE_INSERT_COLUMNS})
        SELECT ${chargePlaceholders(7)} FROM fin WHERE fin.status = 'settled' AND $12::numeric > 0
      ),
      job AS (
        INSERT INTO ${videoJobs} (${VIDEO_JOB_INSERT_COLUMNS})
        SELECT ${videoJobPlaceholders(20)} FROM fin WHERE fin.status = 'settled' AND $20::text IS NOT NULL
      )
      SELECT ${rowJson(INTENT_COLS, "cur")} AS current, ${rowJson(INTENT_COLS, "fin")} AS finished, ${rowJson(KEY_COLS, "upd")} AS key`,
    /**
     * $1 now, $2 limit. `due` takes the oldest overdue intents that no one else holds (SKIP
     * LOCKED); their keys are then locked in key_id order and released.
     */
    sweep: expireDue(
      `SELECT intent_id FROM ${intents} WHERE status = 'authorized' AND expires_at <= $1::bigint
       ORDER BY expires_at, intent_id LIMIT $2::int FOR NO KEY UPDATE SKIP LOCKED`,
      "$1",
    ),
    /**
     * $1 JSON array of key ids, $2 now. `due` locks the overdue authorized intents of those keys
     * in (expires_at, intent_id) order (each re-checked on its latest version after any wait);
     * their keys are then locked in key_id order and released, as in `sweep`.
     */
    releaseKeys: expireDue(
      `SELECT intent_id FROM ${intents}
       WHERE key_id IN (SELECT json_array_elements_text($1::json)) AND status = 'authorized' AND expires_at <= $2::bigint
       ORDER BY expires_at, intent_id FOR NO KEY UPDATE`,
      "$2",
    ),
    dueOfKeys: `SELECT count(*)::text AS n FROM ${intents} WHERE key_id IN (SELECT json_array_elements_text($1::json)) AND status = 'authorized' AND expires_at <= $2::bigint`,
    intentById: `SELECT ${INTENT_COLS} FROM ${intents} WHERE intent_id = $1::text`,
    intentPage: `
      SELECT ${INTENT_COLS} FROM ${intents} x
      WHERE owner = $1::text AND ($2::bigint IS NULL OR chain_id = $2::bigint) AND ($3::text IS NULL OR key_id = $3::text)
        AND ($4::bigint IS NULL OR created_at < $4::bigint OR (created_at = $4::bigint AND intent_id < $5::text))
      ORDER BY x.created_at DESC, x.intent_id DESC
      LIMIT $6::int`,
  };
}
