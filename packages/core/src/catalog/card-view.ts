/**
 * The wire view of a model card: the validated card with the fields the origin API's own client
 * (`@compose-market/sdk`, types `Model` / `ModelOperationCapability` / `PricingUnit`) reads, all
 * derived from the card. Additive only: every field of the card is served unchanged.
 *
 * - `type`: the card's primary modality, i.e. the modality of its first operation (the same one
 *   `/v1/models/{model}/params` reports). A card that serves several modalities lists each of
 *   them in `operations[].modality`.
 * - `operations[]` gain `sourceTypes`, `input`, `output`, `pricingUnits` and `streamable`; see
 *   {@link operationView}.
 * - `id`, `object`, `created` and `owned_by`: OpenAI's `Model` fields, so OpenAI clients
 *   (`openai.models.list()`, `openai.models.retrieve(id)`) read the cards; see {@link OpenAiModelFields}.
 */
import { PRICE_UNITS, type Modality, type ModelCard, type PriceLine, type PriceUnit } from "./card.js";

/** Which catalog a card is served from: the bundled one, or the configured extended one. */
export type CardSource = "native" | "extended";

/**
 * The cards of one price unit (SDK `PricingUnit`). `entries` maps an entry id to its price in USD
 * per unit (a number): the price key (`input_tokens`, `image`, ...) or, for a variant, the key
 * and its `when` pairs sorted by name (`image:quality=hd,size=1024x1024`). `valueKeys` lists the
 * distinct price keys (what metering reads) in card order.
 */
export interface PricingUnitView {
  /** The card's price unit, e.g. `usd_per_1m_tokens`. */
  readonly unitKey: PriceUnit;
  /** What is counted: `tokens`, `characters`, `images`, `seconds` or `requests`. */
  readonly unit: string;
  /** A human label, e.g. `USD per 1M tokens`. */
  readonly header: string;
  readonly entries: Readonly<Record<string, number>>;
  readonly valueKeys: readonly string[];
  /** True on the unit of the first price line (the one a UI shows first). */
  readonly default: boolean;
}

/** One operation of a card with its capabilities (SDK `ModelOperationCapability`). */
export interface OperationView {
  readonly modality: Modality;
  readonly operation: string;
  /** The catalog serving the card: `["native"]` or `["extended"]`. */
  readonly sourceTypes: readonly CardSource[];
  /** Input modalities: the card's `modalities.input`. */
  readonly input: readonly Modality[];
  /** Output modalities: the operation's own output when the card lists it, else the card's outputs. */
  readonly output: readonly Modality[];
  /** The price units that bill this operation. */
  readonly pricingUnits: readonly PricingUnitView[];
  /** Whether the gateway streams it: text chat (SSE) and video generation (status stream). */
  readonly streamable: boolean;
}

/**
 * OpenAI's `Model` object fields (`GET /v1/models`, `GET /v1/models/{model}`), derived from the card.
 * The same public id may be served by several providers: each card keeps its own `owned_by`.
 */
export interface OpenAiModelFields {
  /** The card's `modelId` (what a request's `model` names). */
  readonly id: string;
  readonly object: "model";
  /**
   * Unix seconds, always {@link MODEL_CREATED} (0): a card carries no release date, and a fixed
   * value keeps every answer deterministic and cacheable (a build or load time would change the
   * bytes of an unchanged card). 0, the epoch, reads as "unknown"; OpenAI's SDKs type the field
   * as a plain integer and check nothing else about it.
   */
  readonly created: number;
  /** The card's `provider` slug (the upstream that serves it, e.g. `openai`, `together`). */
  readonly owned_by: string;
}

/** The `created` of every card view: cards have no dates (see {@link OpenAiModelFields.created}). */
export const MODEL_CREATED = 0;

/** A card as served on the wire: OpenAI's `Model` fields, every card field, then `type` and enriched `operations`. */
export type ModelCardView = OpenAiModelFields &
  Omit<ModelCard, "operations"> & {
    readonly type: Modality;
    readonly operations: readonly OperationView[];
  };

/** Human labels of the price units. */
export const PRICE_UNIT_HEADERS: Readonly<Record<PriceUnit, string>> = {
  usd_per_1m_tokens: "USD per 1M tokens",
  usd_per_1k_characters: "USD per 1K characters",
  usd_per_image: "USD per image",
  usd_per_second: "USD per second",
  usd_per_minute: "USD per minute",
  usd_per_request: "USD per request",
};

