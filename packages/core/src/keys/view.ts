/** The wire views of keys and the budget headers (docs/payments.md "Service keys"). */
import type { KeyBudget, KeyRecord, ModelSpendRecord } from "../store/types.js";
import { rolled, windowEnd, windowStart } from "./period.js";

/** Derived key status. */
export type KeyStatus = "active" | "revoked" | "expired" | "exhausted";

/** Remaining budget: limit − used − reserved. */
export function remainingOf(key: Pick<KeyBudget, "budgetLimit" | "budgetUsed" | "budgetReserved">): bigint {
  return key.budgetLimit - key.budgetUsed - key.budgetReserved;
}

/** revoked > expired > exhausted > active. */
export function statusOf(key: KeyRecord, now: number): KeyStatus {
  if (key.revokedAt !== undefined) return "revoked";
  if (key.expiresAt <= now) return "expired";
  if (remainingOf(key) <= 0n) return "exhausted";
  return "active";
}

/** The key as list and inspect return it: no token material. Budgets are the current window's (a lapsed window shows used 0). */
export function keyView(stored: KeyRecord, now: number, spend: readonly ModelSpendRecord[] = []) {
  const key = rolled(stored, now);
  return {
    keyId: key.keyId,
    ...(key.name === undefined ? {} : { name: key.name }),
    purpose: key.purpose,
    chainId: key.chainId,
    budgetLimit: key.budgetLimit.toString(),
    budgetUsed: key.budgetUsed.toString(),
    budgetReserved: key.budgetReserved.toString(),
    budgetRemaining: remainingOf(key).toString(),
    status: statusOf(key, now),
    createdAt: key.createdAt,
    expiresAt: key.expiresAt,
    ...(key.revokedAt === undefined ? {} : { revokedAt: key.revokedAt }),
    ...(key.lastUsedAt === undefined ? {} : { lastUsedAt: key.lastUsedAt }),
    ...(key.rateLimit === undefined ? {} : { rateLimit: { requestsPerMinute: key.rateLimit.requestsPerMinute } }),
    ...(key.budgetPeriod === undefined
      ? {}
      : { budgetPeriod: key.budgetPeriod, periodStartsAt: key.periodStart!, periodEndsAt: windowEnd(key.budgetPeriod, key.periodStart!) }),
    ...(key.models === undefined ? {} : { models: [...key.models] }),
    ...(key.modelBudgets === undefined ? {} : { modelBudgets: modelBudgetsView(key, now, spend) }),
    ...(key.previousTokenValidUntil !== undefined && key.previousTokenValidUntil > now ? { previousTokenValidUntil: key.previousTokenValidUntil } : {}),
  };
}

/** What a per-model scope of `key` has used (in its current window) and holds reserved, as of `now`. */
export function scopeCommitted(key: KeyRecord, now: number, spend: readonly ModelSpendRecord[], scope: string): { used: bigint; reserved: bigint } {
  const start = key.budgetPeriod ? windowStart(key.budgetPeriod, now) : undefined;
  const rec = spend.find((r) => r.scope === scope);
  const used = rec && (start === undefined || (rec.periodStart ?? 0) >= start) ? rec.budgetUsed : 0n;
  return { used, reserved: rec?.budgetReserved ?? 0n };
}

/** Each per-model cap with its current window's counters: `{limit, used, reserved, remaining}` as decimal strings (remaining never below 0). */
function modelBudgetsView(key: KeyRecord, now: number, spend: readonly ModelSpendRecord[]) {
  const out: Record<string, { limit: string; used: string; reserved: string; remaining: string }> = {};
  for (const [scope, limit] of Object.entries(key.modelBudgets ?? {})) {
    const { used, reserved } = scopeCommitted(key, now, spend, scope);
    const left = limit - used - reserved;
    out[scope] = { limit: limit.toString(), used: used.toString(), reserved: reserved.toString(), remaining: (left > 0n ? left : 0n).toString() };
  }
  return out;
}

/** `x-key-budget-limit|used|reserved|remaining` for every key-billed response. */
export function budgetHeaders(key: KeyBudget): Record<string, string> {
  return {
    "x-key-budget-limit": key.budgetLimit.toString(),
    "x-key-budget-used": key.budgetUsed.toString(),
    "x-key-budget-reserved": key.budgetReserved.toString(),
    "x-key-budget-remaining": remainingOf(key).toString(),
  };
}
