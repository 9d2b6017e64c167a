/**
 * The model catalog service: lookup by public id with provider priority, and search/list with
 * filters and opaque cursors over the {@link SearchIndex}.
 */
import { fromBase64Url, toBase64Url } from "../encoding.js";
import { GatewayError, invalidRequest } from "../errors.js";
import { fnv1a } from "../providers/bytes.js";
import { ALL_OPERATIONS, MODALITIES, OPERATIONS, type Modality, type ModelCard } from "./card.js";
import { MAX_QUERY_PARTS, MAX_QUERY_TERMS, queryParts, queryTerms, SearchIndex, type SearchFilters } from "./search-index.js";

/** Search input after HTTP parsing (limit already clamped). */
export interface CatalogSearch extends SearchFilters {
  readonly limit: number;
  readonly cursor?: string | undefined;
}

/** A page of cards. */
export interface CatalogPage {
  readonly object: "list";
  readonly data: readonly ModelCard[];
  readonly total: number;
  readonly next_cursor: string | null;
}

/** The catalog API used by routes, metering and media billing. */
export interface Catalog {
  /** Number of cards. */
  readonly size: number;
  /** A content version of the catalog (changes when any card changes). */
  readonly version: string;
  /** Provider slugs present, sorted. */
  providers(): string[];
  /** Every card in canonical order (modelId, provider). */
  cards(): readonly ModelCard[];
  /**
   * The card serving public id `modelId`: the one of `provider` when given, else the one whose
   * provider ranks first in the priority list. Undefined when there is none.
   */
  find(modelId: string, provider?: string): ModelCard | undefined;
  /** Like {@link find} but throws 404 `model_not_found`. */
  get(modelId: string, provider?: string): ModelCard;
  /** Filters and pages the catalog. Throws 400 on an unknown provider/modality/operation or a bad cursor. */
  search(input: CatalogSearch): CatalogPage;
}

/** Options of {@link createCatalog}. */
export interface CatalogOptions {
  /** Providers in order of preference for duplicate public ids; unlisted ones follow alphabetically. */
  readonly providerPriority?: readonly string[];
  /** Content version; computed from the cards when omitted. */
  readonly version?: string;
  /** Search results memoised per filter set, so paging does not repeat work. @default 256 (0 disables) */
  readonly searchCacheSize?: number;
}

/** Default provider priority: model makers before hosts that resell the same ids. */
export const DEFAULT_PROVIDER_PRIORITY: readonly string[] = [
  "openai",
  "google",
  "anthropic",
  "black-forest-labs",
  "stability",
  "mistral",
  "cohere",
  "voyage",
  "elevenlabs",
  "deepgram",
  "runway",
  "luma",
];

/** A short hex content hash (versions, cursor filter binding). */
const hash = (text: string): string => fnv1a(text).toString(16).padStart(8, "0");

interface CursorState {
  readonly k: string;
  readonly f: string;
}

function encodeCursor(state: CursorState): string {
  return toBase64Url(JSON.stringify(state));
}

function decodeCursor(cursor: string, filterHash: string): string {
  let state: unknown;
  try {
    state = JSON.parse(fromBase64Url(cursor) ?? "");
  } catch {
    throw invalidRequest("cursor is not a cursor returned by this API", "cursor");
  }
  const s = state as Partial<CursorState> | null;
  if (typeof s !== "object" || s === null || typeof s.k !== "string" || typeof s.f !== "string")
    throw invalidRequest("cursor is not a cursor returned by this API", "cursor");
  if (s.f !== filterHash) throw invalidRequest("cursor belongs to a search with other filters; repeat the same q/provider/modality/operation", "cursor");
  return s.k;
}

/** Builds a catalog over validated cards. Indexing happens here, once. */
export function createCatalog(cards: readonly ModelCard[], options: CatalogOptions = {}): Catalog {
  const index = new SearchIndex(cards, options.searchCacheSize ?? 256);
  const priority = options.providerPriority ?? DEFAULT_PROVIDER_PRIORITY;
  const rank = (p: string): number => {
    const i = priority.indexOf(p);
    return i < 0 ? priority.length : i;
  };
  const byId = new Map<string, ModelCard[]>();
  for (const card of index.cards) {
    const list = byId.get(card.modelId);
    if (list) list.push(card);
    else byId.set(card.modelId, [card]);
  }
  for (const list of byId.values()) list.sort((a, b) => rank(a.provider) - rank(b.provider) || (a.provider < b.provider ? -1 : 1));
  const providers = index.providers();
  const providerSet = new Set(providers);
  const version = options.version ?? hash(JSON.stringify(index.cards));

  const validate = (input: SearchFilters): void => {
    const terms = queryTerms(input.q);
    if (terms.length > MAX_QUERY_TERMS)
      throw invalidRequest(`q has more than ${MAX_QUERY_TERMS} distinct terms; a card must contain every term, so search with fewer`, "q");
    if (queryParts(terms) > MAX_QUERY_PARTS)
      throw invalidRequest(`q has more than ${MAX_QUERY_PARTS} distinct words and numbers in its terms; search with fewer`, "q");
    if (input.provider !== undefined && !providerSet.has(input.provider))
      throw invalidRequest(`provider "${input.provider}" is not in the catalog; known providers: ${providers.join(", ")}`, "provider");
    if (input.modality !== undefined && !(MODALITIES as readonly string[]).includes(input.modality))
      throw invalidRequest(`modality must be one of ${MODALITIES.join(", ")}`, "modality");
    if (input.operation !== undefined) {
      const allowed: readonly string[] = input.modality === undefined ? ALL_OPERATIONS : OPERATIONS[input.modality as Modality];
      if (!allowed.includes(input.operation))
        throw invalidRequest(`operation must be one of ${allowed.join(", ")}${input.modality ? ` for modality ${input.modality}` : ""}`, "operation");
    }
  };

  const find = (modelId: string, provider?: string): ModelCard | undefined => {
    const list = byId.get(modelId);
    if (!list) return undefined;
    return provider === undefined ? list[0] : list.find((c) => c.provider === provider);
  };

  return {
    size: index.cards.length,
    version,
    providers: () => providers,
    cards: () => index.cards,
    find,
    get(modelId, provider) {
      const card = find(modelId, provider);
      if (!card) {
        const others = byId.get(modelId);
        const hint = provider && others ? ` from provider "${provider}" (served by ${others.map((c) => c.provider).join(", ")})` : "";
        throw new GatewayError("model_not_found", `Model "${modelId}"${hint} is not in the catalog.`, { param: "model" });
      }
      return card;
    },
    search(input) {
      const filters: SearchFilters = {
        q: input.q?.trim() || undefined,
        provider: input.provider,
        modality: input.modality,
        operation: input.operation,
      };
      validate(filters);
      const filterHash = hash(JSON.stringify([filters.q?.toLowerCase() ?? "", filters.provider ?? "", filters.modality ?? "", filters.operation ?? ""]));
      const after = input.cursor ? decodeCursor(input.cursor, filterHash) : undefined;
      const matches = index.matches(filters);
      const page = index.page(matches, after, input.limit);
      return {
        object: "list",
        data: page.cards,
        total: matches.length,
        next_cursor: page.hasMore && page.lastKey !== undefined ? encodeCursor({ k: page.lastKey, f: filterHash }) : null,
      };
    },
  };
}
