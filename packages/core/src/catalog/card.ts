/**
 * The model card: the zod schema that validates every card (bundled, extended, or from a file)
 * and the canonical modality / operation / unit vocabularies of docs/catalog.md.
 */
import { z } from "zod";
import { parseDecimal } from "../money.js";

/** Canonical modalities a card can serve. */
export const MODALITIES = ["text", "image", "audio", "video", "embedding"] as const;
export type Modality = (typeof MODALITIES)[number];

/** Canonical operations per modality (the `operation` filter of search). */
export const OPERATIONS = {
  text: ["chat"],
  image: ["generation", "edit"],
  audio: ["speech", "transcription"],
  embedding: ["embedding"],
  video: ["generation"],
} as const satisfies Record<Modality, readonly string[]>;
export type Operation = (typeof OPERATIONS)[Modality][number];
/** Every operation name, across modalities. */
export const ALL_OPERATIONS: readonly string[] = [...new Set(Object.values(OPERATIONS).flat())];

/** Price units and how many units of quantity one price covers (docs/catalog.md). */
export const PRICE_UNITS = {
  usd_per_1m_tokens: { quantity: "tokens", scale: 1_000_000n },
  usd_per_1k_characters: { quantity: "characters", scale: 1_000n },
  usd_per_image: { quantity: "images", scale: 1n },
  usd_per_second: { quantity: "seconds", scale: 1n },
  /** Quantity is seconds; the price covers 60 of them. */
  usd_per_minute: { quantity: "seconds", scale: 60n },
  usd_per_request: { quantity: "requests", scale: 1n },
} as const;
export type PriceUnit = keyof typeof PRICE_UNITS;

const slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "must be a lower-case slug (a-z, 0-9, -)");
const decimalPrice = z
  .string()
  .refine((s) => parseDecimal(s) !== null, "must be a non-negative decimal string such as \"2.50\"");

/** One price line of a card. `when` selects a variant (e.g. `{size:"1024x1024", quality:"hd"}`). */
export const priceLineSchema = z.strictObject({
  key: z.string().regex(/^[a-z0-9_]{1,64}$/, "must be snake_case"),
  unit: z.enum(Object.keys(PRICE_UNITS) as [PriceUnit, ...PriceUnit[]]),
  unitPriceUsd: decimalPrice,
  when: z.record(z.string(), z.string()).optional(),
});
export type PriceLine = z.infer<typeof priceLineSchema>;

/** Metadata of one request parameter, as served by `/v1/models/{model}/params`. */
export const paramSpecSchema = z.strictObject({
  type: z.enum(["string", "integer", "number", "boolean", "array", "object"]),
  required: z.boolean(),
  default: z.union([z.string(), z.number(), z.boolean(), z.null()]).optional(),
  options: z.array(z.union([z.string(), z.number()])).optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  description: z.string().max(500).optional(),
});
export type ParamSpec = z.infer<typeof paramSpecSchema>;

const modality = z.enum(MODALITIES);

/** The card schema. Cross-field rules: operations must be canonical for their modality, params defaults must be valid options. */
export const modelCardSchema = z
  .strictObject({
    modelId: z.string().min(1).max(200).regex(/^[A-Za-z0-9][A-Za-z0-9._:/@-]*$/, "must be a public id (letters, digits, . _ : / @ -)"),
    provider: slug,
    name: z.string().min(1).max(200),
    description: z.string().min(1).max(2000),
    modalities: z.strictObject({ input: z.array(modality).min(1), output: z.array(modality).min(1) }),
    operations: z.array(z.strictObject({ modality, operation: z.string() })).min(1),
    contextWindow: z.number().int().positive().optional(),
    /**
     * The most input tokens the provider bills one image of a chat message as (its image formula at
     * the largest size and highest detail). A chat quote reserves this much per image part; cards
     * without it are quoted at `IMAGE_PART_TOKENS`.
     */
    imageInputTokens: z.number().int().positive().max(1_000_000).optional(),
    /**
     * The tokenizer the provider counts this model's text with, when the gateway has it
     * (`o200k_base`: OpenAI's models). A chat quote counts the prompt with it plus 10 %; a card
     * without it is quoted at a bound that covers other vendors' tokenizers (metering/foreign-bound.ts).
     */
    tokenizer: z.literal("o200k_base").optional(),
    pricing: z.array(priceLineSchema).min(1),
    params: z.record(z.string(), paramSpecSchema).optional(),
    deprecated: z.boolean().optional(),
  })
  .superRefine((card, ctx) => {
    card.operations.forEach((op, i) => {
      const allowed: readonly string[] = OPERATIONS[op.modality];
      if (!allowed.includes(op.operation))
        ctx.addIssue({ code: "custom", path: ["operations", i, "operation"], message: `"${op.operation}" is not an operation of ${op.modality} (${allowed.join(", ")})` });
    });
    const keys = new Set<string>();
    card.pricing.forEach((line, i) => {
      const id = `${line.key}|${JSON.stringify(line.when ?? {})}`;
      if (keys.has(id)) ctx.addIssue({ code: "custom", path: ["pricing", i], message: `duplicate price line ${line.key} with the same "when"` });
      keys.add(id);
    });
    for (const [name, p] of Object.entries(card.params ?? {})) {
      if (p.options && p.default !== undefined && p.default !== null && typeof p.default !== "boolean" && !p.options.includes(p.default))
        ctx.addIssue({ code: "custom", path: ["params", name, "default"], message: "default must be one of options" });
    }
  });

/** A validated model card (docs/catalog.md). */
export type ModelCard = z.infer<typeof modelCardSchema>;

/** Validates a list of cards; rejects duplicate (provider, modelId) pairs. All problems are reported at once. */
export const catalogSchema = z.array(modelCardSchema).superRefine((cards, ctx) => {
  const seen = new Set<string>();
  cards.forEach((c, i) => {
    const k = `${c.provider}:${c.modelId}`;
    if (seen.has(k)) ctx.addIssue({ code: "custom", path: [i, "modelId"], message: `duplicate card ${k}` });
    seen.add(k);
  });
});

/** Renders zod issues as one readable line each: `path: message`. */
export function formatIssues(issues: readonly { path: PropertyKey[]; message: string }[], prefix = ""): string[] {
  return issues.map((i) => {
    const path = [prefix, ...i.path.map(String)].filter(Boolean).join(".");
    return path ? `${path}: ${i.message}` : i.message;
  });
}
