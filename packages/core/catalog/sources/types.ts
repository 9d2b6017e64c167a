/**
 * Shared types and small builders for the native catalog sources. Each provider file builds its
 * cards with these helpers; scripts/build-catalog.ts validates them with `catalogSchema`.
 *
 * Pricing keys (the metering code relies on them):
 * - text chat: input_tokens / output_tokens / cached_input_tokens (usd_per_1m_tokens)
 * - embeddings: input_tokens (usd_per_1m_tokens)
 * - images: image (usd_per_image), `when` on the card's own params (size, quality, …); a model that
 *   also bills tokens (GPT Image): input_tokens for the prompt and input_image_tokens for an edit's
 *   input images (usd_per_1m_tokens)
 * - speech: characters (usd_per_1k_characters) or audio_seconds (usd_per_minute)
 * - transcription: audio_seconds (usd_per_minute)
 * - video: video_seconds (usd_per_second)
 */
import type { z } from "zod";
import type { modelCardSchema, Modality, ParamSpec, PriceLine } from "../../src/catalog/card.js";

/** What a source file writes: the zod input type of a card. */
export type CardInput = z.input<typeof modelCardSchema>;
export type Params = Record<string, ParamSpec>;
type Extra = Omit<Partial<ParamSpec>, "type" | "description">;

// ---------------------------------------------------------------------------------------------
// Parameters

export const str = (description: string, extra: Extra = {}): ParamSpec => ({ type: "string", required: false, description, ...extra });
export const int = (description: string, extra: Extra = {}): ParamSpec => ({ type: "integer", required: false, description, ...extra });
export const num = (description: string, extra: Extra = {}): ParamSpec => ({ type: "number", required: false, description, ...extra });
export const bool = (description: string, extra: Extra = {}): ParamSpec => ({ type: "boolean", required: false, description, ...extra });
export const arr = (description: string, extra: Extra = {}): ParamSpec => ({ type: "array", required: false, description, ...extra });
/** A string parameter restricted to `options`, defaulting to `def` (null: no default). */
export const choice = (options: readonly (string | number)[], def: string | number | null, description: string, extra: Extra = {}): ParamSpec => ({
  type: typeof options[0] === "number" ? "integer" : "string",
  required: false,
  ...(def === null ? {} : { default: def }),
  options: [...options],
  description,
  ...extra,
});
/** Marks a parameter as required. */
export const req = (spec: ParamSpec): ParamSpec => ({ ...spec, required: true });

export const prompt = (description = "Text description of the desired output."): ParamSpec => req(str(description));
export const seed = (max = 4294967295): ParamSpec => int("Seed for reproducible output.", { minimum: 0, maximum: max });

/** Request parameters of a chat model. */
export function chatParams(o: { maxTemperature?: number; defaultTemperature?: number; maxTokens?: number; reasoning?: readonly string[]; requireMaxTokens?: boolean } = {}): Params {
  const params: Params = {
    messages: req(arr("The conversation: a list of {role, content} messages.")),
    max_tokens: int("Maximum number of tokens to generate.", { minimum: 1, ...(o.maxTokens ? { maximum: o.maxTokens } : {}), required: o.requireMaxTokens ?? false }),
  };
  if (o.reasoning) {
    params.reasoning_effort = choice(o.reasoning, "medium", "How much the model reasons before answering; more effort uses more output tokens.");
  } else {
    params.temperature = num("Sampling temperature; higher is more random.", { minimum: 0, maximum: o.maxTemperature ?? 2, default: o.defaultTemperature ?? 1 });
    params.top_p = num("Nucleus sampling: only tokens in the top_p probability mass are considered.", { minimum: 0, maximum: 1, default: 1 });
  }
  params.stream = bool("Stream the answer as server-sent events.", { default: false });
  return params;
}

// ---------------------------------------------------------------------------------------------
// Prices

type When = Record<string, string>;
const line = (key: string, unit: PriceLine["unit"], unitPriceUsd: string, when?: When): PriceLine => ({ key, unit, unitPriceUsd, ...(when ? { when } : {}) });

/** Chat token prices per 1M tokens. */
export const tokenPrices = (input: string, output: string, cachedInput?: string): PriceLine[] => [
  line("input_tokens", "usd_per_1m_tokens", input),
  ...(cachedInput ? [line("cached_input_tokens", "usd_per_1m_tokens", cachedInput)] : []),
  line("output_tokens", "usd_per_1m_tokens", output),
];
export const perImage = (price: string, when?: When): PriceLine => line("image", "usd_per_image", price, when);
/** The text input of a model billed per token beside another unit (GPT Image's prompt). */
export const perMInputTokens = (price: string): PriceLine => line("input_tokens", "usd_per_1m_tokens", price);
/** The input images of a model billed per image token beside its other units (GPT Image edits' `image` / `image[]` / `mask`). */
export const perMInputImageTokens = (price: string): PriceLine => line("input_image_tokens", "usd_per_1m_tokens", price);
export const perKChars = (price: string): PriceLine => line("characters", "usd_per_1k_characters", price);
export const perAudioMinute = (price: string): PriceLine => line("audio_seconds", "usd_per_minute", price);
export const perVideoSecond = (price: string, when?: When): PriceLine => line("video_seconds", "usd_per_second", price, when);
/**
 * Image prices over a grid of two parameters: `grid[a][b]` is the price when param `aName` is a
 * and `bName` is b (e.g. quality × size).
 */
