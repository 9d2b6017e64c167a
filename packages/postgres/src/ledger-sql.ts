/**
 * The statements of the ledger. Each guarded operation is ONE statement (data-modifying CTEs), so
 * it commits or rolls back as a whole; under READ COMMITTED a row lock taken by `FOR NO KEY
 * UPDATE` or by an UPDATE returns the row's latest committed version after any wait, and every
 * guard below is evaluated on such locked rows. Locks are always taken intents first (several of
 * them in (expires_at, intent_id) order, or with SKIP LOCKED), keys next (several in key_id
 * order), and a key's per-model counters (governance.ts) last, only while holding that key's
 * lock, so two statements never wait for each other in a cycle.
 */
import { lapsedSql, rollSet, scopeReleaseCte, scopeReserveCtes, windowPlaceholders, windowSql, type WindowPlaceholders } from "./governance.js";
import { BUDGET_COLS, CHARGE_INSERT_COLUMNS, chargePlaceholders, INTENT_COLS, KEY_COLS, rowJson, type TableName } from "./rows.js";
import { VIDEO_JOB_INSERT_COLUMNS, videoJobPlaceholders } from "./video.js";

/** The result row of reserve and chargeDirect: JSON of each record, or NULL. */
export interface StepRow {
  /**
   * The key after this statement changed it, or as locked when it changed nothing (then with the
   * stored window, which a lapsed one may need rolling); null: unknown key. A reserve that
   * inserted its intent gives only the key's budget (BUDGET_COLS).
   */
  key: string | null;
  /** "true" when the guard passed and the amount was reserved or charged. */
  fits?: string | null;
  /** "true" when the key held its open-intent cap (reserve's $13, scoped $15; chargeDirect: never). */
  capped?: string | null;
  /**
   * The unscoped statements only: "true" when the key has overdue intents with a per-model scope;
   * the statement then only expired the others, and the caller runs the one with scopes (see
   * `keyStep`).
   */
  due?: string | null;
  /** Scoped reserve: "true" when the key's own guard passed (so a refusal is the per-model cap's). */
  key_fits?: string | null;
  /** reserve: the owner and chain of the inserted intent (the caller has the rest of it). */
  inserted?: string | null;
  /** reserve: the existing intent of the idempotency key. */
  replay?: string | null;
}

/** The budget columns (BUDGET_COLS) of the key a statement changed, as plain columns: null when it changed none. */
interface BudgetColumns {
  key_id: string | null;
  budget_period: string | null;
  budget_limit: string | null;
  budget_used: string | null;
  budget_reserved: string | null;
  period_start: string | null;
}

/**
 * The result row of the lean reserve: none for an unknown key. A hit has the owner, chain and the
 * key's budget after it; a miss has `due` and the whole key as locked (`key`, JSON).
 */
export interface LeanReserveRow extends BudgetColumns {
  fits: "true" | "false";
  /** "true" when the key held its open-intent cap (see {@link StepRow.capped}). */
  capped: "true" | "false";
  /** "true" when the guard missed and the key has overdue intents (the caller runs `reserve`). */
  due: "true" | "false";
  owner: string;
  chain_id: string;
  key: string | null;
}

/** The result row of the finishing statement: always one, with its key's budget after the release. */
export interface FinishRow extends BudgetColumns {
  /** The intent as locked, before this statement (JSON; null: unknown, or not needed: it was finished). */
  current: string | null;
  /** The status this statement left the intent in (null: the guard failed, nothing changed). */
  status: string | null;
  /** The intent as this statement left it (JSON), only when it expired it (a settle or abort that came too late). */
  finished: string | null;
}

/** The budget columns (BUDGET_COLS) of `upd`, for a result that joins it. */
const BUDGET_OF_UPD = `upd.key_id, upd.budget_period, upd.budget_limit::text AS budget_limit, upd.budget_used::text AS budget_used,
        upd.budget_reserved::text AS budget_reserved, upd.period_start::text AS period_start`;