/** What each operation produces (`output` of {@link operationView}). */
const OPERATION_OUTPUT: Readonly<Record<string, Modality>> = {
  "text/chat": "text",
  "image/generation": "image",
  "image/edit": "image",
  "audio/speech": "audio",
  "audio/transcription": "text",
  "embedding/embedding": "embedding",
  "video/generation": "video",
};

/** Operations the gateway streams: chat completions (SSE) and video jobs (`/v1/videos/{id}/stream`). */
const STREAMABLE = new Set(["text/chat", "video/generation"]);

/** Which modalities a price unit can bill, to split the lines of a card serving several modalities. */
const UNIT_MODALITIES: Readonly<Record<PriceUnit, readonly Modality[]>> = {
  usd_per_1m_tokens: ["text", "embedding"],
  usd_per_1k_characters: ["audio"],
  usd_per_image: ["image"],
  usd_per_second: ["audio", "video"],
  usd_per_minute: ["audio", "video"],
  usd_per_request: ["text", "image", "audio", "video", "embedding"],
};

/** The entry id of a price line: its key, plus its sorted `when` pairs for a variant. */
export function entryId(line: PriceLine): string {
  const when = Object.entries(line.when ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return when.length === 0 ? line.key : `${line.key}:${when.map(([k, v]) => `${k}=${v}`).join(",")}`;
}

/** Groups price lines by unit, in the order units first appear; the first unit is the default. */
export function pricingUnits(lines: readonly PriceLine[]): PricingUnitView[] {
  const byUnit = new Map<PriceUnit, { entries: Record<string, number>; keys: string[] }>();
  for (const line of lines) {
    let group = byUnit.get(line.unit);
    if (!group) byUnit.set(line.unit, (group = { entries: {}, keys: [] }));
    group.entries[entryId(line)] = Number(line.unitPriceUsd);
    if (!group.keys.includes(line.key)) group.keys.push(line.key);
  }
  return [...byUnit].map(([unit, g], i) => ({
    unitKey: unit,
    unit: PRICE_UNITS[unit].quantity,
    header: PRICE_UNIT_HEADERS[unit],
    entries: g.entries,
    valueKeys: g.keys,
    default: i === 0,
  }));
}

/**
 * The price lines billing `modality` on `card`: all of them when every operation of the card is
 * of one modality; otherwise the lines whose unit can bill that modality (all lines when none can).
 */
export function linesFor(card: ModelCard, modality: Modality): readonly PriceLine[] {
  if (card.operations.every((o) => o.modality === modality)) return card.pricing;
  const own = card.pricing.filter((l) => UNIT_MODALITIES[l.unit].includes(modality));
  return own.length > 0 ? own : card.pricing;
}

/** Whether the gateway streams `operation` of `modality`. */
export function isStreamable(modality: Modality, operation: string): boolean {
  return STREAMABLE.has(`${modality}/${operation}`);
}

/** One operation of `card` with its capabilities (see {@link OperationView}). */
export function operationView(card: ModelCard, op: ModelCard["operations"][number], source: CardSource): OperationView {
  const produced = OPERATION_OUTPUT[`${op.modality}/${op.operation}`];
  const output = produced !== undefined && card.modalities.output.includes(produced) ? [produced] : [...card.modalities.output];
  return {
    modality: op.modality,
    operation: op.operation,
    sourceTypes: [source],
    input: [...card.modalities.input],
    output,
    pricingUnits: pricingUnits(linesFor(card, op.modality)),
    streamable: isStreamable(op.modality, op.operation),
  };
}

const views: Record<CardSource, WeakMap<ModelCard, ModelCardView>> = { native: new WeakMap(), extended: new WeakMap() };

/** The wire view of `card` (memoised per card object; cards are immutable once catalogued). */
export function cardView(card: ModelCard, source: CardSource = "native"): ModelCardView {
  const cached = views[source].get(card);
  if (cached) return cached;
  const view: ModelCardView = {
    id: card.modelId,
    object: "model",
    created: MODEL_CREATED,
    owned_by: card.provider,
    ...card,
    type: card.operations[0]!.modality,
    operations: card.operations.map((op) => operationView(card, op, source)),
  };
  views[source].set(card, view);
  return view;
}
