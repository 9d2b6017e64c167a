/**
 * Turns usage evidence (token counts, media counts) into the quantities of a card's price keys.
 * The keys are those of the bundled catalog (docs/catalog.md): `input_tokens`, `output_tokens`,
 * `cached_input_tokens`, `image`, `characters`, `audio_seconds`, `video_seconds`, `request`.
 * (`input_image_tokens`, an image edit's input images, is priced by the edit route alone: ../media/image-pricing.ts.)
 */
import { z } from "zod";
import type { ModelCard } from "../catalog/card.js";
import { invalidRequest } from "../errors.js";
import { decimalFromNumber, type Decimal } from "../money.js";
import { priceQuantities, selectionFor, type Priced, type Quantity } from "./pricing.js";

const count = z.union([z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), z.string().regex(/^\d{1,15}$/).transform(Number)]);
const measure = z.union([z.number().min(0).max(1e9), z.string().regex(/^\d{1,9}(\.\d{1,6})?$/).transform(Number)]);

/** Token usage, as OpenAI-style clients report it. */
export const usageSchema = z.strictObject({
  promptTokens: count.optional(),
  completionTokens: count.optional(),
  totalTokens: count.optional(),
  cachedInputTokens: count.optional(),
  reasoningTokens: count.optional(),
});
export type Usage = z.output<typeof usageSchema>;

/** Media evidence; extra string fields (e.g. `resolution`) select price variants. */
export const mediaSchema = z
  .object({
    images: count.optional(),
    size: z.string().max(64).optional(),
    quality: z.string().max(64).optional(),
    seconds: measure.optional(),
    characters: count.optional(),
    requests: count.optional(),
  })
  .catchall(z.union([z.string().max(64), z.number()]));
export type Media = z.output<typeof mediaSchema>;

const dec = (n: number | undefined): Decimal => {
  const d = n === undefined ? null : decimalFromNumber(n);
  return d ?? { units: 0n, exp: 0 };
};

/** The quantities of a card's price keys given usage and media evidence. */
export function quantitiesFor(card: ModelCard, usage: Usage | undefined, media: Media | undefined): Quantity[] {
  const keys = new Set(card.pricing.map((l) => l.key));
  const out: Quantity[] = [];
  const add = (key: string, n: number | undefined) => {
    if (keys.has(key) && n !== undefined && n > 0) out.push({ key, quantity: dec(n) });
  };
  if (usage) {
    const cached = keys.has("cached_input_tokens") ? (usage.cachedInputTokens ?? 0) : 0;
    const prompt = usage.promptTokens ?? (usage.completionTokens === undefined ? usage.totalTokens : undefined);
    if (prompt !== undefined && cached > prompt) throw invalidRequest("usage.cachedInputTokens cannot exceed usage.promptTokens", "usage.cachedInputTokens");
    add("input_tokens", prompt === undefined ? undefined : prompt - cached);
    add("cached_input_tokens", cached);
    add("output_tokens", usage.completionTokens);
  }
  if (media) {
    add("image", media.images);
    add("characters", media.characters);
    add("audio_seconds", media.seconds);
    add("video_seconds", media.seconds);
    add("request", media.requests);
  }
  return out;
}

/** Prices usage/media evidence for a card with the given platform fee. */
export function priceUsage(card: ModelCard, usage: Usage | undefined, media: Media | undefined, feeBps: number): Priced {
  const quantities = quantitiesFor(card, usage, media);
  if (quantities.length === 0)
    throw invalidRequest(`nothing to meter: give usage or media that ${card.provider}:${card.modelId} prices (${[...new Set(card.pricing.map((l) => l.key))].join(", ")})`);
  return priceQuantities(card, quantities, usageSelection(card, media), feeBps);
}

/** The price-variant selection of media evidence: its non-count fields over the card's defaults. */
export function usageSelection(card: ModelCard, media: Media | undefined): Record<string, string> {
  const { images: _i, seconds: _s, characters: _c, requests: _r, ...variants } = media ?? {};
  return selectionFor(card, variants);
}
