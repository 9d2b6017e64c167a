/**
 * {@link LedgerStore} on SQLite. Every guarded operation is one step around a conditional UPDATE
 * whose WHERE clause is the guard, checked through `RETURNING` (no row back = guard missed). The
 * steps of one event-loop turn commit together in one `BEGIN IMMEDIATE` transaction (group-commit.ts:
 * the write lock is taken before the first read, so no other connection or process can
 * interleave; each step runs in its own savepoint; every caller is answered after the COMMIT).
 * The happy path reads nothing before its guarded UPDATE: a key is looked up only to explain a miss.
 */
import type Database from "better-sqlite3";
import { intentFromRow, keyFromRow, keysetPage, pageQuerySize } from "@tollgate/core";
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
import { chargeParams, checkAmount, MAX_INT64, toJson, type IntentRow, type KeyRow } from "./rows.js";
import { videoJobInserter } from "./video.js";
import type { GroupCommit } from "./group-commit.js";

type Released = { key_id: string; max_amount: bigint };

const EXPIRE = "UPDATE intents SET status = 'expired', released_amount = max_amount, finished_at = @now";

export function createLedgerOps(db: Database.Database, group: GroupCommit): LedgerStore {
  const keyById = db.prepare<[string], KeyRow>("SELECT * FROM keys WHERE key_id = ?");
  const intentById = db.prepare<[string], IntentRow>("SELECT * FROM intents WHERE intent_id = ?");
  const intentPage = db.prepare<
    { owner: string; chain_id: number | null; key_id: string | null; cursor_created: number | null; cursor_id: string | null; limit: number },
    IntentRow
  >(`SELECT * FROM intents WHERE owner = @owner
      AND (@chain_id IS NULL OR chain_id = @chain_id) AND (@key_id IS NULL OR key_id = @key_id)
      AND (@cursor_created IS NULL OR created_at < @cursor_created OR (created_at = @cursor_created AND intent_id < @cursor_id))
    ORDER BY created_at DESC, intent_id DESC LIMIT @limit`);
  const intentByIdempotency = db.prepare<[string, string], IntentRow>("SELECT * FROM intents WHERE key_id = ? AND idempotency_key = ?");
  const expireDueOfKey = db.prepare<{ now: number; key_id: string }, Released>(
    `${EXPIRE} WHERE key_id = @key_id AND status = 'authorized' AND expires_at <= @now RETURNING key_id, max_amount`,
  );
  const expireOne = db.prepare<{ now: number; intent_id: string }, Released>(
    `${EXPIRE} WHERE intent_id = @intent_id AND status = 'authorized' AND expires_at <= @now RETURNING key_id, max_amount`,
  );
  const expireDue = db.prepare<{ now: number; limit: number }, Released>(`${EXPIRE}
    WHERE intent_id IN (SELECT intent_id FROM intents WHERE status = 'authorized' AND expires_at <= @now ORDER BY expires_at, intent_id LIMIT @limit)
    RETURNING key_id, max_amount`);
  /** Moves `max` out of reserved and `final` into used (settle, abort with final 0, expiry with final 0). */
  const unreserve = db.prepare<{ key_id: string; max: bigint; final: bigint }, KeyRow>(
    "UPDATE keys SET budget_reserved = budget_reserved - @max, budget_used = budget_used + @final WHERE key_id = @key_id RETURNING *",
  );
  const reserveOnKey = db.prepare<{ key_id: string; amount: bigint; now: number }, KeyRow>(`
    UPDATE keys SET budget_reserved = budget_reserved + @amount, last_used_at = @now
    WHERE key_id = @key_id AND revoked_at IS NULL AND expires_at > @now AND budget_limit - budget_used - budget_reserved >= @amount
    RETURNING *`);
  const chargeOnKey = db.prepare<{ key_id: string; amount: bigint; now: number }, KeyRow>(`
    UPDATE keys SET budget_used = budget_used + @amount, last_used_at = @now
    WHERE key_id = @key_id AND revoked_at IS NULL AND expires_at > @now AND budget_limit - budget_used - budget_reserved >= @amount
    RETURNING *`);
  const insertIntent = db.prepare<Record<string, unknown>>(`
    INSERT INTO intents (intent_id, key_id, owner, chain_id, status, max_amount, idempotency_key, fingerprint, request, created_at, expires_at)
    VALUES (@intent_id, @key_id, @owner, @chain_id, 'authorized', @max_amount, @idempotency_key, @fingerprint, @request, @created_at, @expires_at)`);
  const settleIntent = db.prepare<{ intent_id: string; final: bigint; result: string | null; now: number }, IntentRow>(`
    UPDATE intents SET status = 'settled', final_amount = @final, released_amount = max_amount - @final, result = @result, finished_at = @now
    WHERE intent_id = @intent_id AND status = 'authorized' AND expires_at > @now AND max_amount >= @final
    RETURNING *`);
  const abortIntent = db.prepare<{ intent_id: string; reason: string; result: string | null; now: number }, IntentRow>(`
    UPDATE intents SET status = 'aborted', released_amount = max_amount, reason = @reason, result = @result, finished_at = @now
    WHERE intent_id = @intent_id AND status = 'authorized' AND expires_at > @now
    RETURNING *`);
  const insertCharge = db.prepare(`
    INSERT INTO charges (charge_id, intent_id, key_id, owner, chain_id, amount, status, created_at, tx_hash, error, batch_id, lease_until, settled_at)
    VALUES (@charge_id, @intent_id, @key_id, @owner, @chain_id, @amount, @status, @created_at, @tx_hash, @error, @batch_id, @lease_until, @settled_at)`);
  const insertVideoJob = videoJobInserter(db);

  /** Gives the reservations of just-expired intents back to their keys. */
  function release(rows: readonly Released[]): number {
    const perKey = new Map<string, bigint>();
    for (const r of rows) perKey.set(r.key_id, (perKey.get(r.key_id) ?? 0n) + r.max_amount);
    for (const [key_id, max] of perKey) unreserve.run({ key_id, max, final: 0n });
    return rows.length;
  }

  function queueCharge(charge: ChargeRecord | undefined): void {
    if (charge && charge.amount > 0n) insertCharge.run(chargeParams(charge));
  }

  /** Why a key that exists refused an amount: the guard of the conditional UPDATE, restated. */
  function guardReason(key: KeyRecord, now: number): KeyGuardReason {
    if (key.revokedAt !== undefined) return "key_revoked";
    if (key.expiresAt <= now) return "key_expired";
    return "budget_exhausted";
  }

  const mustKey = (keyId: string): KeyRecord => keyFromRow(keyById.get(keyId) as KeyRow);

  /** The answer of settle/abort when its conditional UPDATE changed nothing. */
  function finishMiss(intentId: string, now: number): FinishResult {
    const row = intentById.get(intentId);
    if (!row) return { ok: false, reason: "not_found" };
    if (row.status !== "authorized") return { ok: false, reason: "invalid_state", intent: intentFromRow(row) };
    if (row.expires_at <= now) {
      release(expireOne.all({ now, intent_id: intentId }));
      return { ok: false, reason: "expired", intent: intentFromRow(intentById.get(intentId) as IntentRow) };
    }
    return { ok: false, reason: "exceeds_reservation", intent: intentFromRow(row) };
  }

  /** Reserve: release the key's overdue intents, replay an idempotency key, then the guarded UPDATE and the INSERT. */
  function reserveStep(intent: NewIntent, now: number): ReserveResult {
    release(expireDueOfKey.all({ now, key_id: intent.keyId }));
    if (intent.idempotencyKey !== undefined) {
      const existing = intentByIdempotency.get(intent.keyId, intent.idempotencyKey);
      if (existing) return { ok: false, reason: "idempotent_replay", intent: intentFromRow(existing), key: mustKey(intent.keyId) };
    }
    // Above 2^63-1 nothing can fit any budget: a guard miss, without binding the amount.
    const keyRow = intent.maxAmount <= MAX_INT64 ? reserveOnKey.get({ key_id: intent.keyId, amount: intent.maxAmount, now }) : undefined;
    if (!keyRow) {
      const found = keyById.get(intent.keyId);
      if (!found) return { ok: false, reason: "key_not_found" };
      const key = keyFromRow(found);
      return { ok: false, reason: guardReason(key, now), key };
    }
    insertIntent.run({
      intent_id: intent.intentId,
      key_id: intent.keyId,
      owner: keyRow.owner,
      chain_id: keyRow.chain_id,
      max_amount: intent.maxAmount,
      idempotency_key: intent.idempotencyKey ?? null,
      fingerprint: intent.fingerprint,
      request: toJson(intent.request ?? null),
      created_at: intent.createdAt,
      expires_at: intent.expiresAt,
    });
    const key = keyFromRow(keyRow);
    const record: IntentRecord = {
      intentId: intent.intentId,
      keyId: intent.keyId,
      owner: key.owner,
      chainId: key.chainId,
      status: "authorized",
      maxAmount: intent.maxAmount,
      fingerprint: intent.fingerprint,
      // The caller's own value: the stored copy is the row, which no change to this record touches.
      request: intent.request ?? null,
      createdAt: intent.createdAt,
      expiresAt: intent.expiresAt,
      ...(intent.idempotencyKey === undefined ? {} : { idempotencyKey: intent.idempotencyKey }),
    };
    return { ok: true, intent: record, key };
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
    const key = unreserve.get({ key_id: row.key_id, max: row.max_amount, final }) as KeyRow;
    queueCharge(charge);
    if (videoJob) insertVideoJob(videoJob);
    return { ok: true, intent: intentFromRow(row), key: keyFromRow(key) };
  }

  function abortStep(intentId: string, reason: string, result: string | null, now: number): FinishResult {
    const row = abortIntent.get({ intent_id: intentId, reason, result, now });
    if (!row) return finishMiss(intentId, now);
    const key = unreserve.get({ key_id: row.key_id, max: row.max_amount, final: 0n }) as KeyRow;
    return { ok: true, intent: intentFromRow(row), key: keyFromRow(key) };
  }

  function chargeStep(keyId: string, amount: bigint, now: number, charge: ChargeRecord | undefined): ChargeDirectResult {
    release(expireDueOfKey.all({ now, key_id: keyId }));
    const keyRow = amount <= MAX_INT64 ? chargeOnKey.get({ key_id: keyId, amount, now }) : undefined;
    if (!keyRow) {
      const found = keyById.get(keyId);
      if (!found) return { ok: false, reason: "key_not_found" };
      const key = keyFromRow(found);
      return { ok: false, reason: guardReason(key, now), key };
    }
    queueCharge(charge);
    return { ok: true, key: keyFromRow(keyRow) };
  }

  const dueOfKey = db.prepare<{ now: number; key_id: string }, { n: number }>(
    "SELECT count(*) AS n FROM intents WHERE key_id = @key_id AND status = 'authorized' AND expires_at <= @now",
  );
  const releaseKeys = (keyIds: readonly string[], now: number) => {
    let n = 0;
    for (const key_id of keyIds) n += release(expireDueOfKey.all({ now, key_id }));
    return n;
  };

  return {
    async reserve({ intent, now }) {
      checkAmount(intent.maxAmount, "maxAmount", false);
      return group.run(() => reserveStep(intent, now));
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
      return group.run(() => release(expireDue.all({ now, limit: n })));
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
      await group.run(() => release(expireOne.all({ now, intent_id: intentId })));
      return intentFromRow(intentById.get(intentId) as IntentRow);
    },

    async listIntents(owner, { limit, cursor, chainId, keyId }) {
      const rows = intentPage.all({
        owner,
        chain_id: chainId ?? null,
        key_id: keyId ?? null,
        cursor_created: cursor?.createdAt ?? null,
        cursor_id: cursor?.intentId ?? null,
        limit: pageQuerySize(limit),
      });
      const { items: intents, more } = keysetPage(rows, limit, (r) => intentFromRow(r));
      return { intents, nextCursor: more && { createdAt: more.createdAt, intentId: more.intentId } };
    },
  };
}
