/**
 * Key governance on SQLite: the SQL fragments that roll a lapsed budget window forward inside the
 * ledger's guarded statements, the per-model (scope) counters, and the key update, rotation and
 * event operations. Windows are calendar windows in UTC (`windowStarts` of `@tollgate/core`),
 * bound as `@day`, `@week` and `@month`; no statement reads the clock.
 */
import type Database from "better-sqlite3";
import { isLiveKey, keyEventFromRow, keyFromRow, keysetPage, modelSpendFromRow, pageQuerySize, rolled, tooManyKeys, windowStart, windowStarts } from "@tollgate/core";
import type { KeyEventRecord, KeyPatch, KeyRecord, KeyStore, SqlKeyEventRow, SqlModelSpendRow } from "@tollgate/core";
import type { GroupCommit } from "./group-commit.js";
import type { Migration } from "./migrations.js";
import { checkAmount, keyParams, MAX_INT64, type KeyRow } from "./rows.js";
import { LIVE_KEYS_SQL } from "./keys.js";

/** Schema of key governance (migration version 11, the same number and columns as PostgreSQL's). */
export const GOVERNANCE_MIGRATIONS: readonly Migration[] = [
  {
    version: 11,
    name: "key governance: budget windows, model allow-list and caps, token rotation, key events",
    // Amounts are INTEGER like the keys table's (rows.ts); `models` and `model_budgets` are JSON
    // text (the caps as decimal strings). The previous token stays unique while it is kept.
    sql: `
      ALTER TABLE keys ADD COLUMN budget_period TEXT CHECK (budget_period IN ('daily', 'weekly', 'monthly'));
      ALTER TABLE keys ADD COLUMN period_start INTEGER;
      ALTER TABLE keys ADD COLUMN models TEXT;
      ALTER TABLE keys ADD COLUMN model_budgets TEXT;
      ALTER TABLE keys ADD COLUMN previous_token_hash TEXT;
      ALTER TABLE keys ADD COLUMN previous_token_valid_until INTEGER;
      CREATE UNIQUE INDEX keys_previous_token ON keys (previous_token_hash) WHERE previous_token_hash IS NOT NULL;

      ALTER TABLE intents ADD COLUMN budget_scope TEXT;

      CREATE TABLE key_model_spend (
        key_id          TEXT NOT NULL REFERENCES keys (key_id),
        scope           TEXT NOT NULL,
        budget_used     INTEGER NOT NULL CHECK (budget_used >= 0),
        budget_reserved INTEGER NOT NULL CHECK (budget_reserved >= 0),
        period_start    INTEGER,
        PRIMARY KEY (key_id, scope)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE key_events (
        event_id TEXT PRIMARY KEY,
        key_id   TEXT NOT NULL REFERENCES keys (key_id),
        at       INTEGER NOT NULL,
        type     TEXT NOT NULL CHECK (type IN ('update', 'rotate')),
        actor    TEXT NOT NULL,
        changes  TEXT NOT NULL
      ) STRICT;
      CREATE INDEX key_events_by_key ON key_events (key_id, at DESC, event_id DESC);
    `,
  },
];

/** The current window's start for the row's `budget_period`; NULL for a key without a period. */
const WINDOW = "(CASE budget_period WHEN 'daily' THEN @day WHEN 'weekly' THEN @week WHEN 'monthly' THEN @month END)";
const LAPSED = `(budget_period IS NOT NULL AND COALESCE(period_start, 0) < ${WINDOW})`;

/**
 * `budget_used` of a `keys` row as of now: 0 when its window has lapsed. Used in the guards
 * (`budget_limit - ${USED_NOW} - budget_reserved >= @amount`) and in the SET of spending steps.
 */
export const USED_NOW = `(CASE WHEN ${LAPSED} THEN 0 ELSE budget_used END)`;

/**
 * The open-intent cap of a reserve, on a `keys` row: it holds fewer authorized intents than
 * `@open_limit` (NULL: no cap). `open_intents` is moved by the same steps that move intents in and
 * out of `authorized` (ledger.ts), so this guard is exact.
 */
export const OPEN_FITS = "(@open_limit IS NULL OR open_intents < @open_limit)";

/** SET clause of a spending step: moves a lapsed window of a `keys` row to the current one (pair it with {@link USED_NOW}). */
export const ROLL_START = `period_start = CASE WHEN ${LAPSED} THEN ${WINDOW} ELSE period_start END`;

let cachedNow = Number.NaN;
let cachedStarts = windowStarts(0);

/** The `@day`, `@week`, `@month` parameters of the statements using {@link USED_NOW} and {@link ROLL_START}. */
export function windowParams(now: number): { day: number; week: number; month: number } {
  if (now !== cachedNow) {
    cachedStarts = windowStarts(now);
    cachedNow = now;
  }
  return cachedStarts;
}

