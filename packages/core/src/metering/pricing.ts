/**
 * The one pricing function. Quotes, x402 prices, `/api/payments/meter/model`, prepare/settle
 * meters and media billing all price through {@link priceQuantities}, so a quote and the settled
 * amount for the same usage agree to the atom.
 *
 * Line amount = ceil(quantity × unitPriceUsd × 10^6 / unitScale), exact decimal arithmetic.
 * Platform fee = ceil(provider × feeBps / 10000).
 */
import { PRICE_UNITS, type ModelCard, type PriceLine } from "../catalog/card.js";
import { invalidRequest } from "../errors.js";
import { ceilDiv, parseDecimal, pow10, USDC_SCALE, type Decimal } from "../money.js";

/** One priced line of a meter or receipt. Amounts are decimal strings on the wire. */
export interface LineItem {
  readonly key: string;
  readonly unit: string;
  /** Decimal string (tokens, images, characters, seconds, requests). */
  readonly quantity: string;
  readonly unitPriceUsd: string;
  readonly amountWei: string;
}

/** The priced result. */
export interface Priced {
  readonly lineItems: LineItem[];
  readonly providerAmount: bigint;
  readonly platformFee: bigint;
  readonly finalAmount: bigint;
}

/** A quantity to price under one price key; `selection` picks among `when` variants. */
export interface Quantity {
  readonly key: string;
  readonly quantity: Decimal;
  /** Overrides the shared selection for this line. */
  readonly selection?: Selection;
}

/** Price-variant selection, e.g. `{ size: "1024x1024", quality: "hd" }`. */
export type Selection = Readonly<Record<string, string>>;

/** The variant selection of a request: the card's param defaults overlaid with the request's values. */
export function selectionFor(card: ModelCard, given: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, spec] of Object.entries(card.params ?? {})) if (spec.default !== undefined && spec.default !== null) out[name] = String(spec.default);
  for (const [name, value] of Object.entries(given)) if (typeof value === "string" || typeof value === "number") out[name] = String(value);
  return out;
}

/**
 * The values of the params `card`'s prices depend on (the names in its price lines' `when`), from
 * {@link selectionFor}: the card's defaults overlaid with `given`. What a paid call must send
 * upstream so that what is rendered is what was priced, e.g. `{ resolution: "720p" }` for a
 * model priced by resolution whose caller named none.
 */
export function pricedSelection(card: ModelCard, given: Readonly<Record<string, unknown>>): Record<string, string> {
  const selection = selectionFor(card, given);
  const out: Record<string, string> = {};
  for (const line of card.pricing) for (const name of Object.keys(line.when ?? {})) if (selection[name] !== undefined) out[name] = selection[name];
  return out;
}

/**
 * The price line for `key` under `selection`: among the lines of that key whose `when` entries
 * all equal the selection, the most specific one. Throws 400 when the card has variants for
 * the key but none matches (the message lists the priced variants).
 */
export function priceLineFor(card: ModelCard, key: string, selection: Selection): PriceLine {
  const lines = card.pricing.filter((l) => l.key === key);
  if (lines.length === 0) throw invalidRequest(`${card.provider}:${card.modelId} has no price for "${key}" (it prices ${[...new Set(card.pricing.map((l) => l.key))].join(", ")})`);
  let best: PriceLine | undefined;
  let bestSpecificity = -1;
  for (const line of lines) {
    const when = Object.entries(line.when ?? {});
    if (!when.every(([k, v]) => selection[k] === v)) continue;
    if (when.length > bestSpecificity) {
      best = line;
      bestSpecificity = when.length;
    }
  }
  if (!best) {
    const variants = lines.map((l) => JSON.stringify(l.when ?? {})).join(", ");
    const names = [...new Set(lines.flatMap((l) => Object.keys(l.when ?? {})))];
    const wanted = names.map((k) => `${k}=${selection[k] ?? "(unset)"}`).join(", ");
    // Name the param whose value no variant prices (e.g. size=512x512), else the first one.
    const param = names.find((k) => !lines.some((l) => l.when?.[k] !== undefined && l.when[k] === selection[k])) ?? names[0];
    throw invalidRequest(`${card.provider}:${card.modelId} has no "${key}" price for ${wanted}; priced variants: ${variants}`, param);
  }
  return best;
}

