/**
 * {@link LedgerStore} on PostgreSQL. Every guarded operation is ONE statement (see ledger-sql.ts
 * for how each is built and why it is race-free): no transaction is opened, so any connection of
 * a pool may run it and several instances may share the database.
 */
import { keysetPage, pageQuerySize } from "@tollgate/core";
import type { ChargeRecord, FinishResult, IntentRecord, KeyGuardReason, KeyRecord, LedgerStore, VideoJobRecord } from "@tollgate/core";
import { ledgerSql, type FinishRow, type StepRow } from "./ledger-sql.js";
import { retryOnConflict, type Queryable } from "./queryable.js";
import { chargeValues, checkAmount, enc, parseRow, toIntent, toJson, toKey, type IntentRow, type KeyRow, type TableName } from "./rows.js";
import { videoJobValues } from "./video.js";

/** Why a key that exists refused an amount: the guard of `calc`, restated on the locked key. */
function guardReason(key: KeyRecord, now: number): KeyGuardReason {
  if (key.revokedAt !== undefined) return "key_revoked";
  if (key.expiresAt <= now) return "key_expired";
  return "budget_exhausted";
}

const keyOf = (text: string | null | undefined) => {
  const row = parseRow<KeyRow>(text);
  return row ? toKey(row) : null;
};
const intentOf = (text: string | null | undefined) => {
  const row = parseRow<IntentRow>(text);
  return row ? toIntent(row) : null;
};

export function createLedgerOps(db: Queryable, t: TableName): LedgerStore {
  const sql = ledgerSql(t);

  /** Runs the finishing statement (settle, abort, or expire-on-read) and classifies its outcome. */
  async function finish(params: { intentId: string; now: number; status: "settled" | "aborted" | "expired"; final?: string; result?: unknown; reason?: string; charge?: ChargeRecord; videoJob?: VideoJobRecord }): Promise<FinishResult> {
    const { intentId, now, status, final, result, reason, charge, videoJob } = params;
    const values = [intentId, now, status, final ?? null, toJson(result), enc(reason), ...chargeValues(charge), ...videoJobValues(videoJob)];
    const { rows } = await db.query<FinishRow>(sql.finish, values);
    const row = rows[0];
    const current = intentOf(row?.current);
    const finished = intentOf(row?.finished);
    const key = keyOf(row?.key);
    if (finished && key) return finished.status === "expired" ? { ok: false, reason: "expired", intent: finished } : { ok: true, intent: finished, key };
    if (!current) return { ok: false, reason: "not_found" };
    if (current.status !== "authorized") return { ok: false, reason: "invalid_state", intent: current };
    return { ok: false, reason: "exceeds_reservation", intent: current };
  }

  return {
    /** One statement (ledger-sql.ts `reserve`), re-run if intents_idempotency saw a concurrent twin. */
    async reserve({ intent, now }) {
      const params = [
        intent.keyId,
        now,
        checkAmount(intent.maxAmount, "maxAmount"),
        intent.intentId,
        enc(intent.idempotencyKey),
        intent.fingerprint,
        toJson(intent.request ?? null),
        intent.createdAt,
        intent.expiresAt,
      ];
      const { rows } = await retryOnConflict(["intents_idempotency"], () => db.query<StepRow>(sql.reserve, params));
      const row = rows[0];
      const key = keyOf(row?.after) ?? keyOf(row?.before);
      if (!row || !key) return { ok: false, reason: "key_not_found" };
      const inserted = intentOf(row.inserted);
      if (inserted) return { ok: true, intent: inserted, key };
      const replay = intentOf(row.replay);
      if (replay) return { ok: false, reason: "idempotent_replay", intent: replay, key };
      return { ok: false, reason: guardReason(key, now), key };
    },

    /**
     * One statement (ledger-sql.ts `finish`): the intent's row lock makes exactly one concurrent
     * finisher win; its charge and video job are inserted by the same statement.
     */
    async settle({ intentId, finalAmount, result, now, charge, videoJob }) {
      return finish({ intentId, now, status: "settled", final: checkAmount(finalAmount, "finalAmount"), result, ...(charge ? { charge } : {}), ...(videoJob ? { videoJob } : {}) });
    },

    /** One statement (ledger-sql.ts `finish`), as settle. */
    async abort({ intentId, reason, result, now }) {
      return finish({ intentId, now, status: "aborted", result, reason });
    },

    /** One statement (ledger-sql.ts `chargeDirect`): the key's row lock makes the guard exact. */
    async chargeDirect({ keyId, amount, now, charge }) {
      const { rows } = await db.query<StepRow>(sql.chargeDirect, [keyId, now, checkAmount(amount, "amount"), ...chargeValues(charge)]);
      const row = rows[0];
      const key = keyOf(row?.after) ?? keyOf(row?.before);
      if (!row || !key) return { ok: false, reason: "key_not_found" };
      if (row.fits === "true") return { ok: true, key };
      return { ok: false, reason: guardReason(key, now), key };
    },

    /** One statement (ledger-sql.ts `sweep`): SKIP LOCKED gives each overdue intent to one sweeper. */
    async expireIntents(now, limit) {
      const { rows } = await db.query<{ n: string }>(sql.sweep, [now, Math.max(0, Math.floor(limit))]);
      return Number(rows[0]?.n ?? 0);
    },

    /** One statement (ledger-sql.ts `releaseKeys`); skipped when no listed key has an overdue intent (a plain read). */
    async releaseOverdueIntents(keyIds, now) {
      const ids = [...new Set(keyIds)];
      if (ids.length === 0) return 0;
      const { rows: due } = await db.query<{ n: string }>(sql.dueOfKeys, [JSON.stringify(ids), now]);
      if (Number(due[0]?.n ?? 0) === 0) return 0;
      const { rows } = await db.query<{ n: string }>(sql.releaseKeys, [JSON.stringify(ids), now]);
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

    async listIntents(owner, { limit, cursor, chainId, keyId }) {
      const { rows } = await db.query<IntentRow>(sql.intentPage, [owner, chainId ?? null, keyId ?? null, cursor?.createdAt ?? null, cursor?.intentId ?? null, pageQuerySize(limit)]);
      const { items: intents, more } = keysetPage(rows, limit, toIntent);
      return { intents, nextCursor: more && { createdAt: more.createdAt, intentId: more.intentId } };
    },
  };
}
