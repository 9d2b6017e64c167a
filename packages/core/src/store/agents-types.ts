/** The agents part of the Store. */

/** A plugin an agent runs (docs/discovery.md "Agents"). */
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
  /** Protocol names, `name` or `name@version` (a `{name, version}` input is stored as `name@version`). */
  protocols: string[];
  endpoint?: string;
  model?: string;
  x402Support: boolean;
  /** The card's chain id; absent = the gateway's default chain (the first of `options.chains`). */
  chain?: number;
  /** Price of a license in USDC atomic units (decimal string); absent = "0". */
  licensePrice?: string;
  /** Licenses issued so far; absent = 0. */
  licenses?: number;
  /** Whether the agent may be cloned; absent = false. */
  cloneable?: boolean;
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