export function ledgerSql(t: TableName) {
  const [keys, intents, charges, videoJobs, spend] = [t("keys"), t("intents"), t("charges"), t("video_jobs"), t("key_model_spend")];

  /**
   * CTEs over $1 = key id, $2 = now, $3 = amount, `w` the window starts, `cap` the placeholder of
   * the open-intent cap (int, NULL: none; absent: chargeDirect): `expired` expires the key's
   * overdue intents (locked in order, each re-checked), `rel` sums and counts what they release,
   * `k` then locks the key and holds its latest version, `idem` is given by the caller, and `calc`
   * evaluates the guard on the locked key with the release applied and a lapsed window counted as
   * used 0 (no `idem` row, unrevoked, unexpired, fewer open intents than the cap, room for $3).
   *
   * With `scopes`, `scope_rel` also releases the expired intents' per-model reservations (but those
   * of `scopes.except`, which the caller writes itself). Without (the hot path: the counter table
   * is not in the plan), only intents without a scope are expired, and `calc.due` tells whether
   * scoped ones are overdue too: the guard then fails (the step expires the others and stops
   * there, a valid step of its own), the statement reports it ({@link StepRow.due}), and
   * the caller runs the statement with `scopes` (ledger.ts). (`x` has OFFSET 0 so that its
   * EXISTS runs once: a subquery the planner inlines is evaluated at each use of its columns.)
   *
   * `expired`'s UPDATE repeats the conditions of the rows its array locked (they hold on those rows
   * anyway: locked, re-checked on their latest version) so that its own scan can use
   * intents_due_by_key. With `intent_id = ANY (…)` alone, a generic plan made while the table was
   * small and unanalyzed read every intent on every reserve, and kept doing so as the table grew
   * (plans.test.ts).
   */
  const keyStep = (idem: string, w: WindowPlaceholders, scopes: false | { except?: string }, expire = true, cap?: string) => {
    const due =
      expire && !scopes
        ? `EXISTS (SELECT 1 FROM ${intents} WHERE key_id = $1::text AND status = 'authorized' AND expires_at <= $2::bigint AND budget_scope IS NOT NULL)`
        : "false";
    // Without `expire` (the lean reserve) nothing is expired: `expired` is empty, `rel` 0.
    const expired = expire
      ? `UPDATE ${intents} SET status = 'expired', released_amount = max_amount, finished_at = $2::bigint
      WHERE key_id = $1::text AND status = 'authorized' AND expires_at <= $2::bigint AND intent_id = ANY (ARRAY(
        SELECT intent_id FROM ${intents}
        WHERE key_id = $1::text AND status = 'authorized' AND expires_at <= $2::bigint${scopes ? "" : " AND budget_scope IS NULL"}
        ORDER BY expires_at, intent_id FOR NO KEY UPDATE))
      RETURNING *`
      : `SELECT * FROM ${intents} WHERE false`;
    return `
    expired AS (
      ${expired}
    ),
    rel AS (SELECT COALESCE(sum(max_amount), 0) AS amount, count(*) AS n FROM expired),
    k AS MATERIALIZED (
      SELECT kk.* FROM ${keys} kk WHERE kk.key_id = $1::text AND (SELECT amount FROM rel) IS NOT NULL FOR NO KEY UPDATE
    ),
    idem AS (${idem}),
    calc AS MATERIALIZED (
      SELECT k.key_id, k.owner, k.chain_id, k.budget_used AS used, k.budget_reserved AS reserved, k.budget_limit AS lim, k.period_start,
        rel.amount AS released, k.open_intents AS open, rel.n AS released_n, k.budget_period AS period, x.lapsed, x.win, x.due, x.capped,
        NOT EXISTS (SELECT 1 FROM idem) AND NOT x.due AND k.revoked_at IS NULL AND k.expires_at > $2::bigint AND NOT x.capped
          AND k.budget_limit - CASE WHEN x.lapsed THEN 0 ELSE k.budget_used END - (k.budget_reserved - rel.amount) >= $3::numeric AS fits
      FROM k, rel, LATERAL (SELECT ${lapsedSql("k.budget_period", "k.period_start", w)} AS lapsed, ${windowSql("k.budget_period", w)} AS win, ${due} AS due,
        ${cap ? `COALESCE(k.open_intents - rel.n >= ${cap}::int, false)` : "false"} AS capped OFFSET 0) x
    )${scopes ? `,${scopeReleaseCte(spend, "k", w, scopes.except)}` : ""}`;
  };

  /**
   * Applies the release and, when `fits` (a boolean column of `from`) holds, the amount to
   * `column` of the key, rolling a lapsed window, in one UPDATE; `open_intents` loses the expired
   * intents and, for a reserve (`budget_reserved`) that fits, gains its own. (Every statement
   * keeps `open_intents` at 0 or above: an intent opened by an instance older than migration 13
   * was never counted, and finishing it must not fail.) The counters are set
   * from the version `k` locked (the latest: no one else can change it meanwhile), not from `kk`:
   * an UPDATE checks the table's CHECK constraints on the row computed from the version its
   * snapshot saw, before it finds the newer one, so `kk.budget_reserved + amount` could fail
   * keys_budget on a version older than the guard's (releases committed in between) although the
   * result fits. The limit is set from `k` too: a column left out of SET comes from that older
   * version, and a limit raised in between (updateKey) would make the guard's row fail the CHECK.
   */
  const spendOn = (column: "budget_reserved" | "budget_used", fits = "calc.fits", from = "calc") => {
    const add = (c: string) => (c === column ? ` + CASE WHEN ${fits} THEN $3::numeric ELSE 0 END` : "");
    return `
    upd AS (
      UPDATE ${keys} kk SET
        budget_limit = calc.lim,
        budget_reserved = calc.reserved - calc.released${add("budget_reserved")},
        open_intents = GREATEST(calc.open - calc.released_n, 0)${column === "budget_reserved" ? ` + CASE WHEN ${fits} THEN 1 ELSE 0 END` : ""},
        budget_used = CASE WHEN calc.lapsed THEN 0 ELSE calc.used END${add("budget_used")},
        period_start = CASE WHEN calc.lapsed THEN calc.win ELSE calc.period_start END,
        last_used_at = CASE WHEN ${fits} THEN $2::bigint ELSE kk.last_used_at END
      FROM ${from} WHERE kk.key_id = calc.key_id AND (${fits} OR calc.released_n > 0)
      RETURNING kk.*
    )`;
  };

  /**
   * Expires the authorized intents the `due` query selects (and locks) at `now` (a placeholder),
   * releases their reservations and open-intent counts with their keys locked in key_id order
   * (rolling lapsed windows), then their per-model reservations, and counts them.
   */
  const expireDue = (due: string, now: string, w: WindowPlaceholders) => `
      WITH due AS MATERIALIZED (${due}),
      expired AS (
        UPDATE ${intents} SET status = 'expired', released_amount = max_amount, finished_at = ${now}::bigint
        WHERE intent_id IN (SELECT intent_id FROM due)
        RETURNING key_id, max_amount, budget_scope
      ),
      rel AS MATERIALIZED (SELECT key_id, sum(max_amount) AS amount, count(*) AS n FROM expired GROUP BY key_id),
      upd AS (
        UPDATE ${keys} kk SET budget_reserved = kk.budget_reserved - rel.amount, open_intents = GREATEST(kk.open_intents - rel.n, 0),
          ${rollSet("kk", "kk.budget_period", w)}
        FROM rel
        WHERE kk.key_id = rel.key_id
          AND kk.key_id = ANY (ARRAY(SELECT key_id FROM ${keys} WHERE key_id IN (SELECT key_id FROM rel) ORDER BY key_id FOR NO KEY UPDATE))
        RETURNING kk.key_id, kk.budget_period
      ),
      ${scopeReleaseCte(spend, "upd", w)}
      SELECT count(*)::text AS n FROM expired`;

  const fw = windowPlaceholders(32);

  // COALESCE evaluates the second subquery only when the first is NULL: one key is serialised.
  /** The key column of a step: with `budgetOnFit`, only the budget when the guard passed (a reserve). */
  const stepResult = (scopes: boolean, fits = "calc", budgetOnFit = false) => {
    const whole = `COALESCE(${rowJson(KEY_COLS, "upd")}, ${rowJson(KEY_COLS, "k")})`;
    const key = budgetOnFit ? `CASE WHEN (SELECT fits FROM ${fits}) THEN ${rowJson(BUDGET_COLS, "upd")} ELSE ${whole} END` : whole;
    return `${key} AS key, (SELECT fits::text FROM ${fits}) AS fits, (SELECT capped::text FROM calc) AS capped${scopes ? "" : ", (SELECT due::text FROM calc) AS due"}`;
  };

  /**
   * The lean reserve's result ({@link LeanReserveRow}), plain columns of one row joined from `calc`
   * and `upd` (no key row: no row at all): each scalar subquery would be a plan node to start per
   * call. `due` is looked up only when the guard missed (CASE evaluates its branch lazily), and the
   * whole key only then too.
   */
  const leanResult = `
      SELECT calc.fits::text AS fits, calc.capped::text AS capped,
        CASE WHEN calc.fits THEN 'false' ELSE EXISTS (SELECT 1 FROM ${intents} WHERE key_id = $1::text AND status = 'authorized' AND expires_at <= $2::bigint)::text END AS due,
        calc.owner, calc.chain_id::text AS chain_id, ${BUDGET_OF_UPD},
        CASE WHEN NOT calc.fits THEN ${rowJson(KEY_COLS, "k")} END AS key
      FROM calc LEFT JOIN upd ON true`;

  /**
   * $1 key id, $2 now, $3 maxAmount, $4 intent id, $5 idempotency key, $6 fingerprint,
   * $7 request, $8 createdAt, $9 expiresAt, $10…$12 the windows at now; scoped: $13 the scope,
   * $14 its cap; last (unscoped $13, scoped $15) the open-intent cap (int, NULL: none). `idem` is
   * the existing intent with this idempotency key in its current state (expired just now, or as
   * stored); `ins` inserts the new intent when the guard (and the scope's, see governance.ts
   * `scopeReserveCtes`) passed. A concurrent reserve with the same idempotency key that committed
   * after this statement began is invisible to `idem` but not to the unique index
   * intents_idempotency.
   */
  const reserve = (scoped: boolean, scopes: boolean, expire = true) => {
    const w = windowPlaceholders(10);
    const ok = scoped ? "sc" : "calc";
    const idem = expire
      ? `
        SELECT * FROM expired WHERE idempotency_key = $5::text
        UNION ALL
        SELECT * FROM ${intents}
        WHERE key_id = $1::text AND idempotency_key = $5::text AND intent_id NOT IN (SELECT intent_id FROM expired)`
      : "SELECT * FROM expired";
    return `
      WITH ${keyStep(idem, w, scopes && (scoped ? { except: "$13" } : {}), expire, scoped ? "$15" : "$13")},${scoped ? `${scopeReserveCtes(spend, w, "$13", "$14")},` : ""}
      ins AS (
        INSERT INTO ${intents} (intent_id, key_id, owner, chain_id, status, max_amount, idempotency_key, fingerprint, request, created_at, expires_at, budget_scope)
        SELECT $4::text, calc.key_id, calc.owner, calc.chain_id, 'authorized', $3::numeric, $5::text, $6::text, $7::json, $8::bigint, $9::bigint, ${scoped ? "$13::text" : "NULL"}
        FROM ${scoped ? "calc, sc" : "calc"} WHERE ${ok}.fits
        RETURNING *
      ),
      ${scoped ? spendOn("budget_reserved", "sc.fits", "calc, sc") : spendOn("budget_reserved")}
      ${
        expire
          ? `SELECT ${stepResult(scopes, ok, true)}, ${rowJson("owner, chain_id::text AS chain_id", "ins")} AS inserted, ${rowJson(INTENT_COLS, "idem")} AS replay${scoped ? ", (SELECT fits::text FROM calc) AS key_fits" : ""}`
          : leanResult
      }`;
  };

  const chargeDirect = (scopes: boolean) => `
      WITH ${keyStep("SELECT 1 WHERE false", windowPlaceholders(17), scopes && {})},
      ${spendOn("budget_used")},
      chg AS (
        INSERT INTO ${charges} (${CHARGE_INSERT_COLUMNS})
        SELECT ${chargePlaceholders(4)} FROM calc WHERE fits AND $9::numeric > 0
      )
      SELECT ${stepResult(scopes)}`;

  /**
   * $1 intent id, $2 now, $3 target status ('settled', 'aborted', or 'expired': only expire an
   * overdue intent), $4 final amount (settle), $5 result, $6 reason (abort), $7…$19 the charge,
   * $20…$31 the video job (settle; all NULL when none), $32…$34 the windows at now. `cur` locks
   * the intent (its latest version); `fin` moves it out of `authorized` (to `expired` when it is
   * overdue); `upd` releases the reservation and the open-intent count on its key and adds the
   * final amount to used (in the current window: a lapsed one is rolled first); `spd` does the
   * same on the intent's per-model counters (after `upd`, whose key lock it needs); `chg` queues
   * the charge of a settle and
   * `job` inserts its video job (a duplicate job id fails the statement, so the settle and its
   * job land together or not at all).
   *
   * Without `scoped` (the hot path: the counter table is not in the plan), `cur` skips an intent
   * with a scope, which is then neither locked nor changed and reads as unknown (no row at all):
   * the caller runs the statement with `scoped` whenever the hot one found nothing (ledger.ts).
   */
  const scopeFinish = `
      spd AS (
        UPDATE ${spend} s SET budget_reserved = s.budget_reserved - fin.max_amount,
          ${rollSet("s", "upd.budget_period", fw, " + COALESCE(fin.final_amount, 0)")}
        FROM fin, upd
        WHERE fin.budget_scope IS NOT NULL AND s.key_id = fin.key_id AND s.scope = fin.budget_scope AND upd.key_id = fin.key_id
      ),`;
  const finishStep = (scoped: boolean) => `
      WITH cur AS MATERIALIZED (SELECT * FROM ${intents} WHERE intent_id = $1::text${scoped ? "" : " AND budget_scope IS NULL"} FOR NO KEY UPDATE),
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
        UPDATE ${keys} kk SET budget_reserved = kk.budget_reserved - fin.max_amount, open_intents = GREATEST(kk.open_intents - 1, 0),
          ${rollSet("kk", "kk.budget_period", fw, " + COALESCE(fin.final_amount, 0)")}
        FROM fin WHERE kk.key_id = fin.key_id
        RETURNING kk.*
      ),${scoped ? scopeFinish : ""}
      chg AS (
        INSERT INTO ${charges} (${CHARGE_INSERT_COLUMNS})
        SELECT ${chargePlaceholders(7)} FROM fin WHERE fin.status = 'settled' AND $12::numeric > 0
      ),
      job AS (
        INSERT INTO ${videoJobs} (${VIDEO_JOB_INSERT_COLUMNS})
        SELECT ${videoJobPlaceholders(20)} FROM fin WHERE fin.status = 'settled' AND $20::text IS NOT NULL
      )
      SELECT fin.status, CASE WHEN fin.status IS NULL THEN ${rowJson(INTENT_COLS, "cur")} END AS current,
        CASE WHEN fin.status = 'expired' THEN ${rowJson(INTENT_COLS, "fin")} END AS finished, ${BUDGET_OF_UPD}
      FROM (SELECT) one LEFT JOIN fin ON true LEFT JOIN upd ON true`;

  return {
    /**
     * The lean reserve, for an unscoped reserve without an idempotency key (the hot path): no
     * intent is read or expired before the key's guard, no per-model counter is touched; $5 must be
     * NULL. When it misses on a key with overdue intents (`due`), the caller runs `reserve`, which
     * expires them first (ledger.ts).
     */
    reserveLean: reserve(false, false, false),
    /** An unscoped reserve that first expires the key's overdue unscoped intents (and replays an idempotency key). */
    reserve: reserve(false, false),
    /** An unscoped reserve that also expires the key's overdue scoped intents. */
    reserveFull: reserve(false, true),
    /** A reserve that also counts against a per-model cap. */
    reserveScoped: reserve(true, true),
    /** $1 key id, $2 now, $3 amount, $4…$16 the charge (queued when the guard passed), $17…$19 the windows; no open-intent cap. */
    chargeDirect: chargeDirect(false),
    /** chargeDirect that also expires the key's overdue scoped intents. */
    chargeDirectFull: chargeDirect(true),
    /** Finishes an intent without a per-model scope (the hot path); a scoped one reads as unknown, see `finishStep`. */
    finish: finishStep(false),
    /** Finishes any intent, moving its per-model counters too. */
    finishScoped: finishStep(true),
    /**
     * $1 now, $2 limit, $3…$5 the windows at now. `due` takes the oldest overdue intents that no
     * one else holds (SKIP LOCKED); their keys are then locked in key_id order and released.
     */
    sweep: expireDue(
      `SELECT intent_id FROM ${intents} WHERE status = 'authorized' AND expires_at <= $1::bigint
       ORDER BY expires_at, intent_id LIMIT $2::int FOR NO KEY UPDATE SKIP LOCKED`,
      "$1",
      windowPlaceholders(3),
    ),
    /**
     * $1 JSON array of key ids, $2 now, $3…$5 the windows at now. `due` locks the overdue
     * authorized intents of those keys in (expires_at, intent_id) order (each re-checked on its
     * latest version after any wait); their keys are then locked in key_id order and released, as
     * in `sweep`.
     */
    releaseKeys: expireDue(
      `SELECT intent_id FROM ${intents}
       WHERE key_id IN (SELECT json_array_elements_text($1::json)) AND status = 'authorized' AND expires_at <= $2::bigint
       ORDER BY expires_at, intent_id FOR NO KEY UPDATE`,
      "$2",
      windowPlaceholders(3),
    ),
    dueOfKeys: `SELECT count(*)::text AS n FROM ${intents} WHERE key_id IN (SELECT json_array_elements_text($1::json)) AND status = 'authorized' AND expires_at <= $2::bigint`,
    intentById: `SELECT ${INTENT_COLS} FROM ${intents} WHERE intent_id = $1::text`,
    /** A page of the owner's intents between two row-value bounds (one range of `intents_by_owner`). */
    intentPage: `
      SELECT ${INTENT_COLS} FROM ${intents} x
      WHERE owner = $1::text AND (created_at, intent_id) < ($2::bigint, $3::text) AND (created_at, intent_id) >= ($4::bigint, $5::text)
        AND created_at BETWEEN $4::bigint AND $2::bigint
        AND ($6::bigint IS NULL OR chain_id = $6::bigint) AND ($7::text IS NULL OR key_id = $7::text)
        AND ($8::text IS NULL OR CASE WHEN status = 'authorized' AND expires_at <= $9::bigint THEN 'expired' ELSE status END = $8::text)
      ORDER BY x.created_at DESC, x.intent_id DESC
      LIMIT $10::int`,
    /** The last intent a filtered page may examine (the first of the two rows), from the owner index alone. */
    intentPageBoundary: `
      SELECT x.created_at::text AS at, x.intent_id FROM ${intents} x
      WHERE owner = $1::text AND (created_at, intent_id) < ($2::bigint, $3::text) AND created_at <= $2::bigint
      ORDER BY x.created_at DESC, x.intent_id DESC
      LIMIT 2 OFFSET $4::int`,
  };
}
