/**
 * Key governance on PostgreSQL: migration 11, the SQL fragments that roll a calendar budget window
 * forward inside the ledger's guarded statements (ledger-sql.ts), and the key operations of the
 * governance port (updateKey, rotateKey, listKeyEvents, getModelSpend).
 *
 * Windows: the caller binds the three window starts at `now` ({@link windowValues}, UTC, from
 * `@tollgate/core`), and `CASE budget_period …` picks the key's. A window has lapsed when the
 * stored `period_start` is before the current start: the row's `budget_used` then counts 0 and
 * every statement that writes the row sets used 0 and `period_start` to the current start in the
 * same UPDATE, so a roll is never a separate step. Per-model counters (`key_model_spend`) roll the
 * same way against their key's period. Locks: a statement touches a key's counter rows only while
 * it holds that key's row lock (taken first), so counters never add a lock cycle.
 */
import { keyEventFromRow, keysetPage, modelSpendFromRow, pageQuerySize, rolled, windowStarts } from "@tollgate/core";
import type { KeyEventRecord, KeyPatch, KeyStore, SqlKeyEventRow, SqlModelSpendRow } from "@tollgate/core";
import type { Migration } from "./migrations.js";
import type { Queryable } from "./queryable.js";
import { checkAmount, dec, enc, KEY_COLS, modelBudgetsJson, parseRow, rowJson, toKey, type KeyRow, type TableName } from "./rows.js";

/**
 * Migration 11 (the same number as `@tollgate/sqlite`). `models` and `model_budgets` are `json`,
 * not `jsonb`, as every JSON column of this store: nothing queries inside them, and `jsonb`
 * refuses the `\u0000` escape a model id or a key name in an event's changes may carry.
 */
export const GOVERNANCE_MIGRATIONS: readonly Migration[] = [
  {
    version: 11,
    name: "key governance: budget periods, model allowlists and caps, token rotation, key events",
    sql: `
      ALTER TABLE keys
        ADD COLUMN budget_period text CHECK (budget_period IN ('daily', 'weekly', 'monthly')),
        ADD COLUMN period_start bigint,
        ADD COLUMN models json CHECK (json_typeof(models) = 'array'),
        ADD COLUMN model_budgets json CHECK (json_typeof(model_budgets) = 'object'),
        ADD COLUMN previous_token_hash text,
        ADD COLUMN previous_token_valid_until bigint;
      CREATE UNIQUE INDEX keys_previous_token ON keys (previous_token_hash) WHERE previous_token_hash IS NOT NULL;
      ALTER TABLE intents ADD COLUMN budget_scope text;

      CREATE TABLE key_model_spend (
        key_id          text COLLATE "C" NOT NULL REFERENCES keys (key_id),
        scope           text COLLATE "C" NOT NULL,
        budget_used     numeric(78, 0) NOT NULL CHECK (budget_used >= 0),
        budget_reserved numeric(78, 0) NOT NULL CHECK (budget_reserved >= 0),
        period_start    bigint,
        CONSTRAINT key_model_spend_pkey PRIMARY KEY (key_id, scope)
      );

      CREATE TABLE key_events (
        event_id text COLLATE "C" PRIMARY KEY,
        key_id   text COLLATE "C" NOT NULL REFERENCES keys (key_id),
        at       bigint NOT NULL,
        type     text NOT NULL CHECK (type IN ('update', 'rotate')),
        actor    text NOT NULL,
        changes  json NOT NULL
      );
      CREATE INDEX key_events_by_key ON key_events (key_id, at DESC, event_id DESC);
    `,
  },
];

/** The placeholders of the three window starts at `now` (bound from {@link windowValues}). */
export interface WindowPlaceholders {
  day: string;
  week: string;
  month: string;
}

/** Window placeholders `$first` (day), `$first+1` (week), `$first+2` (month). */
export function windowPlaceholders(first: number): WindowPlaceholders {
  return { day: `$${first}`, week: `$${first + 1}`, month: `$${first + 2}` };
}

/**
 * The values of {@link windowPlaceholders} at `now`: the daily, weekly and monthly window starts
 * (UTC). A `now` beyond the Date range (callers pass Number.MAX_SAFE_INTEGER as "the end of time")
 * has no window: the lowest safe integer then, so that no window lapses, as in the memory store.
 */
