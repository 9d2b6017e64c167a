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

// Whole part (plain, or grouped by commas in threes) with an optional fraction, or a bare fraction.
const DECIMAL_USDC = /^(?:(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d*))?|\.(\d+))$/;

/**
 * Parses a USDC amount typed by a person (`"20"`, `"0.5"`, `".5"`, `"1,234.567890"`) to atomic
 * units, by string arithmetic: at most 6 decimals, thousands separators only in groups of three,
 * no sign, no exponent. The inverse of {@link formatUsdc}.
 * @throws RangeError with a sentence for the user when the text is not such an amount.
 */
export function parseUsdc(text: string): bigint {
  const trimmed = text.trim();
  const match = DECIMAL_USDC.exec(trimmed);
  if (!match) throw new RangeError(`${JSON.stringify(trimmed)} is not a USDC amount (digits, optionally a point and up to ${USDC_DECIMALS} decimals).`);
  const whole = (match[1] ?? "0").replaceAll(",", "");
  const fraction = match[2] ?? match[3] ?? "";
  if (fraction.length > USDC_DECIMALS)
    throw new RangeError(`${JSON.stringify(trimmed)} has more than ${USDC_DECIMALS} decimals (the smallest USDC unit is 0.000001).`);
  return BigInt(whole) * 10n ** BigInt(USDC_DECIMALS) + BigInt(fraction.padEnd(USDC_DECIMALS, "0"));
}

/** The budget fields of a key as `GET /api/keys` returns them. */
export interface KeyBudget {
  budgetLimit: string;
  budgetUsed: string;
  budgetReserved: string;
  budgetRemaining: string;
  status: string;
}

/**
 * Parses a budget typed by a person ({@link parseUsdc}) that must be more than zero.
 * @throws RangeError with a sentence for the user when the text is not such an amount.
 */
export function parseBudget(text: string): bigint {
  const atomic = parseUsdc(text);
  if (atomic <= 0n) throw new RangeError("The budget limit must be more than 0 USDC.");
  return atomic;
}

/**
 * Formats atomic units as USDC without trailing zeros beyond two decimals, for short labels
 * (chart axes): `"20000"` → `"0.02"`, `"1000000"` → `"1.00"`, `"1"` → `"0.000001"`. Exact, as
 * {@link formatUsdc}.
 */
export function formatUsdcShort(value: string | bigint): string {
  return formatUsdc(value).replace(/(\.\d\d\d*?)0+$/, "$1");
}

/** Totals over a wallet's keys, in atomic units. Settled spend and open reservations stay apart. */
export interface SpendTotals {
  /** Settled spend: the sum of `budgetUsed` (each key's current budget window). */
  settled: bigint;
  /** Held by open (authorized) payment intents, not spent: the sum of `budgetReserved`. */
  reserved: bigint;
  /** Budget still spendable: the sum of `budgetRemaining` over `active` keys only. */
  available: bigint;
}

/**
 * Sums the budgets of all keys (revoked and expired ones included: their spend happened). A
 * reservation is not spend: it is summed apart and never added to `settled`.
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
  return { settled, reserved, available };
}