/** Formats an exact decimal canonically: no exponent, no trailing fractional zeros ("0.0000004"). */
export function formatDecimal(d: Decimal): string {
  if (d.exp === 0) return d.units.toString();
  const s = d.units.toString().padStart(d.exp + 1, "0");
  return `${s.slice(0, -d.exp)}.${s.slice(-d.exp)}`.replace(/\.?0+$/, "");
}

/** ceil(quantity × price × 10^6 / scale) in atomic units, exact (`scale` > 0). */
export function scaledAmount(quantity: Decimal, price: Decimal, scale: bigint): bigint {
  return ceilDiv(quantity.units * price.units * USDC_SCALE, pow10(quantity.exp + price.exp) * scale);
}

/** Parsed unit prices: a catalog has few distinct ones and every paid call prices two lines. */
const parsedPrices = new Map<string, Decimal>();

/** Prices one line exactly: ceil(quantity × price × 10^6 / scale). */
export function lineAmount(quantity: Decimal, unitPriceUsd: string, unit: keyof typeof PRICE_UNITS): bigint {
  let price = parsedPrices.get(unitPriceUsd);
  if (!price) {
    const parsed = parseDecimal(unitPriceUsd);
    if (!parsed) throw new Error(`malformed price ${unitPriceUsd}`);
    // Caller-priced meters bring arbitrary prices: the memo stays bounded.
    if (parsedPrices.size >= 4096) parsedPrices.clear();
    parsedPrices.set(unitPriceUsd, (price = parsed));
  }
  return scaledAmount(quantity, price, PRICE_UNITS[unit].scale);
}

/**
 * Prices quantities against a card. Zero quantities are skipped. `feeBps` is the platform fee in
 * basis points (100 = 1%).
 */
export function priceQuantities(card: ModelCard, quantities: readonly Quantity[], selection: Selection, feeBps: number): Priced {
  const lineItems: LineItem[] = [];
  let provider = 0n;
  for (const q of quantities) {
    if (q.quantity.units === 0n) continue;
    const line = priceLineFor(card, q.key, q.selection ?? selection);
    const amount = lineAmount(q.quantity, line.unitPriceUsd, line.unit);
    provider += amount;
    lineItems.push({ key: line.key, unit: line.unit, quantity: formatDecimal(q.quantity), unitPriceUsd: line.unitPriceUsd, amountWei: amount.toString() });
  }
  const platformFee = ceilDiv(provider * BigInt(feeBps), 10_000n);
  return { lineItems, providerAmount: provider, platformFee, finalAmount: provider + platformFee };
}

/**
 * A priced line as the origin API's client types it (`MeteredQuotedLineItem`): `quantity` and
 * `unitPriceUsd` are JSON numbers (they are not amounts); `amountWei` stays a decimal string.
 */
export interface WireLineItem {
  readonly key: string;
  readonly unit: string;
  readonly quantity: number;
  readonly unitPriceUsd: number;
  readonly amountWei: string;
}

/**
 * The wire form of priced lines. Every quantity and price that reaches here is exact as a JSON
 * number (counts are safe integers, seconds have at most 6 decimals, catalog and caller prices at
 * most 15 significant digits), so the number's text is the decimal that was priced.
 */
export function wireLineItems(lines: readonly LineItem[]): WireLineItem[] {
  return lines.map((l) => ({ key: l.key, unit: l.unit, quantity: Number(l.quantity), unitPriceUsd: Number(l.unitPriceUsd), amountWei: l.amountWei }));
}
