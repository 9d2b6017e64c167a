/**
 * The usage read over per-day rollups: SQL stores keep, per key, UTC day and model, the sum and
 * count of the charges (maintained by the insert of each charge, in its transaction), so a read
 * of whole days costs the rollup rows in range, not the charges. Parts of a day at either end of
 * a range that is not day-aligned are read from the charges themselves.
 */

const DAY_MS = 86_400_000;

/** How a `[fromMs, toMs)` usage range splits: whole days from the rollups, partial days from the charges. */
export interface UsageRangeSplit {
  /** `[from, to)` of whole UTC days, read from the rollups; null when none. */
  days: readonly [number, number] | null;
  /** `[from, to)` ranges read from the charges (parts of a day; at most two). */
  charges: ReadonlyArray<readonly [number, number]>;
}

/** Splits `[fromMs, toMs)` into whole UTC days (rollups) and the parts of a day at its ends (charges). */
export function splitUsageRange(fromMs: number, toMs: number): UsageRangeSplit {
  if (toMs <= fromMs) return { days: null, charges: [] };
  const first = Math.ceil(fromMs / DAY_MS) * DAY_MS;
  const last = Math.floor(toMs / DAY_MS) * DAY_MS;
  if (fromMs < 0 || first >= last) return { days: null, charges: [[fromMs, toMs]] };
  const charges: Array<readonly [number, number]> = [];
  if (fromMs < first) charges.push([fromMs, first]);
  if (last < toMs) charges.push([last, toMs]);
  return { days: [first, last], charges };
}

/**
 * The longest an intent lives: from its creation to its `expiresAt`. The ledger service never
 * opens one for longer (`intentTtlMs` and a call's own TTL are clamped to it), and the stores'
 * usage read relies on it (see {@link heldKeysSince}).
 */
export const MAX_INTENT_LIFETIME_MS = 7 * 86_400_000;

/**
 * The oldest revocation or expiry of a key that may still hold an open reservation at `now`: a
 * key takes no reserve once revoked or expired, and an intent lives at most
 * {@link MAX_INTENT_LIFETIME_MS}, so every intent of a key revoked or expired before this time is
 * past its `expiresAt`. The reserved part of a usage read sums only keys live or revoked since
 * then, so it reads the wallet's recent keys, not all it ever had. One hour of slack covers the
 * clocks of several instances.
 */
export function heldKeysSince(now: number): number {
  return now - MAX_INTENT_LIFETIME_MS - 3_600_000;
}
