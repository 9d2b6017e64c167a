/**
 * Relevance ranking of agent cards for `GET /agents/search`.
 *
 * The query is lower-cased and split into tokens of letters and digits (the first 8 distinct count:
 * every token is looked for in every field of every card).
 * For every token, each field adds the points of its best match, word by word:
 *
 * | field                 | whole word | word prefix (token ≥ 2 chars) | inside a word (token ≥ 3 chars) |
 * |-----------------------|-----------:|------------------------------:|--------------------------------:|
 * | name                  | 10         | 6                             | 3                               |
 * | skills                | 5          | 3                             | 1                               |
 * | plugin names          | 4          | 2                             | 1                               |
 * | description           | 2          | 1                             | 0                               |
 *
 * Then bonuses on the whole trimmed query: it equals the name (case-insensitive) +50; the name
 * contains it as a phrase of two or more tokens +15; it equals the wallet address +100.
 * A card's score is the sum; cards that score 0 are left out. Ties: name, then address.
 * So an exact name beats a name word, which beats a skill, a plugin, then the description.
 */
import type { AgentCard } from "../store/agents-types.js";

/** Points of a whole-word, prefix and substring match, per field. */
const WEIGHTS = {
  name: [10, 6, 3],
  skills: [5, 3, 1],
  plugins: [4, 2, 1],
  description: [2, 1, 0],
} as const;
const EXACT_NAME = 50;
const NAME_PHRASE = 15;
const ADDRESS = 100;
const MAX_TOKENS = 8;

/** Lower-case words of letters and digits. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * The points of `token`'s best match in `text`, a field's words joined by single spaces with a space
 * at each end: a token holds no space, so `" token "` is a whole word, `" token"` a word prefix, and
 * any other occurrence lies inside one word (one native string search each, not a loop over words).
 */
function best(t: QueryToken, text: string, [whole, prefix, inside]: readonly [number, number, number]): number {
  // A field whose inside matches score nothing (the description, its longest) is searched for the
  // word start only: one scan of it instead of three.
  if (inside === 0 || t.token.length < 3) {
    if (!text.includes(t.lead)) return 0;
    if (text.includes(t.word)) return whole;
    return t.token.length >= 2 ? prefix : 0;
  }
  if (!text.includes(t.token)) return 0;
  if (text.includes(t.word)) return whole;
  if (text.includes(t.lead)) return prefix;
  return inside;
}

/** A query token with the two strings its matches look for, made once per query rather than per card and field. */
interface QueryToken {
  readonly token: string;
  /** `" token"`: a word starting with it. */
  readonly lead: string;
  /** `" token "`: the whole word. */
  readonly word: string;
}

const joined = (words: readonly string[]): string => ` ${words.join(" ")} `;

/** A card with its words, split once: searches score many queries against the same cards. */
export interface IndexedAgent {
  readonly card: AgentCard;
  readonly lowerName: string;
  /** Each field's words, joined as {@link best} reads them. */
  readonly fields: { readonly name: string; readonly skills: string; readonly plugins: string; readonly description: string };
}

/** Splits `card` into the words its score reads. */
export function indexAgent(card: AgentCard): IndexedAgent {
  return {
    card,
    lowerName: card.name.toLowerCase(),
    fields: {
      name: joined(tokenize(card.name)),
      skills: joined(card.skills.flatMap(tokenize)),
      plugins: joined(card.plugins.flatMap((p) => tokenize(p.name))),
      description: joined(tokenize(card.description)),
    },
  };
}

/** A query as the scores read it: trimmed and lower-cased, its distinct tokens (at most 16), its phrase. */
interface ParsedQuery {
  readonly q: string;
  readonly tokens: readonly QueryToken[];
  readonly phrase: string;
}

function parseQuery(query: string): ParsedQuery {
  const q = query.trim().toLowerCase();
  const all = tokenize(q);
  const tokens = [...new Set(all)].slice(0, MAX_TOKENS).map((token) => ({ token, lead: ` ${token}`, word: ` ${token} ` }));
  return { q, tokens, phrase: joined(all) };
}

function scoreIndexed(entry: IndexedAgent, query: ParsedQuery): number {
  let score = 0;
  for (const t of query.tokens) for (const f of ["name", "skills", "plugins", "description"] as const) score += best(t, entry.fields[f], WEIGHTS[f]);
  if (query.q === entry.lowerName) score += EXACT_NAME;
  else if (query.tokens.length >= 2 && entry.fields.name.includes(query.phrase)) score += NAME_PHRASE;
  if (query.q === entry.card.walletAddress) score += ADDRESS;
  return score;
}

/** The score of `card` for `query` (0: no match). */
export function scoreAgent(card: AgentCard, query: string): number {
  return scoreIndexed(indexAgent(card), parseQuery(query));
}

/** The cards matching `query`, best first, at most `limit`, each with its `score`. */
export function rankAgents(cards: readonly (AgentCard | IndexedAgent)[], query: string, limit: number): { card: AgentCard; score: number }[] {
  const parsed = parseQuery(query);
  const scored: { card: AgentCard; score: number }[] = [];
  for (const c of cards) {
    const entry = "fields" in c ? c : indexAgent(c);
    const score = scoreIndexed(entry, parsed);
    if (score > 0) scored.push({ card: entry.card, score });
  }
  return scored
    .sort((a, b) => b.score - a.score || cmp(a.card.name.toLowerCase(), b.card.name.toLowerCase()) || cmp(a.card.walletAddress, b.card.walletAddress))
    .slice(0, Math.max(0, limit));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
