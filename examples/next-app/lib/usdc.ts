/**
 * USDC amounts for display. The gateway sends amounts as decimal strings of atomic units
 * (6 decimals); they are summed as bigint and formatted by string arithmetic, never as floats.
 */

/** Atomic units per USDC. */
export const USDC_DECIMALS = 6;

const DIGITS = /^\d+$/;

/**
 * Parses a wire amount (digits-only string of atomic units) to bigint.
 * @throws TypeError when the value is not a non-negative integer string or bigint.
 */
export function parseAtomic(value: string | bigint): bigint {
  if (typeof value === "bigint") {
    if (value < 0n) throw new TypeError(`negative USDC amount: ${value}`);
    return value;
  }
  if (!DIGITS.test(value)) throw new TypeError(`not a USDC amount in atomic units: ${JSON.stringify(value)}`);
  return BigInt(value);
}

/**
 * Formats atomic units as USDC with all 6 decimals and thousands separators:
 * `"1234567890"` → `"1,234.567890"`. Accepts what {@link parseAtomic} accepts.
 */
export function formatUsdc(value: string | bigint): string {
  const atomic = parseAtomic(value);
  const scale = 10n ** BigInt(USDC_DECIMALS);
  const whole = (atomic / scale).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const fraction = (atomic % scale).toString().padStart(USDC_DECIMALS, "0");
  return `${whole}.${fraction}`;
}

/** The budget fields of a key as `GET /api/keys` returns them. */
export interface KeyBudget {
  budgetLimit: string;
  budgetUsed: string;
  budgetReserved: string;
  budgetRemaining: string;
  status: string;
}

/** Totals over a wallet's keys, in atomic units. */
export interface SpendTotals {
  /** Settled spend: the sum of `budgetUsed`. */
  settled: bigint;
  /** Held by authorized intents: the sum of `budgetReserved`. */
  reserved: bigint;
  /** `settled + reserved`. */
  committed: bigint;
  /** Budget still spendable: the sum of `budgetRemaining` over `active` keys only. */
  available: bigint;
}

/**
 * Sums the budgets of all keys (revoked and expired ones included: their spend happened).
 * @throws TypeError when an amount is malformed.
 */
export function spendTotals(keys: readonly KeyBudget[]): SpendTotals {
  let settled = 0n;
  let reserved = 0n;
  let available = 0n;
  for (const key of keys) {
    settled += parseAtomic(key.budgetUsed);
    reserved += parseAtomic(key.budgetReserved);
    if (key.status === "active") available += parseAtomic(key.budgetRemaining);
  }
  return { settled, reserved, committed: settled + reserved, available };
}