export function windowValues(now: number): [number, number, number] {
  const { day, week, month } = windowStarts(now);
  const at = (start: number) => (Number.isFinite(start) ? start : Number.MIN_SAFE_INTEGER);
  return [at(day), at(week), at(month)];
}

/** SQL: the start of the current window of the period in `period` (meaningless when it is NULL). */
export function windowSql(period: string, w: WindowPlaceholders): string {
  return `CASE ${period} WHEN 'daily' THEN ${w.day}::bigint WHEN 'weekly' THEN ${w.week}::bigint ELSE ${w.month}::bigint END`;
}

/** SQL: true when `period` is set and the window starting at `start` has lapsed (a NULL start has). */
export function lapsedSql(period: string, start: string, w: WindowPlaceholders): string {
  return `(${period} IS NOT NULL AND COALESCE(${start}, 0) < ${windowSql(period, w)})`;
}

/**
 * SET items of an UPDATE of a key or counter row `row` whose window follows `period` (the key's):
 * `budget_used` rolled (0 when lapsed) plus `add`, and `period_start` rolled.
 */
export function rollSet(row: string, period: string, w: WindowPlaceholders, add = ""): string {
  const lapsed = lapsedSql(period, `${row}.period_start`, w);
  return `budget_used = CASE WHEN ${lapsed} THEN 0 ELSE ${row}.budget_used END${add},
        period_start = CASE WHEN ${lapsed} THEN ${windowSql(period, w)} ELSE ${row}.period_start END`;
}

/**
 * CTE `scope_rel`: releases from the per-model counters what the intents of the CTE `expired`
 * (RETURNING key_id, max_amount, budget_scope) held, rolling each row. `keys` is a CTE of their
 * keys, already locked (key_id, budget_period). `except`: a scope placeholder the caller updates
 * itself (a row is changed once per statement).
 */
export function scopeReleaseCte(spend: string, keys: string, w: WindowPlaceholders, except?: string): string {
  return `
    scope_rel AS (
      UPDATE ${spend} s SET budget_reserved = s.budget_reserved - r.amount, ${rollSet("s", "kr.budget_period", w)}
      FROM (SELECT key_id, budget_scope, sum(max_amount) AS amount FROM expired
            WHERE budget_scope IS NOT NULL${except ? ` AND budget_scope <> ${except}::text` : ""} GROUP BY key_id, budget_scope) r,
        ${keys} kr
      WHERE s.key_id = r.key_id AND s.scope = r.budget_scope AND kr.key_id = r.key_id
    )`;
}

/**
 * The per-model part of a scoped reserve, after the key step's `calc` (key locked, its guard in
 * `fits`, its period and window in `period`/`win`) and `expired`. $3 amount, `scope`/`limit` the
 * placeholders of the scope and its cap. `sl` locks the scope's counter row (its latest version);
 * `sc` evaluates the cap on it, rolled, with what `expired` released from it; `scu` writes the
 * row, or `sci` creates it when the reservation fits and no row is visible. A row created by a
 * concurrent statement after this one began is invisible to `sl` but not to the primary key: the
 * insert then fails, the statement changes nothing, and the caller re-runs it.
 */
export function scopeReserveCtes(spend: string, w: WindowPlaceholders, scope: string, limit: string): string {
  return `
    sl AS MATERIALIZED (
      SELECT s.* FROM ${spend} s, calc WHERE s.key_id = calc.key_id AND s.scope = ${scope}::text FOR NO KEY UPDATE OF s
    ),
    sc AS MATERIALIZED (
      SELECT calc.key_id, sl.key_id IS NOT NULL AS present, COALESCE(r.amount, 0) AS released, x.lapsed,
        calc.fits AND ${limit}::numeric - CASE WHEN x.lapsed THEN 0 ELSE COALESCE(sl.budget_used, 0) END
          - (COALESCE(sl.budget_reserved, 0) - COALESCE(r.amount, 0)) >= $3::numeric AS fits
      FROM calc
        LEFT JOIN sl ON true
        CROSS JOIN (SELECT sum(max_amount) AS amount FROM expired WHERE budget_scope = ${scope}::text) r
        CROSS JOIN LATERAL (SELECT ${lapsedSql("calc.period", "sl.period_start", w)} AS lapsed) x
    ),
    scu AS (
      UPDATE ${spend} s SET budget_reserved = s.budget_reserved - sc.released + CASE WHEN sc.fits THEN $3::numeric ELSE 0 END,
        ${rollSet("s", "calc.period", w)}
      FROM sc, calc
      WHERE s.key_id = sc.key_id AND s.scope = ${scope}::text AND sc.present AND (sc.fits OR sc.released > 0)
    ),
    sci AS (
      INSERT INTO ${spend} (key_id, scope, budget_used, budget_reserved, period_start)
      SELECT sc.key_id, ${scope}::text, 0, $3::numeric, CASE WHEN calc.period IS NOT NULL THEN calc.win END
      FROM sc, calc WHERE NOT sc.present AND sc.fits
    )`;
}

