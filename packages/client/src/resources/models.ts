/** `client.models` and `client.catalog`: the public model catalog (docs/catalog.md). No credential needed. */
import type { APIPromise } from "../api-promise.js";
import { segment, type Caller } from "../http/caller.js";
import type { QueryValue } from "../http/encoding.js";
import type { RequestOptions } from "../options.js";

/** Canonical modalities. */
export type Modality = "text" | "image" | "audio" | "video" | "embedding";

/** One price line; `when` selects a variant (e.g. `{size:"1024x1024", quality:"hd"}`). */
export interface PriceLine {
  key: string;
  unit: "usd_per_1m_tokens" | "usd_per_1k_characters" | "usd_per_image" | "usd_per_second" | "usd_per_minute" | "usd_per_request";
  /** Decimal string, e.g. "2.50". */
  unitPriceUsd: string;
  when?: Record<string, string>;
}

/** Metadata of one request parameter of a model. */
export interface ParamSpec {
  type: "string" | "integer" | "number" | "boolean" | "array" | "object";
  required: boolean;
  default?: string | number | boolean | null;
  options?: (string | number)[];
  minimum?: number;
  maximum?: number;
  description?: string;
}

/**
 * The prices of one unit on a card or operation. `entries` maps an entry id (the price key, or
 * `key:name=value,...` for a `when` variant) to USD per unit; `valueKeys` are the distinct price
 * keys. In `/v1/modalities` entries hold the lowest price across the counted models.
 */
export interface PricingUnit {
  unitKey: PriceLine["unit"];
  /** What is counted: `tokens`, `characters`, `images`, `seconds`, `requests`. */
  unit: string;
  /** e.g. `USD per 1M tokens`. */
  header: string;
  entries: Record<string, number>;
  valueKeys: string[];
  /** The unit to show first. */
  default: boolean;
}

/** One operation of a model with what it takes, gives, costs and whether it streams. */
export interface ModelOperation {
  modality: Modality;
  operation: string;
  /** The catalog serving the card: `["native"]` or `["extended"]`. */
  sourceTypes: string[];
  input: Modality[];
  output: Modality[];
  pricingUnits: PricingUnit[];
  /** True for text chat and video generation (status stream). */
  streamable: boolean;
}

/**
 * A model card. `id`, `object`, `created` and `owned_by` are OpenAI's `Model` fields, so the same
 * answer reads as an OpenAI model list or model.
 */
export interface ModelCard {
  /** OpenAI's `id`: the same as `modelId`. */
  id: string;
  object: "model";
  /**
   * OpenAI's `created`, Unix seconds: always 0 (unknown), since cards carry no dates; fixed so
   * answers are deterministic.
   */
  created: number;
  /** OpenAI's `owned_by`: the same as `provider`. */
  owned_by: string;
  /** Public catalog id (may contain `/` and `:`). */
  modelId: string;
  /** Provider slug. */
  provider: string;
  name: string;
  description: string;
  /** The primary modality: that of the first operation. */
  type: Modality;
  modalities: { input: Modality[]; output: Modality[] };
  operations: ModelOperation[];
  contextWindow?: number;
  pricing: PriceLine[];
  params?: Record<string, ParamSpec>;
  deprecated?: boolean;
}

