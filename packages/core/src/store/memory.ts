/**
 * The in-memory Store: for tests, examples and single-process deployments that need no
 * persistence. Each method does all its reads and writes synchronously (no `await` between
 * them), which is what makes it atomic on the one JavaScript thread.
 */
import { invalidRequest } from "../errors.js";
import { createMemoryFeedbackStore } from "./memory-feedback.js";
import { createMemoryAgentStore } from "./memory-agents.js";
import { createMemoryDispenserStore } from "./memory-dispenser.js";
import { createMemoryVideoStore } from "./memory-video.js";
import { createMemoryPaymentNonceStore } from "./memory-x402.js";
import { createMemoryTranscriptRestStore } from "./memory-transcript-rests.js";
import { copyCharge, createMemoryChargeStore } from "./memory-charges.js";
import { createMemoryAuthStore } from "./memory-auth.js";
import { createMemoryGovernance } from "./memory-governance.js";
import { createMemoryUsage } from "./memory-usage.js";
import { MAX_AMOUNT } from "../money.js";
import { memoryIntentPage } from "./intent-list.js";
import { isLiveKey, tooManyKeys } from "./key-limits.js";
import { heldKeysSince } from "./usage-days.js";
import { activeSessionOf, newestFirstPage } from "./memory-keys.js";
import type { ChargeRecord, IntentRecord, KeyGuardReason, KeyRecord, Store } from "./types.js";

/** Refuses an amount the store cannot hold (negative or above uint256). */
function checkAmount(value: bigint, param: string): void {
  if (value < 0n) throw invalidRequest(`${param} must not be negative`, param);
  if (value > MAX_AMOUNT) throw invalidRequest(`${param} is larger than uint256`, param);
}