/** Scope counters roll with the key's window `@w` (NULL: the key has no period, nothing rolls). */
const scopeLapsed = (w: string) => `(${w} IS NOT NULL AND COALESCE(period_start, 0) < ${w})`;

/** The per-model counters used by the ledger's steps (always inside a step's transaction). */
export interface ScopeCounters {
  /**
   * The guarded reservation of `amount` on scope `scope` of a key: true when the key passes the
   * reserve guard (unrevoked, unexpired, rolled budget fits, {@link OPEN_FITS}) AND the scope's rolled counters fit
   * `limit`; then the scope row is created or rolled and takes the reservation. False: nothing changed.
   */
  reserve(p: { key_id: string; scope: string; amount: bigint; limit: bigint; now: number; open_limit: number | null }): boolean;
  /** Moves `max` out of the scope's reserved and `final` into its used (rolled with the key's window). */
  finish(key: Pick<KeyRow, "key_id" | "budget_period">, scope: string, max: bigint, final: bigint, now: number): void;
}

/** Prepares the statements of {@link ScopeCounters}. */
export function createScopeCounters(db: Database.Database): ScopeCounters {
  // The key guard sits in the SELECT: no key row, no insert and no update. The DO UPDATE's WHERE is
  // the scope guard. `excluded.period_start` is the key's current window (NULL without a period).
  const reserve = db.prepare<Record<string, unknown>, { budget_reserved: bigint }>(`
    INSERT INTO key_model_spend (key_id, scope, budget_used, budget_reserved, period_start)
    SELECT key_id, @scope, 0, @amount, ${WINDOW} FROM keys
    WHERE key_id = @key_id AND revoked_at IS NULL AND expires_at > @now
      AND budget_limit - ${USED_NOW} - budget_reserved >= @amount AND ${OPEN_FITS} AND @limit >= @amount
    ON CONFLICT (key_id, scope) DO UPDATE SET
      budget_used = CASE WHEN ${scopeLapsed("excluded.period_start")} THEN 0 ELSE budget_used END,
      period_start = CASE WHEN ${scopeLapsed("excluded.period_start")} THEN excluded.period_start ELSE period_start END,
      budget_reserved = budget_reserved + @amount
    WHERE @limit - (CASE WHEN ${scopeLapsed("excluded.period_start")} THEN 0 ELSE budget_used END) - budget_reserved >= @amount
    RETURNING budget_reserved`);
  const finish = db.prepare<{ key_id: string; scope: string; max: bigint; final: bigint; w: number | null }>(`
    UPDATE key_model_spend SET
      budget_used = CASE WHEN ${scopeLapsed("@w")} THEN 0 ELSE budget_used END + @final,
      period_start = CASE WHEN ${scopeLapsed("@w")} THEN @w ELSE period_start END,
      budget_reserved = budget_reserved - @max
    WHERE key_id = @key_id AND scope = @scope`);
  return {
    reserve: (p) => reserve.get(Object.assign({}, p, { limit: p.limit < 0n ? -1n : p.limit > MAX_INT64 ? MAX_INT64 : p.limit }, windowParams(p.now))) !== undefined,
    finish(key, scope, max, final, now) {
      const w = key.budget_period == null ? null : windowStart(key.budget_period as NonNullable<KeyRecord["budgetPeriod"]>, now);
      finish.run({ key_id: key.key_id, scope, max, final, w });
    },
  };
}

/** `key` (already rolled to `now`) with `patch` applied; a set or changed period starts a fresh window. */
function patched(key: KeyRecord, patch: KeyPatch, now: number): { next: KeyRecord; freshWindow: boolean } {
  const next: KeyRecord = Object.assign({}, key);
  const set = <K extends keyof KeyRecord>(field: K, value: KeyRecord[K] | null | undefined) => {
    if (value === null) delete next[field];
    else if (value !== undefined) next[field] = value;
  };
  set("name", patch.name);
  set("budgetLimit", patch.budgetLimit);
  set("expiresAt", patch.expiresAt);
  set("models", patch.models);
  set("modelBudgets", patch.modelBudgets);
  set("rateLimit", patch.rateLimit);
  const freshWindow = patch.budgetPeriod != null && patch.budgetPeriod !== key.budgetPeriod;
  if (patch.budgetPeriod === null) {
    delete next.budgetPeriod;
    delete next.periodStart;
  } else if (freshWindow && patch.budgetPeriod) {
    next.budgetPeriod = patch.budgetPeriod;
    next.periodStart = windowStart(patch.budgetPeriod, now);
    next.budgetUsed = 0n;
  }
  return { next, freshWindow };
}

type GovernanceOps = Pick<KeyStore, "updateKey" | "rotateKey" | "listKeyEvents" | "getModelSpend">;

/**
 * `updateKey`, `rotateKey` (each one group-commit step: the key's write and its event land
 * together), `listKeyEvents` and `getModelSpend`.
 */
