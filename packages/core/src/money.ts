/**
 * Money is bigint atomic units (USDC, 6 decimals) everywhere. Prices are exact decimal strings.
 * Nothing in this module touches a float.
 */
import { invalidRequest } from "./errors.js";

/** USDC atomic units per 1 USD. */
export const USDC_SCALE = 1_000_000n;

/** Largest amount accepted anywhere (uint256 max), so every amount fits on-chain. */
export const MAX_AMOUNT = (1n << 256n) - 1n;

const DIGITS = /^\d{1,78}$/;

/**
 * Checks an amount input: a non-negative integer JSON number (safe integer only) or a
 * digits-only string, at most uint256. Returns the amount or the problem (without the field name).
 * @param allowZero whether 0 is accepted (default false: amounts must be positive).
 */
export function checkAmount(value: unknown, allowZero = false): bigint | string {
  let n: bigint;
  if (typeof value === "string" && DIGITS.test(value)) n = BigInt(value);
  else if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) n = BigInt(value);
  else if (typeof value === "bigint" && value >= 0n) n = value;
  else if (typeof value === "number" && Number.isInteger(value) && value > 0) return "must be sent as a digits-only string when above 2^53 (JSON numbers lose precision)";
  else return `must be a ${allowZero ? "non-negative" : "positive"} integer in USDC atomic units (digits-only string or safe integer)`;
  if (n > MAX_AMOUNT) return "must be at most 2^256-1";
  if (!allowZero && n === 0n) return "must be greater than 0";
  return n;
}

/** Like {@link checkAmount} but throws 400 `invalid_request` naming `param`. */
export function parseAmount(value: unknown, param: string, allowZero = false): bigint {
  const r = checkAmount(value, allowZero);
  if (typeof r === "string") throw invalidRequest(`${param} ${r}`, param);
  return r;
}

/** An exact decimal: value = units / 10^exp. */
export interface Decimal {
  readonly units: bigint;
  readonly exp: number;
}

const DECIMAL = /^(\d{1,30})(?:\.(\d{1,18}))?$/;

/** Parses a non-negative decimal string such as "2.50" exactly; returns null if malformed. */
export function parseDecimal(text: string): Decimal | null {
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const frac = m[2] ?? "";
  return { units: BigInt((m[1] ?? "0") + frac), exp: frac.length };
}

/** Converts a non-negative number (e.g. seconds of audio) to an exact decimal via its shortest decimal string. */
export function decimalFromNumber(value: number): Decimal | null {
  if (!Number.isFinite(value) || value < 0) return null;
  const text = value.toString();
  if (/e/i.test(text)) return Number.isInteger(value) ? { units: BigInt(value), exp: 0 } : null;
  return parseDecimal(text);
}

/** ceil(a / b) for a >= 0, b > 0. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/** 10^n as bigint. */
export function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** Formats atomic units as a decimal USD string ("1.5" for 1500000n); for display only. */
export function formatUsd(atomic: bigint): string {
  const whole = atomic / USDC_SCALE;
  const frac = (atomic % USDC_SCALE).toString().padStart(6, "0").replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole.toString();
}
