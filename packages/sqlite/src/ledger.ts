/**
 * {@link LedgerStore} on SQLite. Every guarded operation is one step around a conditional UPDATE
 * whose WHERE clause is the guard, checked through `RETURNING` (no row back = guard missed). The
 * steps of one event-loop turn commit together in one `BEGIN IMMEDIATE` transaction (group-commit.ts:
 * the write lock is taken before the first read, so no other connection or process can
 * interleave; each step runs in its own savepoint; every caller is answered after the COMMIT).
 * The happy path reads nothing before its guarded UPDATE: a key is looked up only to explain a miss.
 * Every statement that adds to `budget_used` first rolls a lapsed budget window forward in the same
 * statement (governance.ts: `USED_NOW`, `ROLL_START`); an intent with a `budget_scope` moves its
 * scope's counters in the same step. Every statement that moves intents into or out of `authorized`
 * moves the key's `open_intents` by as many (the count a reserve's `openLimit` is checked against).
 */
import type Database from "better-sqlite3";
import {
  authorizedIntent,
  filtersIntents,
  INTENT_LIST_OPEN,
  intentFromRow,
  intentListPage,
  scanEdge,
  intentScan,
  keyBudgetFromRow,
  keyFromRow,
  pageQuerySize,
  rolled,
} from "@tollgate/core";
import type {
  ChargeDirectResult,
  ChargeRecord,
  FinishResult,
  IntentRecord,
  KeyGuardReason,
  KeyRecord,
  LedgerStore,
  NewIntent,
  ReserveResult,
  VideoJobRecord,
} from "@tollgate/core";
import { chargeParams, checkAmount, MAX_INT64, objectRows, toJson, type BudgetRow, type IntentRow, type KeyRow } from "./rows.js";
import { videoJobInserter } from "./video.js";
import type { GroupCommit } from "./group-commit.js";
import { createScopeCounters, OPEN_FITS, ROLL_START, USED_NOW, windowParams } from "./governance.js";

/** What releasing a finished intent needs: expiry, settle and abort return only this. */
type Released = { key_id: string; max_amount: bigint; budget_scope: string | null };

/** The columns of a key's budget a guarded step returns (`keyBudgetFromRow` reads them). */
const BUDGET_COLS = "key_id, budget_limit, budget_used, budget_reserved, budget_period, period_start";

const EXPIRE = "UPDATE intents SET status = 'expired', released_amount = max_amount, finished_at = @now";
const RELEASED = "RETURNING key_id, max_amount, budget_scope";

/**
 * The statements over many intents, whose query plans matter as the table grows (plans.test.ts):
 * the owner's page of intents (newest first), the expiry of a key's overdue intents, and the
 * sweeper's expiry of the oldest overdue intents.
 */
export const INTENT_SQL = {
  page: `SELECT * FROM intents WHERE owner = @owner
      AND (created_at, intent_id) < (@before_created, @before_id) AND (created_at, intent_id) >= (@from_created, @from_id)
      AND (@chain_id IS NULL OR chain_id = @chain_id) AND (@key_id IS NULL OR key_id = @key_id)
      AND (@status IS NULL OR CASE WHEN status = 'authorized' AND expires_at <= @now THEN 'expired' ELSE status END = @status)
    ORDER BY created_at DESC, intent_id DESC LIMIT @limit`,
  /** The last intent a filtered page may examine (the first of the two rows), read from the owner index alone. */
  pageBoundary: `SELECT created_at, intent_id FROM intents WHERE owner = @owner AND (created_at, intent_id) < (@before_created, @before_id)
    ORDER BY created_at DESC, intent_id DESC LIMIT 2 OFFSET @skip`,
  expireDueOfKey: `${EXPIRE} WHERE key_id = @key_id AND status = 'authorized' AND expires_at <= @now ${RELEASED}`,
  expireDue: `${EXPIRE}
    WHERE intent_id IN (SELECT intent_id FROM intents WHERE status = 'authorized' AND expires_at <= @now ORDER BY expires_at, intent_id LIMIT @limit)
    ${RELEASED}`,
} as const;