/** A deep copy through JSON, so the memory store accepts exactly what a database store does. */
function cloneJson(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

function copyKey(k: KeyRecord): KeyRecord {
  const copy: KeyRecord = Object.assign({}, k);
  if (k.rateLimit) copy.rateLimit = { requestsPerMinute: k.rateLimit.requestsPerMinute };
  if (k.models) copy.models = [...k.models];
  if (k.modelBudgets) copy.modelBudgets = { ...k.modelBudgets };
  return copy;
}
function copyIntent(i: IntentRecord): IntentRecord {
  const copy: IntentRecord = Object.assign({}, i, { request: cloneJson(i.request) });
  if (i.result !== undefined) copy.result = cloneJson(i.result);
  return copy;
}

/** Why `key` cannot take `amount` at `now` (`full`: it holds its most open intents), or null if it can. */
function keyGuard(key: KeyRecord, now: number, amount: bigint, full = false): KeyGuardReason | null {
  if (key.revokedAt !== undefined) return "key_revoked";
  if (key.expiresAt <= now) return "key_expired";
  if (full) return "too_many_open_intents";
  if (key.budgetLimit - key.budgetUsed - key.budgetReserved < amount) return "budget_exhausted";
  return null;
}

/** Creates an empty in-memory {@link Store}. Amounts up to uint256 are exact. */
export function createMemoryStore(): Store {
  const keys = new Map<string, KeyRecord>();
  const keyIdByToken = new Map<string, string>();
  const intents = new Map<string, IntentRecord>();
  const intentIdByIdempotency = new Map<string, string>();
  /** keyId -> ids of its authorized intents, so release on read touches only that key. */
  const authorized = new Map<string, Set<string>>();
  const charges = new Map<string, ChargeRecord>();
  /** Created first: settle and the x402 mark insert a job in their own step through `video.insert`. */
  const video = createMemoryVideoStore();

  const idempotencySlot = (keyId: string, idempotencyKey: string) => `${keyId}\u0000${idempotencyKey}`;
  const governance = createMemoryGovernance(keys, keyIdByToken, copyKey);

  function finish(intent: IntentRecord, status: "settled" | "aborted" | "expired", now: number, finalAmount = 0n): void {
    const key = keys.get(intent.keyId);
    if (!key) throw new Error(`memory store: intent ${intent.intentId} has no key`);
    // Spend lands in the window it happens in.
    governance.roll(key, now);
    key.budgetReserved -= intent.maxAmount;
    key.budgetUsed += finalAmount;
    if (intent.budgetScope !== undefined) {
      const scope = governance.counters(key, intent.budgetScope, now);
      scope.budgetReserved -= intent.maxAmount;
      scope.budgetUsed += finalAmount;
    }
    intent.status = status;
    intent.releasedAmount = intent.maxAmount - finalAmount;
    intent.finishedAt = now;
    authorized.get(intent.keyId)?.delete(intent.intentId);
  }

  /** Expires the key's overdue authorized intents; how many. */
  function releaseExpired(keyId: string, now: number): number {
    let n = 0;
    for (const id of [...(authorized.get(keyId) ?? [])]) {
      const intent = intents.get(id);
      if (intent && intent.expiresAt <= now) {
        finish(intent, "expired", now);
        n++;
      }
    }
    return n;
  }

  function assertNewCharge(charge: ChargeRecord | undefined): boolean {
    if (!charge || charge.amount <= 0n) return false;
    checkAmount(charge.amount, "amount");
    if (charges.has(charge.chargeId)) throw new Error(`memory store: duplicate chargeId ${charge.chargeId}`);
    return true;
  }

  /** Shared by settle and abort: the guard of a state move out of `authorized`. */
  function finishGuard(intentId: string, now: number): { ok: true; intent: IntentRecord } | { ok: false; reason: "not_found" } | { ok: false; reason: "invalid_state" | "expired"; intent: IntentRecord } {
    const intent = intents.get(intentId);
    if (!intent) return { ok: false, reason: "not_found" };
    if (intent.status !== "authorized") return { ok: false, reason: "invalid_state", intent: copyIntent(intent) };
    if (intent.expiresAt <= now) {
      finish(intent, "expired", now);
      return { ok: false, reason: "expired", intent: copyIntent(intent) };
    }
    return { ok: true, intent };
  }

  const keyOf = (intent: IntentRecord): KeyRecord => copyKey(keys.get(intent.keyId) as KeyRecord);

  return {
    maxAmount: MAX_AMOUNT,

    async insertKey(key, options = {}) {
      checkAmount(key.budgetLimit, "budgetLimit");
      checkAmount(key.budgetUsed, "budgetUsed");
      checkAmount(key.budgetReserved, "budgetReserved");
      if (key.budgetUsed + key.budgetReserved > key.budgetLimit) throw new Error("memory store: budgetUsed + budgetReserved exceeds budgetLimit");
      if (keys.has(key.keyId)) throw new Error(`memory store: duplicate keyId ${key.keyId}`);
      if (keyIdByToken.has(key.tokenHash)) throw new Error("memory store: duplicate tokenHash");
      const superseded: string[] = [];
      const at = options.supersedeSessionAt ?? key.createdAt;
      // The owner's live session key on the chain, which a new session key supersedes.
      const supersedes = (k: KeyRecord) =>
        key.purpose === "session" && k.purpose === "session" && k.owner === key.owner && k.chainId === key.chainId && isLiveKey(k, at);
      if (options.liveLimit !== undefined && isLiveKey(key, at)) {
        let n = 1;
        for (const other of keys.values()) if (other.owner === key.owner && isLiveKey(other, at) && !supersedes(other)) n++;
        if (n > options.liveLimit) throw tooManyKeys(key.owner, options.liveLimit);
      }
      for (const other of keys.values()) {
        if (!supersedes(other)) continue;
        other.revokedAt = at;
        superseded.push(other.keyId);
      }
      superseded.sort();
      keys.set(key.keyId, copyKey(key));
      keyIdByToken.set(key.tokenHash, key.keyId);
      return { superseded };
    },

    async getKeyById(keyId) {
      const key = keys.get(keyId);
      return key ? copyKey(key) : null;
    },

    async getKeyByTokenHash(tokenHash) {
      const keyId = governance.keyIdOf(tokenHash);
      const key = keyId === undefined ? undefined : keys.get(keyId);
      return key ? copyKey(key) : null;
    },

    async listKeys(owner, { limit, cursor, chainId }) {
      const mine = [...keys.values()].filter((k) => k.owner === owner && (chainId === undefined || k.chainId === chainId));
      const page = newestFirstPage(mine, (k) => k.keyId, cursor && { createdAt: cursor.createdAt, id: cursor.keyId }, limit);
      return { keys: page.items.map(copyKey), nextCursor: page.next && { createdAt: page.next.createdAt, keyId: page.next.id } };
    },

    async findActiveSessionKey(owner, chainId, now) {
      const found = activeSessionOf(keys.values(), owner, chainId, now);
      return found ? copyKey(found) : null;
    },

    async listHeldKeys(owner, chainId, liveAfter) {
      const since = heldKeysSince(liveAfter);
      const holds = (k: KeyRecord) => k.budgetReserved > 0n && (k.revokedAt ?? k.expiresAt) > since;
      return [...keys.values()].filter((k) => k.owner === owner && k.chainId === chainId && (isLiveKey(k, liveAfter) || holds(k))).map(copyKey);
    },

    async revokeKey(keyId, at) {
      const key = keys.get(keyId);
      if (!key) return null;
      if (key.revokedAt === undefined) key.revokedAt = at;
      return copyKey(key);
    },

    async updateKey(input) {
      return governance.updateKey(input);
    },

    async rotateKey(input) {
      return governance.rotateKey(input);
    },

    async listKeyEvents(keyId, options) {
      return governance.listKeyEvents(keyId, options);
    },

    async getModelSpend(keyId) {
      return governance.getModelSpend(keyId);
    },

    async reserve({ intent: input, now, openLimit }) {
      checkAmount(input.maxAmount, "maxAmount");
      const key = keys.get(input.keyId);
      if (!key) return { ok: false, reason: "key_not_found" };
      // An idempotency key replays the intent as it is now: its overdue holds are expired first.
      if (input.idempotencyKey !== undefined) {
        releaseExpired(key.keyId, now);
        const existing = intentIdByIdempotency.get(idempotencySlot(key.keyId, input.idempotencyKey));
        const intent = existing === undefined ? undefined : intents.get(existing);
        if (intent) return { ok: false, reason: "idempotent_replay", intent: copyIntent(intent), key: copyKey(key) };
      }
      governance.roll(key, now);
      const { budgetScope, ...fields } = input;
      const refusal = (): KeyGuardReason | null => {
        const full = openLimit !== undefined && (authorized.get(key.keyId)?.size ?? 0) >= openLimit;
        const reason = keyGuard(key, now, input.maxAmount, full);
        if (reason || !budgetScope) return reason;
        const counters = governance.counters(key, budgetScope.scope, now);
        return budgetScope.limit - counters.budgetUsed - counters.budgetReserved < input.maxAmount ? "model_budget_exhausted" : null;
      };
      // The key's overdue holds come back only when the amount would not fit without them.
      let reason = refusal();
      if (reason && input.idempotencyKey === undefined && releaseExpired(key.keyId, now) > 0) reason = refusal();
      if (reason) return { ok: false, reason, key: copyKey(key) };
      const scope = budgetScope && governance.counters(key, budgetScope.scope, now);
      if (intents.has(input.intentId)) throw new Error(`memory store: duplicate intentId ${input.intentId}`);
      const request = cloneJson(input.request ?? null);
      const intent: IntentRecord = Object.assign({}, fields, { request, owner: key.owner, chainId: key.chainId, status: "authorized" as const }, budgetScope ? { budgetScope: budgetScope.scope } : undefined);
      if (scope) scope.budgetReserved += input.maxAmount;
      key.budgetReserved += input.maxAmount;
      key.lastUsedAt = now;
      intents.set(intent.intentId, intent);
      if (input.idempotencyKey !== undefined) intentIdByIdempotency.set(idempotencySlot(key.keyId, input.idempotencyKey), intent.intentId);
      let set = authorized.get(key.keyId);
      if (!set) authorized.set(key.keyId, (set = new Set()));
      set.add(intent.intentId);
      return { ok: true, intent: copyIntent(intent), key: copyKey(key) };
    },

    async settle({ intentId, finalAmount, result, now, charge, videoJob }) {
      checkAmount(finalAmount, "finalAmount");
      const guard = finishGuard(intentId, now);
      if (!guard.ok) return guard;
      const { intent } = guard;
      if (finalAmount > intent.maxAmount) return { ok: false, reason: "exceeds_reservation", intent: copyIntent(intent) };
      const storedResult = cloneJson(result);
      const insertCharge = assertNewCharge(charge);
      // Nothing is written before this point, and the job insert is the last step that may throw (a duplicate id).
      if (videoJob) video.insert(videoJob);
      finish(intent, "settled", now, finalAmount);
      intent.finalAmount = finalAmount;
      if (storedResult !== undefined) intent.result = storedResult;
      if (insertCharge && charge) charges.set(charge.chargeId, copyCharge(charge));
      return { ok: true, key: keyOf(intent) };
    },

    async abort({ intentId, reason, result, now }) {
      const guard = finishGuard(intentId, now);
      if (!guard.ok) return guard;
      const { intent } = guard;
      const storedResult = cloneJson(result);
      finish(intent, "aborted", now);
      intent.reason = reason;
      if (storedResult !== undefined) intent.result = storedResult;
      return { ok: true, key: keyOf(intent) };
    },

    async chargeDirect({ keyId, amount, now, charge }) {
      checkAmount(amount, "amount");
      const key = keys.get(keyId);
      if (!key) return { ok: false, reason: "key_not_found" };
      releaseExpired(keyId, now);
      governance.roll(key, now);
      const reason = keyGuard(key, now, amount);
      if (reason) return { ok: false, reason, key: copyKey(key) };
      const insertCharge = assertNewCharge(charge);
      key.budgetUsed += amount;
      key.lastUsedAt = now;
      if (insertCharge && charge) charges.set(charge.chargeId, copyCharge(charge));
      return { ok: true, key: copyKey(key) };
    },

    async expireIntents(now, limit) {
      const due: IntentRecord[] = [];
      for (const ids of authorized.values()) {
        for (const id of ids) {
          const intent = intents.get(id);
          if (intent && intent.expiresAt <= now) due.push(intent);
        }
      }
      due.sort((a, b) => a.expiresAt - b.expiresAt || (a.intentId < b.intentId ? -1 : a.intentId > b.intentId ? 1 : 0));
      const batch = due.slice(0, Math.max(0, limit));
      for (const intent of batch) finish(intent, "expired", now);
      return batch.length;
    },

    async releaseOverdueIntents(keyIds, now) {
      let n = 0;
      for (const keyId of new Set(keyIds)) n += releaseExpired(keyId, now);
      return n;
    },

    async getIntent(intentId, now) {
      const intent = intents.get(intentId);
      if (!intent) return null;
      if (now !== undefined && intent.status === "authorized" && intent.expiresAt <= now) finish(intent, "expired", now);
      return copyIntent(intent);
    },

    async listIntents(owner, options) {
      const page = memoryIntentPage([...intents.values()].filter((i) => i.owner === owner), options);
      return { intents: page.intents.map(copyIntent), nextCursor: page.nextCursor };
    },

    ...createMemoryChargeStore(charges),
    ...createMemoryFeedbackStore(),
    ...createMemoryAgentStore(),
    ...createMemoryDispenserStore(),
    ...video.store,
    ...createMemoryPaymentNonceStore(video.insert),
    ...createMemoryTranscriptRestStore(),
    ...createMemoryAuthStore(),
    ...createMemoryUsage({ charges, intents, authorized }),
    async close() {},
    ready: async () => ({ ok: true, detail: "in-memory store" }),
    async countOpenIntents(now) {
      let n = 0;
      for (const ids of authorized.values()) for (const id of ids) if ((intents.get(id)?.expiresAt ?? 0) > now) n++;
      return n;
    },
  };
}
