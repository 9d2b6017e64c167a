/**
 * The price of a chat completion before it runs, and what a smaller reservation still buys.
 *
 * Quote = the prompt (counted, plus a margin for other vendors' tokenizers; each image at the most
 * the card's provider bills one image as, `imageInputTokens`) + the output cap
 * (`max_completion_tokens`, else `max_tokens`, else the card's maximum output) for each of the `n`
 * choices, priced by the card. The floor is the prompt and one output token per choice: a key that
 * cannot afford the whole quote but affords the floor gets what it can afford and a lowered cap.
 */
import type { ModelCard } from "../catalog/card.js";
import { priceUsage } from "../metering/usage.js";
import type { Priced } from "../metering/pricing.js";
import { countOutput, countPromptParts, IMAGE_PART_TOKENS, promptBound, type TokenCounter } from "../metering/tokens.js";
import { foreignPromptBound } from "../metering/foreign-bound.js";
import type { ChatUsage } from "../providers/types.js";

/** Output cap used when neither the request nor the card gives one. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** Why the output cap sent upstream has its value. */
export type CapReason = "request" | "model" | "budget";

/** The request fields a quote reads. */
export interface ChatQuoteInput {
  readonly messages: readonly unknown[];
  readonly max_completion_tokens?: number | undefined;
  readonly max_tokens?: number | undefined;
  readonly n?: number | undefined;
  /** tools, functions, response_format…: counted as prompt. */
  readonly extras: readonly unknown[];
  /** A `prediction` (Predicted Outputs): its rejected tokens are billed as output, so it is reserved as output. */
  readonly prediction?: unknown;
}

/** A chat quote. */
export interface ChatQuote {
  /** The prompt as counted (o200k), images at their bound. */
  readonly promptTokens: number;
  /**
   * The prompt billed when the upstream reports no usage (a stream cut before its usage, an
   * upstream that sends none): the count on a card whose tokenizer it is; on another vendor's
   * card the bound, since that vendor may count up to several times more (and bills what it counts).
   */
  readonly billedPromptTokens: number;
  /** The prompt's tokens without its images, and how many image parts it has. */
  readonly textTokens: number;
  readonly images: number;
  /** The prompt the quote reserves for: the count + 10 % and 16 on a card with `tokenizer`, else the foreign bound (metering/foreign-bound.ts). */
  readonly promptBound: number;
  /** Choices asked for (`n`). */
  readonly choices: number;
  /** Output cap per choice. */
  readonly outputCap: number;
  /** Output tokens reserved beyond the cap: a prediction's, per choice (0 without one). */
  readonly predictedTokens: number;
  readonly capReason: Exclude<CapReason, "budget">;
  /** The price of the prompt bound, the whole cap and the prediction. */
  readonly quote: Priced;
  /** The price of the prompt bound, one output token per choice and the prediction. */
  readonly floor: Priced;
}

/** The card's maximum output, from its `max_completion_tokens` / `max_tokens` parameter. */
export function cardMaxOutput(card: ModelCard): number | undefined {
  return card.params?.max_completion_tokens?.maximum ?? card.params?.max_tokens?.maximum;
}

/** Prices a chat usage on a card. */
export function priceChat(
  card: ModelCard,
  usage: { promptTokens: number; completionTokens: number; cachedInputTokens?: number | undefined },
  feeBps: number,
): Priced {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.promptTokens);
  return priceUsage(
    card,
    { promptTokens: Math.max(1, usage.promptTokens), completionTokens: usage.completionTokens, ...(cached > 0 ? { cachedInputTokens: cached } : {}) },
    undefined,
    feeBps,
  );
}