export function createGovernanceOps(db: Database.Database, group: GroupCommit): GovernanceOps {
  const keyById = db.prepare<[string], KeyRow>("SELECT * FROM keys WHERE key_id = ?");
  const liveOfOwner = db.prepare<{ owner: string; at: number }, { n: number | bigint }>(LIVE_KEYS_SQL);
  // Under the step's write lock, so the read above and this write cannot interleave with another writer.
  const writeKey = db.prepare<Record<string, unknown>, KeyRow>(`
    UPDATE keys SET name = @name, budget_limit = @budget_limit, budget_used = @budget_used, expires_at = @expires_at,
      rate_limit_rpm = @rate_limit_rpm, budget_period = @budget_period, period_start = @period_start, models = @models, model_budgets = @model_budgets
    WHERE key_id = @key_id RETURNING *`);
  const freshScopes = db.prepare<{ key_id: string; period_start: number | null }>(
    "UPDATE key_model_spend SET budget_used = 0, period_start = @period_start WHERE key_id = @key_id",
  );
  const rotate = db.prepare<{ key_id: string; token_hash: string; until: number }, KeyRow>(`
    UPDATE keys SET previous_token_hash = token_hash, previous_token_valid_until = @until, token_hash = @token_hash
    WHERE key_id = @key_id RETURNING *`);
  const tokenTaken = db.prepare<{ token_hash: string }, { one: bigint }>(
    "SELECT 1 AS one FROM keys WHERE token_hash = @token_hash OR previous_token_hash = @token_hash LIMIT 1",
  );
  const insertEvent = db.prepare<Record<string, unknown>>(
    "INSERT INTO key_events (event_id, key_id, at, type, actor, changes) VALUES (@event_id, @key_id, @at, @type, @actor, @changes)",
  );
  const eventPage = db.prepare<{ key_id: string; cursor_at: number | null; cursor_id: string | null; limit: number }, SqlKeyEventRow<bigint>>(`
    SELECT * FROM key_events WHERE key_id = @key_id
      AND (@cursor_at IS NULL OR at < @cursor_at OR (at = @cursor_at AND event_id < @cursor_id))
    ORDER BY at DESC, event_id DESC LIMIT @limit`);
  const spendOfKey = db.prepare<[string], SqlModelSpendRow<bigint>>("SELECT * FROM key_model_spend WHERE key_id = ? ORDER BY scope");

  // Serialised before the step, so a value that is not JSON rejects its caller without touching the group.
  const eventParams = (e: KeyEventRecord) => ({
    event_id: e.eventId,
    key_id: e.keyId,
    at: e.at,
    type: e.type,
    actor: e.actor,
    changes: JSON.stringify(e.changes),
  });

  return {
    async updateKey({ keyId, patch, now, event, liveLimit }) {
      if (patch.budgetLimit !== undefined) checkAmount(patch.budgetLimit, "budgetLimit");
      const ev = eventParams(event);
      return group.run(() => {
        const row = keyById.get(keyId);
        if (!row) return { ok: false, reason: "not_found" } as const;
        const current = rolled(keyFromRow(row), now);
        const { next, freshWindow } = patched(current, patch, now);
        if (next.budgetLimit < next.budgetUsed + next.budgetReserved) return { ok: false, reason: "below_committed", key: current } as const;
        const saved = writeKey.get(keyParams(next)) as KeyRow;
        // Counted after the write, under the write lock: throwing rolls the step back.
        if (liveLimit !== undefined && !isLiveKey(current, now) && isLiveKey(next, now) && Number(liveOfOwner.get({ owner: current.owner, at: now })!.n) > liveLimit)
          throw tooManyKeys(current.owner, liveLimit);
        if (freshWindow) freshScopes.run({ key_id: keyId, period_start: next.periodStart ?? null });
        insertEvent.run(ev);
        return { ok: true, key: keyFromRow(saved) } as const;
      });
    },

    async rotateKey({ keyId, tokenHash, previousValidUntil, event }) {
      const ev = eventParams(event);
      return group.run(() => {
        // A token must not match any other key's current or previous one (UNIQUE covers each column alone).
        const taken = tokenTaken.get({ token_hash: tokenHash }) !== undefined;
        const row = rotate.get({ key_id: keyId, token_hash: tokenHash, until: previousValidUntil });
        if (!row) return null;
        if (taken) throw new Error("sqlite store: duplicate tokenHash");
        insertEvent.run(ev);
        return keyFromRow(row);
      });
    },

    async listKeyEvents(keyId, { limit, cursor }) {
      const rows = eventPage.all({ key_id: keyId, cursor_at: cursor?.at ?? null, cursor_id: cursor?.eventId ?? null, limit: pageQuerySize(limit) });
      const { items: events, more } = keysetPage(rows, limit, (r) => keyEventFromRow(r));
      return { events, nextCursor: more && { at: more.at, eventId: more.eventId } };
    },

    async getModelSpend(keyId) {
      return spendOfKey.all(keyId).map((r) => modelSpendFromRow(r));
    },
  };
}
