/**
 * Relevance ranking of agent cards for `GET /agents/search`.
 *
 * The query is lower-cased and split into tokens of letters and digits (at most 16 distinct).
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
const MAX_TOKENS = 16;

/** Lower-case words of letters and digits. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function best(token: string, words: readonly string[], [whole, prefix, inside]: readonly [number, number, number]): number {
  let points = 0;
  for (const w of words) {
    if (w === token) return whole;
    if (token.length >= 2 && w.startsWith(token)) points = Math.max(points, prefix);
    else if (token.length >= 3 && w.includes(token)) points = Math.max(points, inside);
  }
  return points;
}

/** The score of `card` for `query` (0: no match). */
export function scoreAgent(card: AgentCard, query: string): number {
  const q = query.trim().toLowerCase();
  const tokens = [...new Set(tokenize(q))].slice(0, MAX_TOKENS);
  const fields = {
    name: tokenize(card.name),
    skills: card.skills.flatMap(tokenize),
    plugins: card.plugins.flatMap((p) => tokenize(p.name)),
    description: tokenize(card.description),
  };
  let score = 0;
  for (const t of tokens) for (const f of ["name", "skills", "plugins", "description"] as const) score += best(t, fields[f], WEIGHTS[f]);
  const name = card.name.toLowerCase();
  if (q === name) score += EXACT_NAME;
  else if (tokens.length >= 2 && ` ${fields.name.join(" ")} `.includes(` ${tokenize(q).join(" ")} `)) score += NAME_PHRASE;
  if (q === card.walletAddress) score += ADDRESS;
  return score;
}

/** The cards matching `query`, best first, at most `limit`, each with its `score`. */
export function rankAgents(cards: readonly AgentCard[], query: string, limit: number): { card: AgentCard; score: number }[] {
  return cards
    .map((card) => ({ card, score: scoreAgent(card, query) }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || cmp(a.card.name.toLowerCase(), b.card.name.toLowerCase()) || cmp(a.card.walletAddress, b.card.walletAddress))
    .slice(0, Math.max(0, limit));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