/** Quotes a chat request on a card. */
export function quoteChat(card: ModelCard, counter: TokenCounter, input: ChatQuoteInput, feeBps: number): ChatQuote {
  const foreign = foreignTokenizer(card);
  const { tokens: textTokens, images, allowance } = countPromptParts(counter, { messages: input.messages, extras: input.extras }, foreign);
  const imageTokens = images * (card.imageInputTokens ?? IMAGE_PART_TOKENS);
  const promptTokens = textTokens + imageTokens;
  // Counted with the card's own tokenizer, a margin; with another vendor's, the bound that covers theirs.
  const bound = foreign ? foreignPromptBound(textTokens, allowance) + imageTokens : promptBound(promptTokens);
  const requested = input.max_completion_tokens ?? input.max_tokens;
  const modelMax = cardMaxOutput(card);
  let outputCap = requested ?? modelMax ?? DEFAULT_MAX_OUTPUT_TOKENS;
  // Without a requested cap, the context window bounds the output too.
  if (requested === undefined && card.contextWindow !== undefined) outputCap = Math.max(1, Math.min(outputCap, card.contextWindow - promptTokens));
  const choices = input.n ?? 1;
  const predictedTokens = countOutput(counter, predictionText(input.prediction), foreign) * choices;
  return {
    promptTokens,
    billedPromptTokens: foreign ? bound : promptTokens,
    textTokens,
    images,
    promptBound: bound,
    choices,
    outputCap,
    predictedTokens,
    capReason: requested === undefined ? "model" : "request",
    quote: priceChat(card, { promptTokens: bound, completionTokens: outputCap * choices + predictedTokens }, feeBps),
    floor: priceChat(card, { promptTokens: bound, completionTokens: choices + predictedTokens }, feeBps),
  };
}

/** The price of `quote`'s prompt bound and prediction with an output cap of `cap` per choice. */
export function priceWithCap(card: ModelCard, quote: ChatQuote, cap: number, feeBps: number): Priced {
  return priceChat(card, { promptTokens: quote.promptBound, completionTokens: cap * quote.choices + quote.predictedTokens }, feeBps);
}

/** Whether `card`'s vendor tokenizes otherwise than the gateway's o200k_base (metering/foreign-bound.ts). */
export const foreignTokenizer = (card: ModelCard): boolean => card.tokenizer !== "o200k_base";

/** The text of a `prediction`: its `content`, a string or text parts. */
function predictionText(prediction: unknown): string {
  const content = typeof prediction === "object" && prediction !== null ? (prediction as { content?: unknown }).content : undefined;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (typeof part === "object" && part !== null && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
    .join("");
}

/**
 * The largest output cap per choice (1 ≤ cap ≤ `quote.outputCap`) whose price fits `reserved`: a
 * binary search over the card's price, which grows with the output. `reserved` must be at least
 * the floor's price.
 */
export function affordableCap(card: ModelCard, quote: ChatQuote, reserved: bigint, feeBps: number): number {
  if (reserved >= quote.quote.finalAmount) return quote.outputCap;
  const fits = (cap: number) => priceWithCap(card, quote, cap, feeBps).finalAmount <= reserved;
  let low = 1;
  let high = quote.outputCap;
  while (low < high) {
    const mid = Math.floor((low + high + 1) / 2);
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

/**
 * The usage a chat call is billed on: the upstream's when it reports one, else the prompt and the
 * output as counted. A count the upstream reports as 0 where the gateway saw tokens (some
 * self-hosted servers report zeros) is replaced by the gateway's count, so a call is never billed
 * below what it visibly used.
 */
export function billedUsage(reported: ChatUsage | undefined, promptTokens: number, outputTokens: () => number): ChatUsage {
  if (!reported) return { promptTokens, completionTokens: outputTokens() };
  if (reported.promptTokens > 0 && reported.completionTokens > 0) return reported;
  const completionTokens = reported.completionTokens > 0 ? reported.completionTokens : outputTokens();
  return Object.assign({}, reported, { promptTokens: reported.promptTokens > 0 ? reported.promptTokens : promptTokens, completionTokens });
}

/**
 * Whether the model may think in tokens it never streams (its card takes `reasoning_effort` or
 * `thinking_budget`): they are billed by the upstream but show only in the final usage, so a
 * stream its client leaves is read on to that usage (relay.ts) instead of being cut.
 */
export const hidesReasoning = (card: ModelCard): boolean =>
  card.params !== undefined && ("reasoning_effort" in card.params || "thinking_budget" in card.params);
