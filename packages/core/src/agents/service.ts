/**
 * Agent discovery (docs/discovery.md "Agents"): cards in the store (seeded from `options.agents.seed`
 * and upserted from code), relevance search over them, and the external directory client.
 */
import type { CapabilityDeps } from "../capability.js";
import { GatewayError } from "../errors.js";
import { parseAddress, parseWith } from "../validation.js";
import type { AgentCard } from "../store/agents-types.js";
import { agentCardInputSchema, toAgentCard, type AgentCardInput } from "./card.js";
import { searchDirectory, type DirectoryPage, type DirectoryQuery } from "./directory.js";
import { indexAgent, rankAgents, type IndexedAgent } from "./search.js";

/** How long a search reuses the cards it read (and split into words); a write in this process starts over at once. */
const INDEX_TTL_MS = 5_000;

/** What the agents capability offers to routes and application code. Errors are `GatewayError`s. */
export interface AgentsService {
  /** The chain a card's view shows when the card names none: the first of `options.chains`, else null. */
  readonly defaultChain: number | null;
  /** Resolves once the seed cards are in the store (every other method waits for it too). */
  ready(): Promise<void>;
  /**
   * Validates a card (400 `invalid_request` naming the field) and inserts or replaces it; an
   * existing card keeps its `createdAt`. @returns the stored card.
   */
  upsert(card: AgentCardInput): Promise<AgentCard>;
  /** Deletes a card; 400 on a malformed address. @returns false when there was none. */
  remove(walletAddress: string): Promise<boolean>;
  /**
   * Every card, oldest first, as read from the store at most once per 5 s (like {@link search}: a
   * write through this service is seen at once, another instance's within those 5 s). The same
   * (frozen) array of the same card objects is returned until then: do not modify the cards.
   */
  list(): Promise<readonly AgentCard[]>;
  /** One card; 400 `invalid_request` (param walletAddress) on a malformed address, 404 `agent_not_found` when unknown. */
  get(walletAddress: string): Promise<AgentCard>;
  /**
   * Cards ranked by relevance to `query` (see search.ts for the scoring), best first, each with
   * its `score`; `limit` is clamped to 1..50. Scans every card, as read from the store at most once
   * per 5 s (a write through this service is seen at once; another instance's within those 5 s):
   * meant for up to ~10k cards.
   * @default limit 8
   */
  search(query: string, options?: { limit?: number }): Promise<(AgentCard & { score: number })[]>;
  /** Searches the configured external directory; 503 `not_configured` without one, 502/504 on upstream failure. */
  searchDirectory(query: DirectoryQuery, signal?: AbortSignal): Promise<DirectoryPage>;
}

/** Creates the agents service and starts seeding the store. */
export function createAgentsService(deps: CapabilityDeps): AgentsService {
  const { store, clock } = deps;
  const seed = deps.options.agents?.seed ?? [];
  const directory = deps.options.agents?.directory;

  // The factory is synchronous; seeding is not. Every method awaits it, and close() waits for it
  // so the store is never closed under a running upsert.
  const seeded = (async () => {
    const now = clock.now();
    for (const card of seed) await store.upsertAgent(toAgentCard(card, now));
  })();
  seeded.catch(() => {}); // reported to the first caller instead of as an unhandled rejection
  deps.onClose(() => seeded.catch(() => {}));
  deps.describe(
    () =>
      `agents (/agents, /agent/{walletAddress}): on (${seed.length} seed card${seed.length === 1 ? "" : "s"}); directory (/api/directory/agents): ${directory ? directory.url : "not configured (set agents.directory.url)"}`,
  );

  // The cards split into words, read at most once per INDEX_TTL_MS: every search scans them all, so
  // reading and splitting them per request made a public route cost ~0.35 s at 10,000 cards.
  let index: { at: number; entries: Promise<IndexedAgent[]> } | undefined;
  const indexed = (): Promise<IndexedAgent[]> => {
    const now = clock.now();
    if (!index || now - index.at >= INDEX_TTL_MS || now < index.at) {
      const entries = store.listAgents().then((cards) => cards.map(indexAgent));
      entries.catch(() => (index = undefined));
      index = { at: now, entries };
    }
    return index.entries;
  };
  const changed = <T>(write: Promise<T>): Promise<T> => write.finally(() => (index = undefined));
  /** The cards of the last read, as one array for as long as that read is used (callers may cache by it). */
  let listed: { entries: IndexedAgent[]; cards: readonly AgentCard[] } | undefined;

  return {
    defaultChain: deps.options.chains?.[0]?.chainId ?? null,
    ready: () => seeded,
    async upsert(input) {
      const card = parseWith(agentCardInputSchema, input, "body");
      await seeded;
      return changed(store.upsertAgent(toAgentCard(card, clock.now())));
    },
    async remove(walletAddress) {
      const address = parseAddress(walletAddress, "walletAddress");
      await seeded;
      return changed(store.removeAgent(address));
    },
    async list() {
      await seeded;
      const entries = await indexed();
      if (listed?.entries !== entries) listed = { entries, cards: Object.freeze(entries.map((entry) => entry.card)) };
      return listed.cards;
    },
    async get(walletAddress) {
      const address = parseAddress(walletAddress, "walletAddress");
      await seeded;
      const card = await store.getAgent(address);
      if (!card) throw new GatewayError("agent_not_found", `No agent card for ${address}.`);
      return card;
    },
    async search(query, options = {}) {
      await seeded;
      const limit = options.limit === undefined || !Number.isFinite(options.limit) ? 8 : Math.min(50, Math.max(1, Math.trunc(options.limit)));
      return rankAgents(await indexed(), query, limit).map(({ card, score }) => Object.assign({}, card, { score }));
    },
    async searchDirectory(query, signal) {
      if (!directory)
        throw new GatewayError("not_configured", "The agent directory is not configured: set options.agents.directory.url (and apiKey if it needs one).");
      return searchDirectory(deps.http, directory, query, signal);
    },
  };
}