/** Filters of list, all and search (an unknown provider, modality or operation is a 400). */
export interface ModelFilters {
  /** Matches id, name, description, provider (case-insensitive). */
  q?: string;
  provider?: string;
  modality?: Modality;
  /** e.g. `chat`, `generation`, `edit`, `speech`, `transcription`, `embedding`. */
  operation?: string;
  /** 1..200. @default 50 */
  limit?: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

/** A page of cards. */
export interface ModelList {
  object: "list";
  data: ModelCard[];
  /** Count of matching models. */
  total: number;
  next_cursor: string | null;
}

/** Parameter metadata and defaults of one model. */
export interface ModelParams {
  modelId: string;
  provider: string;
  modality: Modality;
  /** The same as `modality` (the name the origin API's client reads). */
  type: Modality;
  params: Record<string, ParamSpec>;
  defaults: Record<string, unknown>;
}

/** One operation of a modality across the catalog. */
export interface OperationCatalogEntry {
  operation: string;
  modelCount: number;
  sourceTypes: string[];
  pricingUnits: PricingUnit[];
}

/** One canonical modality across the catalog. */
export interface ModalityCatalogEntry {
  modality: Modality;
  operations: OperationCatalogEntry[];
  modelCount: number;
  pricingUnits: PricingUnit[];
}

/** The answer of `/v1/modalities`. */
export interface ModalityList {
  object: "list";
  data: ModalityCatalogEntry[];
}

/** The compact pricing table. */
export interface PricingTable {
  models: { modelId: string; provider: string; pricing: PriceLine[] }[];
  /** Content version of the catalog. */
  version: string;
}

/** The answer of `/api/models`: the models service's JSON as it is, or the native catalog (`source: "native"`). */
export interface CatalogProxyResponse {
  object?: string;
  data?: ModelCard[];
  total?: number;
  next_cursor?: string | null;
  source?: string;
  [field: string]: unknown;
}

/** The `client.models` group. */
export interface ModelsResource {
  /** Lists and filters the native catalog. */
  list(filters?: ModelFilters, options?: RequestOptions): APIPromise<ModelList>;
  /** The extended catalog when the gateway has one, else the native one. */
  all(filters?: ModelFilters, options?: RequestOptions): APIPromise<ModelList>;
  /** One card (404 `model_not_found`); `provider` selects another provider of the id. */
  get(modelId: string, params?: { provider?: string }, options?: RequestOptions): APIPromise<ModelCard>;
  /** Parameter metadata and defaults of one model. */
  params(modelId: string, params?: { provider?: string }, options?: RequestOptions): APIPromise<ModelParams>;
  /** Searches the native catalog (filters in a JSON body). */
  search(filters?: ModelFilters, options?: RequestOptions): APIPromise<ModelList>;
  /** Every canonical modality with its operations, model counts and pricing units (native catalog). */
  modalities(options?: RequestOptions): APIPromise<ModalityList>;
}

/** The `client.catalog` group. */
export interface CatalogResource {
  /**
   * `/api/models`: the configured models service's catalog (502/504 when it fails; query parameters
   * passed on), else the native catalog with the {@link ModelFilters} of `models.list` (every match
   * when `limit` is absent).
   */
  proxy(query?: Record<string, QueryValue>, options?: RequestOptions): APIPromise<CatalogProxyResponse>;
  /** The compact pricing table of the bundled catalog. */
  pricing(options?: RequestOptions): APIPromise<PricingTable>;
}

const get = (path: string, query?: Record<string, QueryValue>) => ({ method: "GET" as const, path, query, idempotent: true });

/** Builds `client.models`. */
export function modelsResource(caller: Caller): ModelsResource {
  return {
    list: (filters = {}, options) => caller.call(get("/v1/models", { ...filters }), options),
    all: (filters = {}, options) => caller.call(get("/v1/models/all", { ...filters }), options),
    get: (modelId, params = {}, options) => caller.call(get(`/v1/models/${segment(modelId)}`, { ...params }), options),
    params: (modelId, params = {}, options) => caller.call(get(`/v1/models/${segment(modelId)}/params`, { ...params }), options),
    search: (filters = {}, options) => caller.call({ method: "POST", path: "/v1/models/search", body: filters, idempotent: true }, options),
    modalities: (options) => caller.call(get("/v1/modalities"), options),
  };
}

/** Builds `client.catalog`. */
export function catalogResource(caller: Caller): CatalogResource {
  return {
    proxy: (query, options) => caller.call(get("/api/models", query), options),
    pricing: (options) => caller.call(get("/api/pricing"), options),
  };
}
