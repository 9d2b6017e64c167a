/**
 * The catalog's in-memory search index, built once at load time. Cards are kept in one canonical
 * order (modelId, then provider); every filter is a sorted list of positions in that order, so a
 * search is a few intersections, and a page is a binary search from the cursor.
 *
 * Text search (`q`): each query token must be a case-insensitive substring of the card's id,
 * name, provider or description. A substring made only of letters and digits lies inside one
 * word, so the index keeps a vocabulary of words (with a trigram index over the vocabulary) and
 * the cards of each word: a token's cards are the union of the cards of the vocabulary words
 * that contain it. A token with punctuation (`org-12/`) is narrowed by its alphanumeric parts
 * and then checked as a substring. The answer always equals a full scan.
 */
import type { ModelCard } from "./card.js";
import { intersect, lowerBound, PostingBuilder } from "./postings.js";

/** The filters of a search (already validated). */
export interface SearchFilters {
  readonly q?: string | undefined;
  readonly provider?: string | undefined;
  readonly modality?: string | undefined;
  readonly operation?: string | undefined;
}

/** The order key of a card: its position in the catalog's canonical order. */
export function orderKey(card: Pick<ModelCard, "modelId" | "provider">): string {
  return `${card.modelId}\u0000${card.provider}`;
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const WORD = /[\p{L}\p{N}]+/gu;
const GRAM_SPACE = 1 << 21;

/** 7 bits per character; every non-ASCII character shares code 127 (such parts are always verified). */
function charCode(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c < 127 ? c : 127;
}

/** Calls `visit` with the 21-bit code of every trigram of `text` (repeats included). */
function forEachTrigram(text: string, visit: (code: number) => void): void {
  if (text.length < 3) return;
  let code = (charCode(text, 0) << 7) | charCode(text, 1);
  for (let i = 2; i < text.length; i++) {
    code = ((code << 7) | charCode(text, i)) & (GRAM_SPACE - 1);
    visit(code);
  }
}

/**
 * Trigram posting lists over the vocabulary in one flat array (CSR layout): the words containing
 * trigram `g` are `postings[offsets[g] .. offsets[g+1]]`, ascending. Two passes over typed arrays.
 */
class TrigramIndex {
  private readonly offsets = new Uint32Array(GRAM_SPACE + 1);
  private readonly postings: Uint32Array;

  constructor(texts: readonly string[]) {
    const last = new Int32Array(GRAM_SPACE).fill(-1);
    const counts = this.offsets;
    texts.forEach((text, pos) =>
      forEachTrigram(text, (g) => {
        if (last[g] !== pos) {
          last[g] = pos;
          counts[g + 1]!++;
        }
      }),
    );
    for (let g = 0; g < GRAM_SPACE; g++) counts[g + 1]! += counts[g]!;
    this.postings = new Uint32Array(counts[GRAM_SPACE]!);
    const fill = counts.slice(0, GRAM_SPACE);
    last.fill(-1);
    texts.forEach((text, pos) =>
      forEachTrigram(text, (g) => {
        if (last[g] !== pos) {
          last[g] = pos;
          this.postings[fill[g]!++] = pos;
        }
      }),
    );
  }

  /** Ascending positions of the texts containing trigram `code`. */
  list(code: number): Uint32Array {
    return this.postings.subarray(this.offsets[code]!, this.offsets[code + 1]!);
  }
}

/** Words of the haystacks, each with the ascending positions of the cards containing it. */
class WordIndex {
  private readonly words: string[] = [];
  private readonly cardsOf: Uint32Array[];
  private readonly grams: TrigramIndex;
  private readonly mark: Uint8Array;

  constructor(haystacks: readonly string[]) {
    const ids = new Map<string, number>();
    const lists: number[][] = [];
    haystacks.forEach((hay, pos) => {
      for (const [word] of hay.matchAll(WORD)) {
        let id = ids.get(word);
        if (id === undefined) {
          id = this.words.length;
          ids.set(word, id);
          this.words.push(word);
          lists.push([]);
        }
        const list = lists[id]!;
        if (list[list.length - 1] !== pos) list.push(pos);
      }
    });
    this.cardsOf = lists.map((l) => Uint32Array.from(l));
    this.grams = new TrigramIndex(this.words);
    this.mark = new Uint8Array(haystacks.length);
  }

  /**
   * Parts of one or two characters match a large share of the vocabulary, so their card lists
   * are materialised on first use and kept (at most a few thousand such parts exist for any
   * alphabet a catalog uses; the map is bounded all the same).
   */
  private readonly short = new Map<string, Uint32Array>();

  /** Ascending positions of the cards with a word containing `part` (letters and digits only). */
  cardsContaining(part: string): Uint32Array {
    if (part.length > 2) return this.compute(part);
    let hit = this.short.get(part);
    if (hit === undefined) {
      hit = this.compute(part);
      if (this.short.size >= 4096) this.short.clear();
      this.short.set(part, hit);
    }
    return hit;
  }

  private compute(part: string): Uint32Array {
    let candidates: Uint32Array | undefined;
    const seen = new Set<number>();
    forEachTrigram(part, (g) => {
      if (seen.has(g)) return;
      seen.add(g);
      const list = this.grams.list(g);
      candidates = candidates === undefined ? list : intersect(candidates, list);
    });
    const matched: number[] = [];
    if (candidates === undefined) {
      for (let w = 0; w < this.words.length; w++) if (this.words[w]!.includes(part)) matched.push(w);
    } else {
      for (const w of candidates) if (this.words[w]!.includes(part)) matched.push(w);
    }
    if (matched.length === 0) return new Uint32Array(0);
    if (matched.length === 1) return this.cardsOf[matched[0]!]!;
    const mark = this.mark;
    let count = 0;
    for (const w of matched)
      for (const pos of this.cardsOf[w]!)
        if (mark[pos] === 0) {
          mark[pos] = 1;
          count++;
        }
    const out = new Uint32Array(count);
    let n = 0;
    for (let pos = 0; n < count; pos++)
      if (mark[pos] === 1) {
        mark[pos] = 0;
        out[n++] = pos;
      }
    return out;
  }
}

/** The most distinct terms a query may have (the catalog routes refuse more, 400). */
export const MAX_QUERY_TERMS = 16;
/** The most distinct alphanumeric parts its terms may have in all (`gpt-4o-mini` has three). */
export const MAX_QUERY_PARTS = 32;
/** Below this many candidate cards, a part of one or two characters is checked on their texts rather than looked up. */
const VERIFY_SHORT_PARTS_BELOW = 4096;

/** The distinct lower-case terms of a query, in their order. */
export function queryTerms(q: string | undefined): string[] {
  return [...new Set((q ?? "").toLowerCase().split(/\s+/).filter(Boolean))];
}

/** How many distinct alphanumeric parts `terms` hold. */
export function queryParts(terms: readonly string[]): number {
  return new Set(terms.flatMap((t) => t.match(WORD) ?? [])).size;
}

/** A read-only index over a fixed set of cards. */
export class SearchIndex {
  /** Cards in canonical order. */
  readonly cards: readonly ModelCard[];
  private readonly keys: readonly string[];
  private readonly haystacks: readonly string[];
  private readonly words: WordIndex;
  private readonly byProvider: Map<string, Uint32Array>;
  private readonly byModality: Map<string, Uint32Array>;
  private readonly byOperation: Map<string, Uint32Array>;
  private readonly cache = new Map<string, Uint32Array>();
  private static readonly EMPTY = new Uint32Array(0);

  /** @param cacheSize how many match sets to memoise (LRU); 0 disables the cache. */
  constructor(cards: readonly ModelCard[], private readonly cacheSize = 256) {
    const sorted = [...cards].sort((a, b) => compareKeys(orderKey(a), orderKey(b)));
    this.cards = sorted;
    this.keys = sorted.map(orderKey);
    const providers = new PostingBuilder();
    const modalities = new PostingBuilder();
    const operations = new PostingBuilder();
    this.haystacks = sorted.map((card, pos) => {
      providers.add(card.provider, pos);
      for (const op of card.operations) {
        modalities.add(op.modality, pos);
        operations.add(`${op.modality}:${op.operation}`, pos);
        operations.add(`*:${op.operation}`, pos);
      }
      return `${card.modelId}\n${card.name}\n${card.provider}\n${card.description}`.toLowerCase();
    });
    this.words = new WordIndex(this.haystacks);
    this.byProvider = providers.build();
    this.byModality = modalities.build();
    this.byOperation = operations.build();
  }

  /** Provider slugs present in the index. */
  providers(): string[] {
    return [...this.byProvider.keys()].sort();
  }

  /**
   * Positions (ascending) of every card matching the filters. Memoised per filter set (LRU), the
   * query as its distinct terms in order: spacing and repeats make no new entry. Terms beyond
   * {@link MAX_QUERY_TERMS} are ignored (the routes refuse such queries first).
   */
  matches(filters: SearchFilters): Uint32Array {
    const tokens = queryTerms(filters.q).slice(0, MAX_QUERY_TERMS).sort();
    const cacheKey = JSON.stringify([tokens.join(" "), filters.provider ?? "", filters.modality ?? "", filters.operation ?? ""]);
    if (this.cacheSize === 0) return this.compute(filters, tokens);
    const hit = this.cache.get(cacheKey);
    if (hit) {
      this.cache.delete(cacheKey);
      this.cache.set(cacheKey, hit);
      return hit;
    }
    const result = this.compute(filters, tokens);
    this.cache.set(cacheKey, result);
    if (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
    return result;
  }

  private compute(filters: SearchFilters, tokens: readonly string[]): Uint32Array {
    const lists: Uint32Array[] = [];
    if (filters.provider !== undefined) lists.push(this.byProvider.get(filters.provider) ?? SearchIndex.EMPTY);
    if (filters.operation !== undefined) lists.push(this.byOperation.get(`${filters.modality ?? "*"}:${filters.operation}`) ?? SearchIndex.EMPTY);
    else if (filters.modality !== undefined) lists.push(this.byModality.get(filters.modality) ?? SearchIndex.EMPTY);
    lists.sort((a, b) => a.length - b.length);
    let result: Uint32Array | undefined;
    for (const list of lists) {
      result = result === undefined ? list : intersect(result, list);
      if (result.length === 0) return SearchIndex.EMPTY;
    }
    const toVerify: string[] = [];
    const parts = new Set<string>();
    for (const token of tokens) {
      const tokenParts = token.match(WORD) ?? [];
      // A token that is one whole alphanumeric part is answered exactly by the word index.
      if (tokenParts.length !== 1 || tokenParts[0] !== token) toVerify.push(token);
      for (const part of tokenParts) parts.add(part);
    }
    // A part inside another adds nothing (the longer one's cards all contain it). Longest first:
    // the narrowest lists, from the trigram index. A short part, whose list takes a scan of the
    // vocabulary, is checked on the cards left instead once they are few. Both give the same cards:
    // an alphanumeric part lies in a card's text exactly when it lies in one of its words.
    const kept = [...parts].filter((p) => ![...parts].some((o) => o !== p && o.includes(p))).sort((a, b) => b.length - a.length);
    for (const part of kept) {
      if (part.length <= 2 && result !== undefined && result.length <= VERIFY_SHORT_PARTS_BELOW) {
        toVerify.push(part);
        continue;
      }
      const list = this.words.cardsContaining(part);
      result = result === undefined ? list : intersect(result, list);
      if (result.length === 0) return SearchIndex.EMPTY;
    }
    if (toVerify.length === 0) return result ?? this.all();
    const base = result ?? this.all();
    const out = new Uint32Array(base.length);
    let n = 0;
    for (const pos of base) {
      const hay = this.haystacks[pos]!;
      if (toVerify.every((t) => hay.includes(t))) out[n++] = pos;
    }
    return out.subarray(0, n);
  }

  private allPositions: Uint32Array | undefined;
  private all(): Uint32Array {
    this.allPositions ??= Uint32Array.from(this.cards, (_c, i) => i);
    return this.allPositions;
  }

  /**
   * One page of `matches` after the card whose order key is `afterKey` (exclusive). Works even if
   * that card no longer exists, so pages stay gap-free and duplicate-free across catalog reloads.
   */
  page(matches: Uint32Array, afterKey: string | undefined, limit: number): { cards: ModelCard[]; lastKey: string | undefined; hasMore: boolean } {
    let start = 0;
    if (afterKey !== undefined) {
      const position = upperBoundKey(this.keys, afterKey);
      start = lowerBound(matches, position);
    }
    const end = Math.min(matches.length, start + limit);
    const cards: ModelCard[] = [];
    for (let i = start; i < end; i++) cards.push(this.cards[matches[i]!]!);
    const last = cards[cards.length - 1];
    return { cards, lastKey: last ? orderKey(last) : afterKey, hasMore: end < matches.length };
  }
}

/** First index whose key is strictly greater than `key`. */
function upperBoundKey(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