export function imageGrid(aName: string, bName: string, grid: Record<string, Record<string, string>>): PriceLine[] {
  return Object.entries(grid).flatMap(([a, row]) => Object.entries(row).map(([b, price]) => perImage(price, { [aName]: a, [bName]: b })));
}
/** Lines of one key whose price depends on one parameter: `{value: price}`. */
export const byParam = (make: (price: string, when: When) => PriceLine, name: string, prices: Record<string, string>): PriceLine[] =>
  Object.entries(prices).map(([value, price]) => make(price, { [name]: value }));

// ---------------------------------------------------------------------------------------------
// Cards

interface Base {
  id: string;
  name: string;
  description: string;
  params?: Params;
  deprecated?: boolean;
  /** Image and video cards get a required `prompt` param unless this is set (the model names its prompt differently). */
  noPrompt?: boolean;
}

/** OpenAI's open-weight gpt-oss models count with o200k (its harmony variant adds only special tokens). */
export const openWeightTokenizer = (id: string): { tokenizer?: "o200k_base" } => (id.startsWith("openai/gpt-oss") ? { tokenizer: "o200k_base" } : {});

/** A chat model priced per 1M input / output (and cached input) tokens. */
export function textCard(
  provider: string,
  o: Base & { context: number; input: string; output: string; cached?: string; vision?: boolean; inputs?: Modality[]; imageTokens?: number; tokenizer?: "o200k_base" },
): CardInput {
  return {
    modelId: o.id,
    provider,
    name: o.name,
    description: o.description,
    modalities: { input: o.inputs ?? (o.vision ? ["text", "image"] : ["text"]), output: ["text"] },
    operations: [{ modality: "text", operation: "chat" }],
    contextWindow: o.context,
    ...(o.imageTokens === undefined ? {} : { imageInputTokens: o.imageTokens }),
    ...(o.tokenizer === undefined ? {} : { tokenizer: o.tokenizer }),
    pricing: tokenPrices(o.input, o.output, o.cached),
    params: o.params ?? chatParams(),
    ...(o.deprecated ? { deprecated: true } : {}),
  };
}

/** An embedding model priced per 1M input tokens. */
export function embeddingCard(provider: string, o: Base & { context: number; price: string; inputs?: Modality[] }): CardInput {
  return {
    modelId: o.id,
    provider,
    name: o.name,
    description: o.description,
    modalities: { input: o.inputs ?? ["text"], output: ["embedding"] },
    operations: [{ modality: "embedding", operation: "embedding" }],
    contextWindow: o.context,
    pricing: [line("input_tokens", "usd_per_1m_tokens", o.price)],
    params: { input: req(arr("Text (or list of texts) to embed.")), ...o.params },
    ...(o.deprecated ? { deprecated: true } : {}),
  };
}

/** An image model; `edit` adds the edit operation (and image input). */
export function imageCard(provider: string, o: Base & { pricing: PriceLine[]; edit?: boolean; generation?: boolean }): CardInput {
  const generation = o.generation ?? true;
  return {
    modelId: o.id,
    provider,
    name: o.name,
    description: o.description,
    modalities: { input: o.edit ? ["text", "image"] : ["text"], output: ["image"] },
    operations: [
      ...(generation ? [{ modality: "image" as const, operation: "generation" }] : []),
      ...(o.edit ? [{ modality: "image" as const, operation: "edit" }] : []),
    ],
    pricing: o.pricing,
    params: { ...(o.noPrompt ? {} : { prompt: prompt() }), ...o.params },
    ...(o.deprecated ? { deprecated: true } : {}),
  };
}

/** A text-to-speech model. */
export function speechCard(provider: string, o: Base & { pricing: PriceLine[] }): CardInput {
  return {
    modelId: o.id,
    provider,
    name: o.name,
    description: o.description,
    modalities: { input: ["text"], output: ["audio"] },
    operations: [{ modality: "audio", operation: "speech" }],
    pricing: o.pricing,
    params: { input: req(str("The text to speak.")), ...o.params },
    ...(o.deprecated ? { deprecated: true } : {}),
  };
}

/** A speech-to-text model priced per minute of audio. */
export function transcriptionCard(provider: string, o: Base & { perMinute: string; promptPerM?: string }): CardInput {
  return {
    modelId: o.id,
    provider,
    name: o.name,
    description: o.description,
    modalities: { input: ["audio"], output: ["text"] },
    operations: [{ modality: "audio", operation: "transcription" }],
    // A model that bills its prompt as text tokens (GPT-4o transcribe) prices them too.
    pricing: [perAudioMinute(o.perMinute), ...(o.promptPerM ? [perMInputTokens(o.promptPerM)] : [])],
    params: { file: req(str("The audio file to transcribe (multipart upload or URL).")), ...o.params },
    ...(o.deprecated ? { deprecated: true } : {}),
  };
}

/** A video generation model priced per second of output. */
export function videoCard(provider: string, o: Base & { pricing: PriceLine[]; imageInput?: boolean }): CardInput {
  return {
    modelId: o.id,
    provider,
    name: o.name,
    description: o.description,
    modalities: { input: o.imageInput ? ["text", "image"] : ["text"], output: ["video"] },
    operations: [{ modality: "video", operation: "generation" }],
    pricing: o.pricing,
    params: { ...(o.noPrompt ? {} : { prompt: prompt() }), ...o.params },
    ...(o.deprecated ? { deprecated: true } : {}),
  };
}
