/** The agents part of the Store. */

/** A plugin an agent runs (CONTRACT.md "Agents"). */
export interface AgentPlugin {
  registryId: string;
  name: string;
  origin: string;
  tools?: string[];
}

/** An agent card as stored and served by `/agents` and `/agent/{walletAddress}`. */
export interface AgentCard {
  /** Lower-case EVM address; the card's identity. */
  walletAddress: string;
  name: string;
  description: string;
  plugins: AgentPlugin[];
  skills: string[];
  protocols: string[];
  endpoint?: string;
  model?: string;
  x402Support: boolean;
  /** Milliseconds since the epoch; fixed by the first insert of the card. */
  createdAt: number;
}

/** Agent cards, keyed by wallet address. */
export interface AgentStore {
  /**
   * Inserts the card, or replaces every field of the card with the same `walletAddress` except
   * `createdAt`, which the first insert fixed. Single native atomic operation (N concurrent upserts
   * of one address leave one card, equal to one of them).
   * @returns the card as stored.
   */
  upsertAgent(card: AgentCard): Promise<AgentCard>;
  /** The card, or null if unknown. */
  getAgent(walletAddress: string): Promise<AgentCard | null>;
  /** Every card, oldest first (`createdAt`, then `walletAddress`). */
  listAgents(): Promise<AgentCard[]>;
  /** Deletes the card. @returns false when there was none. */
  removeAgent(walletAddress: string): Promise<boolean>;
}
