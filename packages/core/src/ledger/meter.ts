/**
 * The `meter` object of prepare and settle: either usage evidence for a model
 * (`{modelId, provider?, modality, usage?, media?}`, as `/api/payments/meter/model` takes) or a
 * line-item meter (`{subject:"<provider>:<name>", lineItems:[{key, quantity, unit?, unitPriceUsd?, when?}]}`).
 *
 * Pricing policy (docs/payments.md "Metering"): a catalog model is priced by the catalog only
 * (caller `unit`/`unitPriceUsd` are ignored); any other subject (e.g. `acme:web-search`) is priced
 * by the caller's line items, exactly, plus the platform fee. Settle never exceeds the reservation.
 */
import { z } from "zod";
import type { Catalog } from "../catalog/catalog.js";
import type { ModelCard } from "../catalog/card.js";
import { GatewayError, invalidRequest } from "../errors.js";
import { parseDecimal } from "../money.js";
import { decimalInput, priceCallerLines, unitInput, type CallerLine } from "../metering/caller-priced.js";
import { priceQuantities, selectionFor, wireLineItems, type Priced, type Selection, type WireLineItem } from "../metering/pricing.js";
import { mediaSchema, priceUsage, usageSchema, usageSelection, type Media, type Usage } from "../metering/usage.js";

const usageMeter = z.object({
  modelId: z.string().min(1).max(200),
  provider: z.string().min(1).max(64).optional(),
  modality: z.string().min(1).max(32),
  usage: usageSchema.optional(),
  media: mediaSchema.optional(),
});

const lineMeter = z.object({
  subject: z.string().min(3).max(300).regex(/^[a-z0-9-]+:.+$/, 'must be "<provider>:<name>"'),
  lineItems: z
    .array(
      z.object({
        key: z.string().min(1).max(64),
        quantity: decimalInput,
        /** Caller-priced subjects only: the unit `unitPriceUsd` is quoted in. */
        unit: unitInput.optional(),
        /** Caller-priced subjects only; ignored for catalog models. */
        unitPriceUsd: decimalInput.optional(),
        when: z.record(z.string(), z.string()).optional(),
      }),
    )
    .min(1)
    .max(50),
});

/** The zod schema of a meter (either form). Quantities and prices come out as canonical decimal strings. */
export const meterSchema = z.union([usageMeter, lineMeter]);
export type MeterInput = z.output<typeof meterSchema>;
type LineMeterInput = z.output<typeof lineMeter>;

/** A priced meter: the amounts, the `<provider>:<name>` subject, and whether the catalog priced it. */
export interface PricedMeter {
  readonly priced: Priced;
  readonly subject: string;
  /** True when the subject is a catalog model (catalog prices); false for caller-priced subjects. */
  readonly known: boolean;
}

/** The card a usage meter names, with its modality checked. */
export function meterCard(catalog: Catalog, modelId: string, provider: string | undefined, modality: string): ModelCard {
  const card = catalog.get(modelId, provider);
  if (!card.operations.some((op) => op.modality === modality))
    throw invalidRequest(`${card.provider}:${card.modelId} does not bill modality "${modality}" (it serves ${[...new Set(card.operations.map((o) => o.modality))].join(", ")})`, "modality");
  return card;
}

/** The caller's prices of a line meter whose subject is not in the catalog; throws naming the missing field. */
function callerLines(meter: LineMeterInput): CallerLine[] {
  if (meter.lineItems.every((l) => l.unitPriceUsd === undefined))
    throw new GatewayError(
      "model_not_found",
      `"${meter.subject}" is not a catalog model; to meter it, give each line item its unit and unitPriceUsd (caller-priced).`,
      { param: "meter.subject" },
    );
  return meter.lineItems.map((l, i) => {
    for (const field of ["unit", "unitPriceUsd"] as const)
      if (l[field] === undefined) throw invalidRequest(`meter.lineItems.${i}.${field} is required: "${meter.subject}" is not a catalog model, so its line items are caller-priced`, `meter.lineItems.${i}.${field}`);
    return { key: l.key, unit: l.unit!, quantity: l.quantity, unitPriceUsd: l.unitPriceUsd! };
  });
}

/** Prices a meter of either form with the platform fee (catalog models by the catalog, other subjects by the caller). */
export function priceMeter(catalog: Catalog, meter: MeterInput, feeBps: number): PricedMeter {
  if ("modelId" in meter) {
    const card = meterCard(catalog, meter.modelId, meter.provider, meter.modality);
    return { priced: priceUsage(card, meter.usage, meter.media, feeBps), subject: `${card.provider}:${card.modelId}`, known: true };
  }
  const colon = meter.subject.indexOf(":");
  const card = catalog.find(meter.subject.slice(colon + 1), meter.subject.slice(0, colon));
  if (!card) return { priced: priceCallerLines(callerLines(meter), feeBps), subject: meter.subject, known: false };
  const quantities = meter.lineItems.map((l) => ({ key: l.key, quantity: parseDecimal(l.quantity)!, selection: selectionFor(card, l.when ?? {}) }));
  return { priced: priceQuantities(card, quantities, selectionFor(card, {}), feeBps), subject: meter.subject, known: true };
}

/** A line of the `meter` a quote hands back; `when` (variant-priced keys only) pins the variant at settle. */
export interface QuoteMeterLine extends Omit<WireLineItem, "amountWei"> {
  readonly when?: Selection;
}

/**
 * The answer of `POST /api/payments/meter/model`, shaped as the origin client's `ModelMeterQuote`:
 * priced lines (numbers for quantity and price, strings for amounts), `known`, and a line-item
 * `meter` that settles (or prepares) to the same amount.
 */
export function modelMeterQuote(card: ModelCard, usage: Usage | undefined, media: Media | undefined, feeBps: number) {
  const priced = priceUsage(card, usage, media, feeBps);
  const selection = usageSelection(card, media);
  const subject = `${card.provider}:${card.modelId}`;
  const lineItems = wireLineItems(priced.lineItems);
  const meterLines = lineItems.map(({ amountWei: _amount, ...line }): QuoteMeterLine => {
    const names = [...new Set(card.pricing.filter((p) => p.key === line.key).flatMap((p) => Object.keys(p.when ?? {})))].filter((n) => selection[n] !== undefined);
    return names.length === 0 ? line : Object.assign({}, line, { when: Object.fromEntries(names.map((n) => [n, selection[n]!])) });
  });
  return {
    modelId: card.modelId,
    provider: card.provider,
    subject,
    known: true,
    lineItems,
    providerAmountWei: priced.providerAmount.toString(),
    platformFeeWei: priced.platformFee.toString(),
    finalAmountWei: priced.finalAmount.toString(),
    meter: { subject, lineItems: meterLines },
  };
}
