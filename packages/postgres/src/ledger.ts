/**
 * {@link LedgerStore} on PostgreSQL. Every guarded operation is ONE statement (see ledger-sql.ts
 * for how each is built and why it is race-free): no transaction is opened, so any connection of
 * a pool may run it and several instances may share the database. The hot statements leave the
 * per-model counter table out of their plans: when one meets what needs it (reserve and
 * chargeDirect: overdue scoped intents of the key, after expiring the others; settle, abort,
 * expire on read: an intent with a scope, left alone), it stops there, a valid step of its own,
 * and the full statement runs.
 */
import { authorizedIntent, filtersIntents, INTENT_LIST_OPEN, intentListPage, intentScan, keyBudgetFromRow, pageQuerySize, rolled, scanEdge } from "@tollgate/core";
import type {
  ChargeRecord,
  FinishResult,
  IntentCursor,
  IntentRecord,
  KeyBudget,
  KeyGuardReason,
  KeyRecord,
  LedgerStore,
  ReserveResult,
  SqlKeyBudgetRow,
  VideoJobRecord,
} from "@tollgate/core";
import { windowValues } from "./governance.js";
import type { GroupCommit, LockHint } from "./group-commit.js";
import { ledgerSql, type FinishRow, type LeanReserveRow, type StepRow } from "./ledger-sql.js";
import { retryOnConflict, type Queryable } from "./queryable.js";
import { chargeValues, checkAmount, enc, parseRow, requestJson, toIntent, toJson, toKey, type IntentRow, type KeyRow, type TableName } from "./rows.js";
import { videoJobValues } from "./video.js";

/**
 * Why a key that exists refused an amount: the guard of `calc`, restated on the locked key (rolled);
 * `capped`: the statement found the key at its open-intent cap (`calc.capped`).
 */
function guardReason(key: KeyRecord, now: number, capped = false): KeyGuardReason {
  if (key.revokedAt !== undefined) return "key_revoked";
  if (key.expiresAt <= now) return "key_expired";
  if (capped) return "too_many_open_intents";
  return "budget_exhausted";
}

/**
 * The open-intent cap as the statements bind it (`::int`, NULL: none), with the meaning of
 * "fewer than `openLimit`" for any number: a count reaches a fraction where it reaches its
 * ceiling, and never reaches NaN, Infinity, or anything beyond the int column's range.
 */
function capValue(openLimit: number | undefined): number | null {
  if (openLimit === undefined || !(openLimit <= 2 ** 31 - 1)) return null;
  return Math.max(0, Math.ceil(openLimit));
}

/** The budget a successful step returns (BUDGET_COLS); the key row exists whenever the step changed it. */
const budgetOf = (row: SqlKeyBudgetRow | null): KeyBudget => {
  if (!row) throw new Error("postgres store: a ledger step changed an intent but returned no key");
  return keyBudgetFromRow(row);
};
/** {@link budgetOf} from a row's own budget columns (the lean reserve, the finishing statement). */
const budgetColumns = (row: { key_id: string | null }): KeyBudget => budgetOf(row.key_id === null ? null : (row as SqlKeyBudgetRow));

const keyOf = (text: string | null | undefined) => {
  const row = parseRow<KeyRow>(text);
  return row ? toKey(row) : null;
};

/**
 * The key a step returns, as the guard saw it: a step that changed nothing returns the key as
 * stored, whose lapsed window is rolled here (a no-op on a key the step wrote: it rolled it).
 */
const stepKey = (row: StepRow | undefined, now: number) => {
  const key = keyOf(row?.key);
  return key && rolled(key, now);
};
const intentOf = (text: string | null | undefined) => {
  const row = parseRow<IntentRow>(text);
  return row ? toIntent(row) : null;
};

/**
 * The ledger on `db`. With `group`, reserve, settle, abort and chargeDirect join its group commit
 * (one transaction per event-loop turn), and the other writes run alone through it (a deadlock
 * victim is re-run).
 */
