/** `client.agents` and `client.directory`: public agent discovery (docs/discovery.md "Agents"). */
import type { APIPromise } from "../api-promise.js";
import { segment, type Caller } from "../http/caller.js";
import type { RequestOptions } from "../options.js";

/**
 * An agent card. A gateway with `compat: "compose"` serves `protocols` as `{name, version}`
 * objects and `createdAt` as an ISO string instead (the origin API's shapes, for its own client).
 */
export interface AgentCard {
  /** Lower-case EVM address. */
  walletAddress: string;
  name: string;
  description: string;
  plugins: { registryId: string; name: string; origin: string; tools?: string[] }[];
  skills: string[];
  /** `name` or `name@version`. */
  protocols: string[];
  endpoint?: string;
  model?: string;
  x402Support: boolean;
  /** Unix ms. */
  createdAt: number;
  /** The card schema's version ("1.0.0"). */
  schemaVersion: string;
  /** keccak-256 of the card's content (0x hex); changes whenever the card does. */
  dnaHash: string;
  /** The card's chain, else the gateway's default chain; null when neither is known (0 under compat "compose"). */
  chain: number | null;
  /** Price of a license in USDC atomic units. @default "0" */
  licensePrice: string;
  /** @default 0 */
  licenses: number;
  /** @default false */
  cloneable: boolean;
}

/** Agent cards and how many were returned. */
export interface AgentList<T extends AgentCard = AgentCard> {
  agents: T[];
  total: number;
}

/** A search hit: the card and its relevance. */
export interface RankedAgentCard extends AgentCard {
  score: number;
}

/** Parameters of `directory.search`. */
export interface DirectorySearchParams {
  search?: string;
  category?: string;
  /** Sent comma-separated. */
  tags?: string[];
  /** 1..100. @default 30 */
  limit?: number;
  offset?: number;
  sort?: "relevancy" | "created-at" | "last-modified" | "interactions";
  direction?: "asc" | "desc";
}

/** An agent of the external directory. */
export interface DirectoryAgent {
  address: string;
  name: string;
  description: string;
  readme: string;
  protocols: (string | Record<string, unknown>)[];
  avatar_href: string | null;
  total_interactions: number;
  recent_interactions: number;
  rating: number | null;
  status: string | null;
  type: string | null;
  featured: boolean;
  category: string | null;
  system_wide_tags: string[];
  last_updated: string | null;
  created_at: string | null;
  owner: string | null;
}

/** A page of the directory. */
export interface DirectoryPage {
  agents: DirectoryAgent[];
  total: number;
  offset: number;
  limit: number;
}

/** The `client.agents` group. */
export interface AgentsResource {
  /** Every agent card, oldest first. */
  list(options?: RequestOptions): APIPromise<AgentList>;
  /** Cards ranked by relevance to `q` (`limit` 1..50, default 8); an empty `q` is a 400. */
  search(params: { q: string; limit?: number }, options?: RequestOptions): APIPromise<AgentList<RankedAgentCard>>;
  /** One card (400 on a malformed address, 404 `agent_not_found`). */
  get(walletAddress: string, options?: RequestOptions): APIPromise<AgentCard>;
}

/** The `client.directory` group. */
export interface DirectoryResource {
  /** Searches the external agent directory (503 when not configured, 502/504 when it fails). */
  search(params?: DirectorySearchParams, options?: RequestOptions): APIPromise<DirectoryPage>;
}

/** Builds `client.agents`. */
export function agentsResource(caller: Caller): AgentsResource {
  return {
    list: (options) => caller.call({ method: "GET", path: "/agents", idempotent: true }, options),
    search: (params, options) => caller.call({ method: "GET", path: "/agents/search", query: { ...params }, idempotent: true }, options),
    get: (walletAddress, options) => caller.call({ method: "GET", path: `/agent/${segment(walletAddress)}`, idempotent: true }, options),
  };
}

/** Builds `client.directory`. */
export function directoryResource(caller: Caller): DirectoryResource {
  return {
    search: (params = {}, options) => caller.call({ method: "GET", path: "/api/directory/agents", query: { ...params }, idempotent: true }, options),
  };
}
