/**
 * What an image generation or edit costs (docs/media.md "What is billed"): each image returned, by
 * (size, quality); and, on a card that prices them (GPT Image: OpenAI bills them beside the image),
 * the prompt's text tokens (`input_tokens`) and an edit's input image tokens (`input_image_tokens`).
 *
 * The quote (the x402 price and what a key reserves) takes the prompt's UTF-8 bytes as its tokens
 * (a bound of any byte-level tokenizer's count) and {@link INPUT_IMAGE_TOKEN_BOUND} tokens for each
 * input image the edit sends upstream. The meter bills what the upstream reports
 * (`input_tokens_details.text_tokens`, or a generation's `input_tokens`; `.image_tokens`); a count
 * it leaves out, or reports as 0, is the gateway's own: the prompt as its tokenizer counts it, the
 * input images at their bound. A metered price above the reservation is settled at the quote (the
 * rule of every paid call, see billing.ts).
 */
import type { ModelCard } from "../catalog/card.js";
import { utf8Length } from "../encoding.js";
import { invalidRequest } from "../errors.js";
import { priceQuantities, type Priced } from "../metering/pricing.js";
import { tokenCounter } from "../metering/tokens.js";
import { quantitiesFor, usageSelection } from "../metering/usage.js";
import type { ImageResult } from "../providers/types.js";

/**
 * The most image tokens one input image of a GPT Image edit is taken to cost, whatever its size and
 * `input_fidelity`. OpenAI's vision guide ("Calculating costs", GPT Image 1,
 * https://platform.openai.com/docs/guides/images-vision#calculating-costs): the image is scaled to
 * fit 2048×2048, then down until its shortest side is 512 px, and costs 65 tokens plus 129 per
 * 512-px tile, so at most 65 + 4 × 129 = 581 (four tiles: a 4:1 image); high input fidelity adds
 * 4,160 tokens (square) or 6,240 (portrait or landscape), so at most 6,821. 8,192 keeps ~20 % above
 * that for what the guide leaves out (users measure ~32 more text tokens per input image on edits,
 * and near-square sizes rounding differently than documented): text input never costs more per
 * token than image input, so the margin covers those too. The mask is counted as one more image.
 */
export const INPUT_IMAGE_TOKEN_BOUND = 8_192;

/** The most source images one edit takes (OpenAI's limit for GPT Image). */
export const MAX_EDIT_IMAGES = 16;

/** An image call as priced: the images asked for, the variant, the prompt, and an edit's input images. */
export interface ImageCall {
  readonly prompt: string;
  /** Images asked for. */
  readonly n: number;
  /** The price variant (`size`, `quality`). */
  readonly variant: Readonly<Record<string, string>>;
  /** The images an edit sends upstream (each `image` / `image[]` part, and the mask); 0 for a generation. */
  readonly inputImages: number;
}

/** The prices of one image call. */
export interface ImagePricing {
  /** The price before the upstream call: the x402 price and the key's reservation. */
  readonly quote: Priced;
  /** The price of the upstream's answer (its images and reported usage). */
  meter(result: ImageResult): Priced;
}

/**
 * 400 `invalid_request` when the request sets a variant (`size`, `quality`) that `card` does not
 * declare among its params, or a value outside the param's options: the card's price covers only
 * the outputs its own params allow (a FLUX card priced per image of at most 1 MP has no `size`),
 * and an upstream that honoured another size could bill more than the price. Checked before any
 * payment.
 */
export function checkImageVariant(card: ModelCard, variant: Readonly<Record<string, string>>): void {
  const subject = `${card.provider}:${card.modelId}`;
  for (const [name, value] of Object.entries(variant)) {
    const spec = card.params?.[name];
    if (!spec) {
      const takes = Object.keys(card.params ?? {});
      throw invalidRequest(
        `${subject} does not take \`${name}\`: its price covers only what its own parameters allow (${takes.length > 0 ? takes.join(", ") : "none"}). Leave \`${name}\` out.`,
        name,
      );
    }
    if (spec.options && !spec.options.some((o) => String(o) === value))
      throw invalidRequest(`${subject} takes ${name} ${spec.options.map(String).join(", ")}; got ${JSON.stringify(value)}.`, name);
  }
}

/** `reported` when the upstream gave a count above 0, else the gateway's own: an upstream's usage never bills nothing. */
const reportedOr = (reported: number | undefined, own: () => number): number => (reported !== undefined && reported > 0 ? reported : own());

/** Prices an image generation or edit on `card` (loads the tokenizer when the card prices the prompt's tokens). */
export async function priceImages(card: ModelCard, call: ImageCall, feeBps: number): Promise<ImagePricing> {
  const textPriced = card.pricing.some((line) => line.key === "input_tokens");
  const imagesPriced = call.inputImages > 0 && card.pricing.some((line) => line.key === "input_image_tokens");
  const edit = call.inputImages > 0;
  const counter = textPriced ? await tokenCounter() : undefined;
  const counted = () => Math.max(1, counter!.count(call.prompt));
  const imageBound = () => call.inputImages * INPUT_IMAGE_TOKEN_BOUND;
  const selection = usageSelection(card, call.variant);
  const price = (images: number, textTokens: number, imageTokens: number): Priced => {
    const quantities = quantitiesFor(card, textPriced ? { promptTokens: textTokens } : undefined, { images });
    if (imagesPriced) quantities.push({ key: "input_image_tokens", quantity: { units: BigInt(imageTokens), exp: 0 } });
    return priceQuantities(card, quantities, selection, feeBps);
  };
  return {
    quote: price(call.n, textPriced ? Math.max(1, utf8Length(call.prompt)) : 0, imagesPriced ? imageBound() : 0),
    meter(r) {
      // An edit's `input_tokens` also counts its images: only a generation's stands for the prompt.
      const text = textPriced ? reportedOr(r.usage?.textTokens ?? (edit ? undefined : r.usage?.inputTokens), counted) : 0;
      return price(r.data.length, text, imagesPriced ? reportedOr(r.usage?.imageTokens, imageBound) : 0);
    },
  };
}
