/** The agents part of the memory store. */
import type { AgentCard, AgentStore } from "./agents-types.js";

/** A deep copy through JSON, so the memory store keeps exactly what a database store does. */
const copy = (card: AgentCard): AgentCard => JSON.parse(JSON.stringify(card)) as AgentCard;

const oldestFirst = (a: AgentCard, b: AgentCard): number =>
  a.createdAt - b.createdAt || (a.walletAddress < b.walletAddress ? -1 : a.walletAddress > b.walletAddress ? 1 : 0);

/** In-memory agents operations (synchronous inside each method: that is their atomicity). */
export function createMemoryAgentStore(): AgentStore {
  const cards = new Map<string, AgentCard>();
  return {
    async upsertAgent(card) {
      const existing = cards.get(card.walletAddress);
      const stored = copy({ ...card, createdAt: existing?.createdAt ?? card.createdAt });
      cards.set(card.walletAddress, stored);
      return copy(stored);
    },
    async getAgent(walletAddress) {
      const card = cards.get(walletAddress);
      return card ? copy(card) : null;
    },
    async listAgents() {
      return [...cards.values()].sort(oldestFirst).map(copy);
    },
    async removeAgent(walletAddress) {
      return cards.delete(walletAddress);
    },
  };
}