/** The result row of updateKey: the key as locked and as updated (null: refused), JSON. */
interface UpdateRow {
  before: string | null;
  after: string | null;
}

const EVENT_COLS = "event_id, key_id, at::text AS at, type, actor, changes::text AS changes";
const SPEND_COLS = "key_id, scope, budget_used::text AS budget_used, budget_reserved::text AS budget_reserved, period_start::text AS period_start";

/** The values of an event insert (event id, at, type, actor, changes JSON), in the order of `insertEvent`. */
const eventValues = (e: KeyEventRecord) => [e.eventId, e.at, e.type, e.actor, JSON.stringify(e.changes)];

/** A patch field: [whether it is set, its value or NULL]. */
const field = <T>(value: T | null | undefined, map: (v: T) => unknown = (v) => v): [boolean, unknown] =>
  value === undefined ? [false, null] : [true, value === null ? null : map(value)];

/** The governance operations of {@link KeyStore} on PostgreSQL (getKeyByTokenHash is in keys.ts). */
export function createGovernanceOps(db: Queryable, t: TableName): Pick<KeyStore, "updateKey" | "rotateKey" | "listKeyEvents" | "getModelSpend"> {
  const [keys, spend, events] = [t("keys"), t("key_model_spend"), t("key_events")];
  const w = windowPlaceholders(2);
  const insertEvent = (first: number) => `
    ev AS (
      INSERT INTO ${events} (event_id, key_id, at, type, actor, changes)
      SELECT $${first}::text, upd.key_id, $${first + 1}::bigint, $${first + 2}::text, $${first + 3}::text, $${first + 4}::json FROM upd
    )`;

  /**
   * $1 key id, $2…$4 the windows at now, then per field [set, value]: $5/$6 name, $7 budget limit
   * (NULL: unchanged), $8 expiresAt (NULL: unchanged), $9/$10 period, $11/$12 models,
   * $13/$14 model budgets, $15/$16 rate limit; $17…$21 the event. `k` locks the key; `calc`
   * applies the patch to the rolled window (a period set or changed starts a fresh one, used 0);
   * `upd` writes it when the limit covers used + reserved, the budget columns all from the locked
   * version (see ledger-sql.ts `spendOn` on CHECK constraints and older versions); `ev` records
   * the event and `sp` restarts the per-model counters with the new window, both after `upd`.
   */
  const update = `
    WITH k AS MATERIALIZED (SELECT * FROM ${keys} WHERE key_id = $1::text FOR NO KEY UPDATE),
    p AS MATERIALIZED (
      SELECT k.key_id, k.budget_reserved, k.budget_used, k.period_start,
        CASE WHEN $9::boolean THEN $10::text ELSE k.budget_period END AS period,
        $9::boolean AND $10::text IS NOT NULL AND $10::text IS DISTINCT FROM k.budget_period AS changed,
        ${lapsedSql("k.budget_period", "k.period_start", w)} AS lapsed,
        COALESCE($7::numeric, k.budget_limit) AS lim
      FROM k
    ),
    calc AS MATERIALIZED (
      SELECT p.key_id, p.period, p.changed, p.lim, p.budget_reserved,
        CASE WHEN p.changed OR p.lapsed THEN 0 ELSE p.budget_used END AS used,
        CASE WHEN p.period IS NULL THEN NULL WHEN p.changed OR p.lapsed THEN ${windowSql("p.period", w)} ELSE p.period_start END AS start
      FROM p
    ),
    upd AS (
      UPDATE ${keys} kk SET
        name = CASE WHEN $5::boolean THEN $6::text ELSE kk.name END,
        budget_limit = calc.lim,
        expires_at = COALESCE($8::bigint, kk.expires_at),
        budget_period = calc.period,
        period_start = calc.start,
        budget_used = calc.used,
        budget_reserved = calc.budget_reserved,
        models = CASE WHEN $11::boolean THEN $12::json ELSE kk.models END,
        model_budgets = CASE WHEN $13::boolean THEN $14::json ELSE kk.model_budgets END,
        rate_limit_rpm = CASE WHEN $15::boolean THEN $16::integer ELSE kk.rate_limit_rpm END
      FROM calc WHERE kk.key_id = calc.key_id AND calc.lim >= calc.used + calc.budget_reserved
      RETURNING kk.*
    ),
    ${insertEvent(17)},
    sp AS (
      UPDATE ${spend} s SET budget_used = 0, period_start = upd.period_start
      FROM upd, calc WHERE s.key_id = upd.key_id AND calc.changed
    )
    SELECT ${rowJson(KEY_COLS, "k")} AS before, ${rowJson(KEY_COLS, "upd")} AS after`;

  /** $1 key id, $2 new token hash, $3 previous valid until, $4…$8 the event. One UPDATE and the event insert. */
  const rotate = `
    WITH upd AS (
      UPDATE ${keys} SET previous_token_hash = token_hash, previous_token_valid_until = $3::bigint, token_hash = $2::text
      WHERE key_id = $1::text
      RETURNING *
    ),
    ${insertEvent(4)}
    SELECT ${KEY_COLS} FROM upd`;

  const eventPage = `
    SELECT ${EVENT_COLS} FROM ${events} x
    WHERE key_id = $1::text AND ($2::bigint IS NULL OR at < $2::bigint OR (at = $2::bigint AND event_id < $3::text))
    ORDER BY x.at DESC, x.event_id DESC
    LIMIT $4::int`;

  return {
    /** One statement (see `update` above): the patch, the window restart and the event land together or not at all. */
    async updateKey({ keyId, patch, now, event }) {
      const p: KeyPatch = patch;
      const values = [
        keyId,
        ...windowValues(now),
        ...field(p.name, (v) => enc(v)),
        p.budgetLimit === undefined ? null : checkAmount(p.budgetLimit, "budgetLimit"),
        p.expiresAt ?? null,
        ...field(p.budgetPeriod),
        ...field(p.models, (v) => JSON.stringify(v)),
        ...field(p.modelBudgets, (v) => modelBudgetsJson(v)),
        ...field(p.rateLimit, (v) => v.requestsPerMinute),
        ...eventValues(event),
      ];
      const { rows } = await db.query<UpdateRow>(update, values);
      const before = parseRow<KeyRow>(rows[0]?.before);
      const after = parseRow<KeyRow>(rows[0]?.after);
      if (after) return { ok: true, key: toKey(after) };
      if (!before) return { ok: false, reason: "not_found" };
      return { ok: false, reason: "below_committed", key: rolled(toKey(before), now) };
    },

    /** One statement: the token swap (the row lock orders concurrent rotations) and its event. */
    async rotateKey({ keyId, tokenHash, previousValidUntil, event }) {
      const { rows } = await db.query<KeyRow>(rotate, [keyId, tokenHash, previousValidUntil, ...eventValues(event)]);
      return rows[0] ? toKey(rows[0]) : null;
    },

    async listKeyEvents(keyId, { limit, cursor }) {
      const { rows } = await db.query<SqlKeyEventRow<string>>(eventPage, [keyId, cursor?.at ?? null, cursor?.eventId ?? null, pageQuerySize(limit)]);
      const { items, more } = keysetPage(rows, limit, keyEventFromRow);
      return { events: items, nextCursor: more && { at: more.at, eventId: more.eventId } };
    },

    /** The scope is stored with {@link enc} (free text), so it is decoded after the core mapper. */
    async getModelSpend(keyId) {
      const { rows } = await db.query<SqlModelSpendRow<string>>(`SELECT ${SPEND_COLS} FROM ${spend} x WHERE key_id = $1::text ORDER BY x.scope`, [keyId]);
      return rows.map((r) => Object.assign(modelSpendFromRow(r), { scope: dec(r.scope) }));
    },
  };
}
