/**
 * Caller-priced line items: meters whose `subject` is not a catalog model are priced from the
 * caller's own `unit` and `unitPriceUsd` (as the origin API's client sends them), with the same
 * exact arithmetic as the catalog: line = ceil(quantity × unitPriceUsd × 10^6 / unitScale),
 * fee = ceil(provider × feeBps / 10000). No float ever touches an amount.
 *
 * Quantities and prices arrive as JSON numbers (`0.0000004`) or decimal strings (`"0.0000004"`).
 * A number is read through its shortest round-trip decimal text (ECMAScript `Number#toString`,
 * e.g. `4e-7`), whose exponent is shifted exactly in decimal, never multiplied as a float.
 */
import { z } from "zod";
import { PRICE_UNITS } from "../catalog/card.js";
import { ceilDiv, parseDecimal, type Decimal } from "../money.js";
import { formatDecimal as decimalText, scaledAmount, type LineItem, type Priced } from "./pricing.js";

/** At most this many digits before the point in a caller quantity or price. */
export const MAX_INTEGER_DIGITS = 16;
/** At most this many digits after the point in a caller quantity or price. */
export const MAX_FRACTION_DIGITS = 18;

const NUMBER_TEXT = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

/** The exact decimal a JSON number stands for: its shortest decimal text, exponent shifted exactly. */
function decimalOfNumber(value: number): Decimal | null {
  if (!Number.isFinite(value) || value < 0) return null;
  const m = NUMBER_TEXT.exec(String(value));
  if (!m) return null;
  const frac = m[2] ?? "";
  let units = BigInt((m[1] ?? "0") + frac);
  let exp = frac.length - Number(m[3] ?? "0");
  if (exp < 0) {
    units *= 10n ** BigInt(-exp);
    exp = 0;
  }
  return { units, exp };
}

/**
 * Reads a caller quantity or price exactly: a non-negative finite JSON number or a plain decimal
 * string (`"12"`, `"0.0000004"`; no sign, exponent or spaces), at most {@link MAX_INTEGER_DIGITS}
 * digits before the point, {@link MAX_FRACTION_DIGITS} after, and no more significant digits than a
 * JSON number carries exactly (so the value can be answered back as a number unchanged).
 * Returns the canonical decimal text, or the problem (without the field name).
 */
export function checkDecimalInput(value: unknown): { text: string } | { problem: string } {
  const d = typeof value === "number" ? decimalOfNumber(value) : typeof value === "string" ? parseDecimal(value) : null;
  if (!d) return { problem: 'must be a non-negative decimal: a JSON number or a string such as "0.0000004"' };
  const text = decimalText(d);
  const [whole = "", frac = ""] = text.split(".");
  if (whole.replace(/^0+(?=\d)/, "").length > MAX_INTEGER_DIGITS) return { problem: `must be below 10^${MAX_INTEGER_DIGITS}` };
  if (frac.length > MAX_FRACTION_DIGITS) return { problem: `must have at most ${MAX_FRACTION_DIGITS} fractional digits` };
  const back = decimalOfNumber(Number(text));
  if (!back || decimalText(back) !== text) return { problem: "has more significant digits than a JSON number holds exactly (15 significant digits, or a safe integer)" };
  return { text };
}

/** zod input for a caller quantity or price; the output is its canonical decimal string. */
export const decimalInput = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const r = checkDecimalInput(value);
  if ("problem" in r) {
    ctx.addIssue({ code: "custom", message: r.problem });
    return z.NEVER;
  }
  return r.text;
});

/** A unit name: snake case, as the catalog's (`usd_per_request`) or the origin's (`usd_per_1k_queries`). */
export const unitInput = z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, "must be a unit name such as usd_per_request");

/**
 * How many of a unit's quantity one `unitPriceUsd` pays for. The catalog's units keep their scale
 * (`usd_per_1m_tokens` 10^6, `usd_per_1k_characters` 1000, `usd_per_minute` 60 seconds); other names
 * follow the origin's rule: `…_per_1m_…` 10^6, `…_per_<n>k_…` n×1000, `…_per_<n>m_…` n×10^6,
 * `…_per_<n>_seconds` n; anything else 1 (a price per unit).
 */
export function unitScale(unit: string): bigint {
  const name = unit.toLowerCase();
  if (Object.hasOwn(PRICE_UNITS, name)) return PRICE_UNITS[name as keyof typeof PRICE_UNITS].scale;
  const metric = /_per_([1-9]\d{0,8})(k|m)_/.exec(name);
  if (metric) return BigInt(metric[1]!) * (metric[2] === "m" ? 1_000_000n : 1_000n);
  const seconds = /_per_([1-9]\d{0,8})_seconds$/.exec(name);
  if (seconds) return BigInt(seconds[1]!);
  return 1n;
}

/** One caller-priced line after validation (canonical decimal strings). */
export interface CallerLine {
  readonly key: string;
  readonly unit: string;
  readonly quantity: string;
  readonly unitPriceUsd: string;
}

/** Prices caller lines exactly (zero quantities skipped) and adds the platform fee. */
export function priceCallerLines(lines: readonly CallerLine[], feeBps: number): Priced {
  const lineItems: LineItem[] = [];
  let provider = 0n;
  for (const line of lines) {
    const quantity = parseDecimal(line.quantity)!;
    if (quantity.units === 0n) continue;
    const amount = scaledAmount(quantity, parseDecimal(line.unitPriceUsd)!, unitScale(line.unit));
    provider += amount;
    lineItems.push({ key: line.key, unit: line.unit, quantity: line.quantity, unitPriceUsd: line.unitPriceUsd, amountWei: amount.toString() });
  }
  const platformFee = ceilDiv(provider * BigInt(feeBps), 10_000n);
  return { lineItems, providerAmount: provider, platformFee, finalAmount: provider + platformFee };
}
