/**
 * The `meter` object of prepare and settle: either usage evidence for a model
 * (`{modelId, provider?, modality, usage?, media?}`, as `/api/payments/meter/model` takes) or a
 * line-item meter (`{subject:"<provider>:<modelId>", lineItems:[{key, quantity, when?}]}`).
 * Both are priced from the catalog card, never from client-sent prices.
 */
import { z } from "zod";
import type { Catalog } from "../catalog/catalog.js";
import type { ModelCard } from "../catalog/card.js";
import { invalidRequest } from "../errors.js";
import { parseDecimal } from "../money.js";
import { priceQuantities, selectionFor, type Priced } from "../metering/pricing.js";
import { mediaSchema, priceUsage, usageSchema } from "../metering/usage.js";

const usageMeter = z.object({
  modelId: z.string().min(1).max(200),
  provider: z.string().min(1).max(64).optional(),
  modality: z.string().min(1).max(32),
  usage: usageSchema.optional(),
  media: mediaSchema.optional(),
});

const lineMeter = z.object({
  subject: z.string().min(3).max(300).regex(/^[a-z0-9-]+:.+$/, 'must be "<provider>:<modelId>"'),
  lineItems: z
    .array(
      z.object({
        key: z.string().min(1).max(64),
        quantity: z.union([z.number().min(0), z.string()]).transform(String).refine((q) => parseDecimal(q) !== null, "must be a non-negative decimal"),
        when: z.record(z.string(), z.string()).optional(),
      }),
    )
    .min(1)
    .max(50),
});

/** The zod schema of a meter (either form). */
export const meterSchema = z.union([usageMeter, lineMeter]);
export type MeterInput = z.output<typeof meterSchema>;

/** The card a usage meter names, with its modality checked. */
export function meterCard(catalog: Catalog, modelId: string, provider: string | undefined, modality: string): ModelCard {
  const card = catalog.get(modelId, provider);
  if (!card.operations.some((op) => op.modality === modality))
    throw invalidRequest(`${card.provider}:${card.modelId} does not bill modality "${modality}" (it serves ${[...new Set(card.operations.map((o) => o.modality))].join(", ")})`, "modality");
  return card;
}

/** Prices a meter of either form with the platform fee. */
export function priceMeter(catalog: Catalog, meter: MeterInput, feeBps: number): Priced {
  if ("modelId" in meter) return priceUsage(meterCard(catalog, meter.modelId, meter.provider, meter.modality), meter.usage, meter.media, feeBps);
  const colon = meter.subject.indexOf(":");
  const card = catalog.get(meter.subject.slice(colon + 1), meter.subject.slice(0, colon));
  const quantities = meter.lineItems.map((l) => ({ key: l.key, quantity: parseDecimal(l.quantity)!, selection: selectionFor(card, l.when ?? {}) }));
  return priceQuantities(card, quantities, selectionFor(card, {}), feeBps);
}
