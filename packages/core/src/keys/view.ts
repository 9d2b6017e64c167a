/** The wire views of keys and the budget headers (CONTRACT.md "Service keys"). */
import type { KeyRecord } from "../store/types.js";

/** Derived key status. */
export type KeyStatus = "active" | "revoked" | "expired" | "exhausted";

/** Remaining budget: limit − used − reserved. */
export function remainingOf(key: KeyRecord): bigint {
  return key.budgetLimit - key.budgetUsed - key.budgetReserved;
}

/** revoked > expired > exhausted > active. */
export function statusOf(key: KeyRecord, now: number): KeyStatus {
  if (key.revokedAt !== undefined) return "revoked";
  if (key.expiresAt <= now) return "expired";
  if (remainingOf(key) <= 0n) return "exhausted";
  return "active";
}

/** The key as list and inspect return it: no token material. */
export function keyView(key: KeyRecord, now: number) {
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
  };
}

/** `x-key-budget-limit|used|reserved|remaining` for every key-billed response. */
export function budgetHeaders(key: KeyRecord): Record<string, string> {
  return {
    "x-key-budget-limit": key.budgetLimit.toString(),
    "x-key-budget-used": key.budgetUsed.toString(),
    "x-key-budget-reserved": key.budgetReserved.toString(),
    "x-key-budget-remaining": remainingOf(key).toString(),
  };
}