/** Reserve, settle, abort, direct charges and expiry of payment intents. */
export function createLedgerOps(db: Database.Database, group: GroupCommit): LedgerStore {
  const keyById = db.prepare<[string], KeyRow>("SELECT * FROM keys WHERE key_id = ?");
  const intentById = db.prepare<[string], IntentRow>("SELECT * FROM intents WHERE intent_id = ?");
  type PageAt = { owner: string; before_created: number; before_id: string };
  type PageFilter = {
    from_created: number;
    from_id: string;
    chain_id: number | null;
    key_id: string | null;
    status: string | null;
    now: number | null;
    limit: number;
  };
  const intentPage = db.prepare<PageAt & PageFilter, IntentRow>(INTENT_SQL.page);
  const intentPageBoundary = db.prepare<PageAt & { skip: number }, { created_at: number | bigint; intent_id: string }>(INTENT_SQL.pageBoundary);
  const intentByIdempotency = db.prepare<[string, string], IntentRow>("SELECT * FROM intents WHERE key_id = ? AND idempotency_key = ?");
  const expireDueOfKey = db.prepare<{ now: number; key_id: string }, Released>(INTENT_SQL.expireDueOfKey);
  const expireOne = db.prepare<{ now: number; intent_id: string }, Released>(
    `${EXPIRE} WHERE intent_id = @intent_id AND status = 'authorized' AND expires_at <= @now ${RELEASED}`,
  );
  const expireDue = db.prepare<{ now: number; limit: number }, Released>(INTENT_SQL.expireDue);
  type Windows = ReturnType<typeof windowParams>;
  /**
   * Moves `max` out of reserved and `final` into used (settle, abort with final 0, expiry with
   * final 0), in the rolled window, and `n` finished intents out of the open count (never below
   * 0: an intent opened by a process older than migration 13 was never counted, and finishing it
   * must not fail).
   */
  const unreserve = objectRows(
    db.prepare<{ key_id: string; max: bigint; final: bigint; n: number } & Windows, BudgetRow>(`
    UPDATE keys SET budget_reserved = budget_reserved - @max, budget_used = ${USED_NOW} + @final, open_intents = max(open_intents - @n, 0), ${ROLL_START}
    WHERE key_id = @key_id RETURNING ${BUDGET_COLS}`),
  );
  // The guard counts a lapsed window's used as 0, and the same statement rolls it forward.
  const GUARD = `key_id = @key_id AND revoked_at IS NULL AND expires_at > @now AND budget_limit - ${USED_NOW} - budget_reserved >= @amount`;
  // A reserve also opens an intent: the key must hold fewer than @open_limit (NULL: no cap).
  const reserveOnKey = objectRows(
    db.prepare<{ key_id: string; amount: bigint; now: number; open_limit: number | null } & Windows, BudgetRow & Pick<KeyRow, "owner" | "chain_id">>(`
    UPDATE keys SET budget_reserved = budget_reserved + @amount, open_intents = open_intents + 1, last_used_at = @now, budget_used = ${USED_NOW}, ${ROLL_START}
    WHERE ${GUARD} AND ${OPEN_FITS} RETURNING owner, chain_id, ${BUDGET_COLS}`),
  );
  const chargeOnKey = objectRows(
    db.prepare<{ key_id: string; amount: bigint; now: number } & Windows, KeyRow>(`
    UPDATE keys SET budget_used = ${USED_NOW} + @amount, last_used_at = @now, ${ROLL_START}
    WHERE ${GUARD} RETURNING *`),
  );
  const scopes = createScopeCounters(db);
  const insertIntent = db.prepare<Record<string, unknown>>(`
    INSERT INTO intents (intent_id, key_id, owner, chain_id, status, max_amount, idempotency_key, budget_scope, fingerprint, request, created_at, expires_at)
    VALUES (@intent_id, @key_id, @owner, @chain_id, 'authorized', @max_amount, @idempotency_key, @budget_scope, @fingerprint, @request, @created_at, @expires_at)`);
  const settleIntent = objectRows(
    db.prepare<{ intent_id: string; final: bigint; result: string | null; now: number }, Released>(`
    UPDATE intents SET status = 'settled', final_amount = @final, released_amount = max_amount - @final, result = @result, finished_at = @now
    WHERE intent_id = @intent_id AND status = 'authorized' AND expires_at > @now AND max_amount >= @final
    ${RELEASED}`),
  );
  const abortIntent = objectRows(
    db.prepare<{ intent_id: string; reason: string; result: string | null; now: number }, Released>(`
    UPDATE intents SET status = 'aborted', released_amount = max_amount, reason = @reason, result = @result, finished_at = @now
    WHERE intent_id = @intent_id AND status = 'authorized' AND expires_at > @now
    ${RELEASED}`),
  );
  const insertCharge = db.prepare(`
    INSERT INTO charges (charge_id, intent_id, key_id, owner, chain_id, amount, status, created_at, tx_hash, error, batch_id, lease_until, settled_at)
    VALUES (@charge_id, @intent_id, @key_id, @owner, @chain_id, @amount, @status, @created_at, @tx_hash, @error, @batch_id, @lease_until, @settled_at)`);
  const insertVideoJob = videoJobInserter(db);

  /** Gives the reservations of just-expired intents back to their keys (and to their scopes). */
  function release(rows: readonly Released[], now: number): number {
    // The common case (a reserve's expiry pass finds nothing overdue) builds nothing.
    if (rows.length === 0) return 0;
    const perKey = new Map<string, { max: bigint; n: number; scopes: Map<string, bigint> }>();
    for (const r of rows) {
      const entry = perKey.get(r.key_id) ?? { max: 0n, n: 0, scopes: new Map<string, bigint>() };
      entry.max += r.max_amount;
      entry.n++;
      if (r.budget_scope !== null) entry.scopes.set(r.budget_scope, (entry.scopes.get(r.budget_scope) ?? 0n) + r.max_amount);
      perKey.set(r.key_id, entry);
    }
    for (const [key_id, { max, n, scopes: perScope }] of perKey) {
      const key = unreserve.get({ key_id, max, final: 0n, n, ...windowParams(now) })!;
      for (const [scope, scoped] of perScope) scopes.finish(key, scope, scoped, 0n, now);
    }
    return rows.length;
  }

  /** Unreserves a finished intent on its key and its scope; the key's budget after it. */
  function finishOnKey(row: Released, final: bigint, now: number): BudgetRow {
    const key = unreserve.get({ key_id: row.key_id, max: row.max_amount, final, n: 1, ...windowParams(now) })!;
    if (row.budget_scope != null) scopes.finish(key, row.budget_scope, row.max_amount, final, now);
    return key;
  }

  function queueCharge(charge: ChargeRecord | undefined): void {
    if (charge && charge.amount > 0n) insertCharge.run(chargeParams(charge));
  }

  /**
   * Why a key that exists refused an amount: the guards of the conditional statements, restated on
   * the key as of `now` (rolled); the key's own reasons come before its scope's.
   */
  function guardReason(key: KeyRecord, now: number, amount: bigint, scoped: boolean, full: boolean): KeyGuardReason {
    if (key.revokedAt !== undefined) return "key_revoked";
    if (key.expiresAt <= now) return "key_expired";
    if (full) return "too_many_open_intents";
    if (!scoped || key.budgetLimit - key.budgetUsed - key.budgetReserved < amount) return "budget_exhausted";
    return "model_budget_exhausted";
  }

  /** The answer of reserve/chargeDirect when its guarded statement changed nothing (`openLimit`: a reserve's cap). */
  function keyMiss(keyId: string, now: number, amount: bigint, scoped: boolean, openLimit: number | null = null): Exclude<ChargeDirectResult, { ok: true }> {
    const found = keyById.get(keyId);
    if (!found) return { ok: false, reason: "key_not_found" };
    const key = rolled(keyFromRow(found), now);
    const full = openLimit !== null && Number(found.open_intents ?? 0) >= openLimit;
    return { ok: false, reason: guardReason(key, now, amount, scoped, full), key };
  }

  const mustKey = (keyId: string): KeyRecord => keyFromRow(keyById.get(keyId) as KeyRow);

  /** The answer of settle/abort when its conditional UPDATE changed nothing. */
  function finishMiss(intentId: string, now: number): FinishResult {
    const row = intentById.get(intentId);
    if (!row) return { ok: false, reason: "not_found" };
    if (row.status !== "authorized") return { ok: false, reason: "invalid_state", intent: intentFromRow(row) };
    if (row.expires_at <= now) {
      release(expireOne.all({ now, intent_id: intentId }), now);
      return { ok: false, reason: "expired", intent: intentFromRow(intentById.get(intentId) as IntentRow) };
    }
    return { ok: false, reason: "exceeds_reservation", intent: intentFromRow(row) };
  }

  /** The guarded UPDATE of a reserve (after its scope's guarded upsert, whose guard includes the key's); undefined: a miss, nothing changed. */
  function reserveOn(intent: NewIntent, now: number, open_limit: number | null): (BudgetRow & Pick<KeyRow, "owner" | "chain_id">) | undefined {
    // Above 2^63-1 nothing can fit any budget: a guard miss, without binding the amount.
    const { keyId: key_id, maxAmount: amount, budgetScope } = intent;
    const fits =
      amount <= MAX_INT64 && (!budgetScope || scopes.reserve({ key_id, scope: budgetScope.scope, amount, limit: budgetScope.limit, now, open_limit }));
    const keyRow = fits ? reserveOnKey.get({ key_id, amount, now, open_limit, ...windowParams(now) }) : undefined;
    // Throwing rolls the step back (the scope's reservation with it); its guard implies the key's.
    if (!keyRow && fits && budgetScope) throw new Error(`sqlite store: key ${key_id} missed its guard after its scope's`);
    return keyRow;
  }

  /**
   * Reserve: replay an idempotency key (its intent as of now: the key's overdue intents are
   * expired first), then the guarded UPDATE and the INSERT. The hot path reads and expires
   * nothing before the guard: only when it misses are the key's overdue intents expired (their
   * reservations released), and the guard tried once more.
   */
  function reserveStep(intent: NewIntent, now: number, openLimit: number | null): ReserveResult {
    const { keyId: key_id, maxAmount: amount, budgetScope } = intent;
    if (intent.idempotencyKey !== undefined) {
      release(expireDueOfKey.all({ now, key_id }), now);
      const existing = intentByIdempotency.get(key_id, intent.idempotencyKey);
      if (existing) return { ok: false, reason: "idempotent_replay", intent: intentFromRow(existing), key: mustKey(key_id) };
    }
    let keyRow = reserveOn(intent, now, openLimit);
    // (An idempotency key's reserve expired them above already.)
    if (!keyRow && intent.idempotencyKey === undefined && release(expireDueOfKey.all({ now, key_id }), now) > 0) keyRow = reserveOn(intent, now, openLimit);
    if (!keyRow) return keyMiss(key_id, now, amount, budgetScope !== undefined, openLimit);
    insertIntent.run({
      intent_id: intent.intentId,
      key_id: intent.keyId,
      owner: keyRow.owner,
      chain_id: keyRow.chain_id,
      max_amount: intent.maxAmount,
      idempotency_key: intent.idempotencyKey ?? null,
      budget_scope: budgetScope?.scope ?? null,
      fingerprint: intent.fingerprint,
      request: toJson(intent.request ?? null),
      created_at: intent.createdAt,
      expires_at: intent.expiresAt,
    });
    return { ok: true, intent: authorizedIntent(intent, keyRow.owner, Number(keyRow.chain_id)), key: keyBudgetFromRow(keyRow) };
  }

  /** A duplicate charge or job id throws, and the step's savepoint rolls back the settle with it. */
  function settleStep(
    intentId: string,
    final: bigint,
    result: string | null,
    now: number,
    charge: ChargeRecord | undefined,
    videoJob: VideoJobRecord | undefined,
  ): FinishResult {
    const row = final <= MAX_INT64 ? settleIntent.get({ intent_id: intentId, final, result, now }) : undefined;
    if (!row) return finishMiss(intentId, now);
    const key = finishOnKey(row, final, now);
    queueCharge(charge);
    if (videoJob) insertVideoJob(videoJob);
    return { ok: true, key: keyBudgetFromRow(key) };
  }

  function abortStep(intentId: string, reason: string, result: string | null, now: number): FinishResult {
    const row = abortIntent.get({ intent_id: intentId, reason, result, now });
    if (!row) return finishMiss(intentId, now);
    const key = finishOnKey(row, 0n, now);
    return { ok: true, key: keyBudgetFromRow(key) };
  }

  function chargeStep(keyId: string, amount: bigint, now: number, charge: ChargeRecord | undefined): ChargeDirectResult {
    release(expireDueOfKey.all({ now, key_id: keyId }), now);
    const keyRow = amount <= MAX_INT64 ? chargeOnKey.get({ key_id: keyId, amount, now, ...windowParams(now) }) : undefined;
    if (!keyRow) return keyMiss(keyId, now, amount, false);
    queueCharge(charge);
    return { ok: true, key: keyFromRow(keyRow) };
  }

  const dueOfKey = db.prepare<{ now: number; key_id: string }, { n: number }>(
    "SELECT count(*) AS n FROM intents WHERE key_id = @key_id AND status = 'authorized' AND expires_at <= @now",
  );
  const releaseKeys = (keyIds: readonly string[], now: number) => {
    let n = 0;
    for (const key_id of keyIds) n += release(expireDueOfKey.all({ now, key_id }), now);
    return n;
  };

  return {
    async reserve({ intent, now, openLimit }) {
      checkAmount(intent.maxAmount, "maxAmount", false);
      const limit = openLimit ?? null;
      return group.run(() => reserveStep(intent, now, limit));
    },

    async settle({ intentId, finalAmount, result, now, charge, videoJob }) {
      checkAmount(finalAmount, "finalAmount", false);
      const json = toJson(result);
      return group.run(() => settleStep(intentId, finalAmount, json, now, charge, videoJob));
    },

    async abort({ intentId, reason, result, now }) {
      const json = toJson(result);
      return group.run(() => abortStep(intentId, reason, json, now));
    },

    async chargeDirect({ keyId, amount, now, charge }) {
      checkAmount(amount, "amount", false);
      return group.run(() => chargeStep(keyId, amount, now, charge));
    },

    async expireIntents(now, limit) {
      const n = Math.max(0, Math.floor(limit));
      return group.run(() => release(expireDue.all({ now, limit: n }), now));
    },

    async releaseOverdueIntents(keyIds, now) {
      // A plain read first: the write lock is taken only when some key has an overdue intent.
      const due = [...new Set(keyIds)].filter((key_id) => Number(dueOfKey.get({ now, key_id })?.n ?? 0) > 0);
      return due.length === 0 ? 0 : group.run(() => releaseKeys(due, now));
    },

    async getIntent(intentId, now) {
      const row = intentById.get(intentId);
      if (!row) return null;
      if (now === undefined || row.status !== "authorized" || row.expires_at > now) return intentFromRow(row);
      // Release on read; the conditional UPDATE re-checks the state under the write lock.
      await group.run(() => release(expireOne.all({ now, intent_id: intentId }), now));
      return intentFromRow(intentById.get(intentId) as IntentRow);
    },

    async listIntents(owner, options) {
      const before = options.cursor ?? INTENT_LIST_OPEN.before;
      const edge = filtersIntents(options)
        ? intentPageBoundary.all({ owner, before_created: before.createdAt, before_id: before.intentId, skip: intentScan(options) - 1 })
        : [];
      const boundary = edge.length === 2 ? scanEdge({ createdAt: Number(edge[0]!.created_at), intentId: edge[0]!.intent_id }) : null;
      const from = boundary ?? INTENT_LIST_OPEN.from;
      const rows = intentPage.all({
        owner,
        before_created: before.createdAt,
        before_id: before.intentId,
        from_created: from.createdAt,
        from_id: from.intentId,
        chain_id: options.chainId ?? null,
        key_id: options.keyId ?? null,
        status: options.status ?? null,
        now: options.now ?? null,
        limit: pageQuerySize(options.limit),
      });
      return intentListPage(rows, options.limit, boundary, (r) => intentFromRow(r));
    },
  };
}
