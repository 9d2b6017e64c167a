/**
 * Key governance on the memory store: budget windows rolled forward in place, per-model cap
 * counters, key updates with their events, and token rotation. Everything here runs without an
 * `await`, inside the memory store's own methods, so each operation stays atomic.
 */
import { windowLapsed, windowStart } from "../keys/period.js";
import { isLiveKey, tooManyKeys } from "./key-limits.js";
import type { KeyEventRecord, KeyPatch, KeyRecord, ModelSpendRecord, UpdateKeyResult } from "./types.js";

const slot = (keyId: string, scope: string) => `${keyId}\u0000${scope}`;

/** The governance state of one memory store and the operations on it. */
export function createMemoryGovernance(keys: Map<string, KeyRecord>, keyIdByToken: Map<string, string>, copyKey: (k: KeyRecord) => KeyRecord) {
  const spend = new Map<string, ModelSpendRecord>();
  const events: KeyEventRecord[] = [];
  const previousByToken = new Map<string, string>();

  /** Rolls a lapsed window of `key` forward in place (used 0, the current start). */
  function roll(key: KeyRecord, now: number): void {
    if (key.budgetPeriod && windowLapsed(key, now)) {
      key.budgetUsed = 0n;
      key.periodStart = windowStart(key.budgetPeriod, now);
    }
  }

  /** The counters of `scope` on `key`, created empty, rolled like the key's window. */
  function counters(key: KeyRecord, scope: string, now: number): ModelSpendRecord {
    let rec = spend.get(slot(key.keyId, scope));
    if (!rec) {
      rec = { keyId: key.keyId, scope, budgetUsed: 0n, budgetReserved: 0n, ...(key.budgetPeriod ? { periodStart: windowStart(key.budgetPeriod, now) } : {}) };
      spend.set(slot(key.keyId, scope), rec);
    }
    if (key.budgetPeriod && (rec.periodStart ?? 0) < windowStart(key.budgetPeriod, now)) {
      rec.budgetUsed = 0n;
      rec.periodStart = windowStart(key.budgetPeriod, now);
    }
    return rec;
  }

  /** Applies a patch to a copy of `key` (the caller checks the limit guard). */
  function patched(key: KeyRecord, patch: KeyPatch, now: number): KeyRecord {
    const next: KeyRecord = Object.assign({}, key);
    const set = <K extends keyof KeyRecord>(field: K, value: KeyRecord[K] | null | undefined) => {
      if (value === undefined) return;
      if (value === null) delete next[field];
      else next[field] = value;
    };
    set("name", patch.name);
    set("budgetLimit", patch.budgetLimit);
    set("expiresAt", patch.expiresAt);
    set("models", patch.models ? [...patch.models] : patch.models);
    set("modelBudgets", patch.modelBudgets ? { ...patch.modelBudgets } : patch.modelBudgets);
    set("rateLimit", patch.rateLimit ? { ...patch.rateLimit } : patch.rateLimit);
    if (patch.budgetPeriod === null) {
      delete next.budgetPeriod;
      delete next.periodStart;
    } else if (patch.budgetPeriod !== undefined && patch.budgetPeriod !== key.budgetPeriod) {
      next.budgetPeriod = patch.budgetPeriod;
      next.periodStart = windowStart(patch.budgetPeriod, now);
      next.budgetUsed = 0n;
    }
    return next;
  }

  return {
    roll,
    counters,

    /** The key whose current or previous token hashes to `tokenHash`. */
    keyIdOf: (tokenHash: string) => keyIdByToken.get(tokenHash) ?? previousByToken.get(tokenHash),

    updateKey({ keyId, patch, now, event, liveLimit }: { keyId: string; patch: KeyPatch; now: number; event: KeyEventRecord; liveLimit?: number }): UpdateKeyResult {
      const key = keys.get(keyId);
      if (!key) return { ok: false, reason: "not_found" };
      roll(key, now);
      const next = patched(key, patch, now);
      if (next.budgetLimit < next.budgetUsed + next.budgetReserved) return { ok: false, reason: "below_committed", key: copyKey(key) };
      if (liveLimit !== undefined && !isLiveKey(key, now) && isLiveKey(next, now)) {
        let live = 1;
        for (const other of keys.values()) if (other.owner === key.owner && other.keyId !== keyId && isLiveKey(other, now)) live++;
        if (live > liveLimit) throw tooManyKeys(key.owner, liveLimit);
      }
      if (patch.budgetPeriod !== undefined && patch.budgetPeriod !== null && patch.budgetPeriod !== key.budgetPeriod) {
        for (const rec of spend.values()) if (rec.keyId === keyId) Object.assign(rec, { budgetUsed: 0n, periodStart: next.periodStart });
      }
      keys.set(keyId, next);
      events.push(structuredClone(event));
      return { ok: true, key: copyKey(next) };
    },

    rotateKey({ keyId, tokenHash, previousValidUntil, event }: { keyId: string; tokenHash: string; previousValidUntil: number; event: KeyEventRecord }): KeyRecord | null {
      const key = keys.get(keyId);
      if (!key) return null;
      if (keyIdByToken.has(tokenHash) || previousByToken.has(tokenHash)) throw new Error("memory store: duplicate tokenHash");
      if (key.previousTokenHash) previousByToken.delete(key.previousTokenHash);
      keyIdByToken.delete(key.tokenHash);
      previousByToken.set(key.tokenHash, keyId);
      keyIdByToken.set(tokenHash, keyId);
      key.previousTokenHash = key.tokenHash;
      key.previousTokenValidUntil = previousValidUntil;
      key.tokenHash = tokenHash;
      events.push(structuredClone(event));
      return copyKey(key);
    },

    listKeyEvents(keyId: string, { limit, cursor }: { limit: number; cursor?: { at: number; eventId: string } }) {
      const mine = events
        .filter((e) => e.keyId === keyId)
        .sort((a, b) => b.at - a.at || (a.eventId < b.eventId ? 1 : a.eventId > b.eventId ? -1 : 0))
        .filter((e) => !cursor || e.at < cursor.at || (e.at === cursor.at && e.eventId < cursor.eventId));
      const page = mine.slice(0, limit).map((e) => structuredClone(e));
      const last = page.at(-1);
      return { events: page, nextCursor: mine.length > limit && last ? { at: last.at, eventId: last.eventId } : null };
    },

    getModelSpend: (keyId: string): ModelSpendRecord[] =>
      [...spend.values()].filter((r) => r.keyId === keyId).map((r) => ({ ...r })).sort((a, b) => (a.scope < b.scope ? -1 : 1)),
  };
}