export function createLedgerOps(db: Queryable, t: TableName, group?: GroupCommit): LedgerStore {
  const sql = ledgerSql(t);
  const single: Queryable = group ? { query: group.alone } : db;
  /** A guarded step: in the next group, or alone without one. */
  const step = <R>(text: string, values: unknown[], hint: LockHint) => (group ? group.query<R>(text, values, hint) : db.query<R>(text, values));

  /** Why a reserve that inserted nothing refused, from its row (none: an unknown key). */
  function refusal(row: Pick<StepRow, "key" | "replay" | "key_fits" | "capped"> | undefined, now: number): ReserveResult {
    const key = stepKey(row, now);
    if (!row || !key) return { ok: false, reason: "key_not_found" };
    const replay = intentOf(row.replay);
    if (replay) return { ok: false, reason: "idempotent_replay", intent: replay, key };
    if (row.key_fits === "true") return { ok: false, reason: "model_budget_exhausted", key };
    return { ok: false, reason: guardReason(key, now, row.capped === "true"), key };
  }

  /** Runs the finishing statement (settle, abort, or expire-on-read) and classifies its outcome. */
  async function finish(params: { intentId: string; now: number; status: "settled" | "aborted" | "expired"; final?: string; result?: unknown; reason?: string; charge?: ChargeRecord; videoJob?: VideoJobRecord }): Promise<FinishResult> {
    const { intentId, now, status, final, result, reason, charge, videoJob } = params;
    const values = [intentId, now, status, final ?? null, toJson(result), enc(reason), ...chargeValues(charge), ...videoJobValues(videoJob), ...windowValues(now)];
    let row = (await step<FinishRow>(sql.finish, values, { intent: intentId })).rows[0];
    // Unknown to the hot statement: an unknown intent, or one with a per-model scope (left alone).
    if (!row?.current && !row?.status) row = (await step<FinishRow>(sql.finishScoped, values, { intent: intentId })).rows[0];
    if (row?.status === "expired") return { ok: false, reason: "expired", intent: intentOf(row.finished)! };
    if (row?.status) return { ok: true, key: budgetColumns(row) };
    const current = intentOf(row?.current);
    if (!current) return { ok: false, reason: "not_found" };
    if (current.status !== "authorized") return { ok: false, reason: "invalid_state", intent: current };
    return { ok: false, reason: "exceeds_reservation", intent: current };
  }

  return {
    /**
     * One statement (ledger-sql.ts `reserveLean` without an idempotency key, `reserve` with one,
     * or `reserveScoped` with a per-model cap; `openLimit` is bound last), re-run if
     * intents_idempotency saw a concurrent twin or key_model_spend_pkey a concurrent first use of
     * the scope. When the lean one misses on a key with overdue intents, `reserve` runs (it
     * expires them first).
     * When `reserve` finds overdue scoped intents of the key it reserves nothing and `reserveFull`
     * runs (it also expires those and releases their per-model counters).
     */
    async reserve({ intent, now, openLimit }) {
      const scope = intent.budgetScope;
      const params = [
        intent.keyId,
        now,
        checkAmount(intent.maxAmount, "maxAmount"),
        intent.intentId,
        enc(intent.idempotencyKey),
        intent.fingerprint,
        requestJson(intent.request),
        intent.createdAt,
        intent.expiresAt,
        ...windowValues(now),
        ...(scope ? [enc(scope.scope), checkAmount(scope.limit, "budgetScope.limit")] : []),
        capValue(openLimit),
      ];
      const conflicts = scope ? ["intents_idempotency", "key_model_spend_pkey"] : ["intents_idempotency"];
      const run = async <R = StepRow>(statement: string, expires = true) =>
        (await retryOnConflict(conflicts, () => step<R>(statement, params, expires ? { key: intent.keyId, now } : { key: intent.keyId }))).rows[0];
      if (!scope && intent.idempotencyKey === undefined) {
        const lean = await run<LeanReserveRow>(sql.reserveLean, false);
        if (lean?.fits === "true") return { ok: true, intent: authorizedIntent(intent, lean.owner, Number(lean.chain_id)), key: budgetColumns(lean) };
        // A miss that left overdue intents of the key alone hands over to the statement that expires them.
        if (lean?.due !== "true") return refusal(lean, now);
      }
      let row = await run(scope ? sql.reserveScoped : sql.reserve);
      if (row?.due === "true") row = await run(sql.reserveFull);
      const inserted = parseRow<{ owner: string; chain_id: string }>(row?.inserted);
      // The statement returns what the caller does not know: the owner and chain (from the key), and the budget.
      if (inserted) return { ok: true, intent: authorizedIntent(intent, inserted.owner, Number(inserted.chain_id)), key: budgetOf(parseRow<SqlKeyBudgetRow>(row!.key)) };
      return refusal(row, now);
    },

    /**
     * One statement (ledger-sql.ts `finish`, or `finishScoped` for an intent with a per-model scope,
     * after the hot one found it and changed nothing): the intent's row lock makes exactly one
     * concurrent finisher win; its charge and video job are inserted by the same statement.
     */
    async settle({ intentId, finalAmount, result, now, charge, videoJob }) {
      return finish({ intentId, now, status: "settled", final: checkAmount(finalAmount, "finalAmount"), result, ...(charge ? { charge } : {}), ...(videoJob ? { videoJob } : {}) });
    },

    /** One statement (ledger-sql.ts `finish`), as settle. */
    async abort({ intentId, reason, result, now }) {
      return finish({ intentId, now, status: "aborted", result, reason });
    },

    /**
     * One statement (ledger-sql.ts `chargeDirect`, or `chargeDirectFull` when the key has overdue
     * scoped intents, as reserve): the key's row lock makes the guard exact.
     */
    async chargeDirect({ keyId, amount, now, charge }) {
      const params = [keyId, now, checkAmount(amount, "amount"), ...chargeValues(charge), ...windowValues(now)];
      let row = (await step<StepRow>(sql.chargeDirect, params, { key: keyId, now })).rows[0];
      if (row?.due === "true") row = (await step<StepRow>(sql.chargeDirectFull, params, { key: keyId, now })).rows[0];
      const key = stepKey(row, now);
      if (!row || !key) return { ok: false, reason: "key_not_found" };
      if (row.fits === "true") return { ok: true, key };
      return { ok: false, reason: guardReason(key, now), key };
    },

    /** One statement (ledger-sql.ts `sweep`): SKIP LOCKED gives each overdue intent to one sweeper. */
    async expireIntents(now, limit) {
      const { rows } = await single.query<{ n: string }>(sql.sweep, [now, Math.max(0, Math.floor(limit)), ...windowValues(now)]);
      return Number(rows[0]?.n ?? 0);
    },

    /** One statement (ledger-sql.ts `releaseKeys`); skipped when no listed key has an overdue intent (a plain read). */
    async releaseOverdueIntents(keyIds, now) {
      const ids = [...new Set(keyIds)];
      if (ids.length === 0) return 0;
      const { rows: due } = await db.query<{ n: string }>(sql.dueOfKeys, [JSON.stringify(ids), now]);
      if (Number(due[0]?.n ?? 0) === 0) return 0;
      const { rows } = await single.query<{ n: string }>(sql.releaseKeys, [JSON.stringify(ids), now, ...windowValues(now)]);
      return Number(rows[0]?.n ?? 0);
    },

    async getIntent(intentId, now) {
      const { rows } = await db.query<IntentRow>(sql.intentById, [intentId]);
      const row = rows[0];
      if (!row) return null;
      const intent: IntentRecord = toIntent(row);
      if (now === undefined || intent.status !== "authorized" || intent.expiresAt > now) return intent;
      // Release on read: the finishing statement re-checks the state on the locked row.
      const r = await finish({ intentId, now, status: "expired" });
      return "intent" in r ? r.intent : null;
    },

    async listIntents(owner, options) {
      const before = options.cursor ?? INTENT_LIST_OPEN.before;
      const at = [owner, before.createdAt, before.intentId];
      let boundary: IntentCursor | null = null;
      if (filtersIntents(options)) {
        const { rows: edge } = await db.query<{ at: string; intent_id: string }>(sql.intentPageBoundary, [...at, intentScan(options) - 1]);
        if (edge.length === 2) boundary = scanEdge({ createdAt: Number(edge[0]!.at), intentId: edge[0]!.intent_id });
      }
      const from = boundary ?? INTENT_LIST_OPEN.from;
      const { status, now, chainId, keyId } = options;
      const filters = [chainId ?? null, keyId ?? null, status ?? null, now ?? null, pageQuerySize(options.limit)];
      const { rows } = await db.query<IntentRow>(sql.intentPage, [...at, from.createdAt, from.intentId, ...filters]);
      return intentListPage(rows, options.limit, boundary, toIntent);
    },
  };
}
