/**
 * The wire view of an agent card (docs/discovery.md "Agents"). The contract fields come first, in
 * contract order, then the origin API's card fields with their derived defaults:
 *
 * - `schemaVersion`: {@link AGENT_CARD_SCHEMA_VERSION};
 * - `dnaHash`: {@link agentDnaHash}, a content hash that changes whenever the card does;
 * - `chain`: the card's `chain`, else the gateway's default chain (the first of
 *   `options.chains`), else null;
 * - `licensePrice` (USDC atomic units) `"0"`, `licenses` 0, `cloneable` false when not set.
 *
 * Two fields keep their contract shape unless `compat: "compose"` is set, since changing them
 * would break existing clients: `protocols` (strings; objects `{name, version}` under compat) and
 * `createdAt` (Unix ms; an ISO 8601 string under compat). Under compat the origin's required
 * fields are also always present: `model` is `""` when the card has none, and `chain` is `0`
 * (not an EIP-155 chain id: "unknown") when neither the card nor the gateway names one; without
 * compat `model` stays absent and `chain` is null then.
 */
import { keccak256, stringToBytes } from "viem";
import type { AgentCard } from "../store/agents-types.js";
import { sha256Hex } from "../sha256.js";

/** The `schemaVersion` every card view carries. */
export const AGENT_CARD_SCHEMA_VERSION = "1.0.0";

/** How a view is rendered: the gateway's compatibility mode and default chain. */
export interface AgentCardViewOptions {
  compat?: "compose" | undefined;
  /** The chain of cards that name none; null when the gateway has no chains. */
  defaultChain?: number | null | undefined;
}

/** JSON with object keys sorted at every level, so equal cards give equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The card's DNA hash: keccak-256 (0x-prefixed hex) of the canonical JSON (keys sorted) of every
 * stored field except `createdAt`. Stable across restarts and stores; any edit changes it.
 */
export function agentDnaHash(card: AgentCard): string {
  let hash = dnaHashes.get(card);
  if (hash === undefined) {
    const { createdAt: _createdAt, ...content } = card;
    const canonical = canonicalJson(content);
    const digest = sha256Hex(canonical); // native: ~1 µs, and a key of 64 characters whatever the card's size
    hash = byContent.get(digest);
    if (hash === undefined) {
      hash = keccak256(stringToBytes(canonical));
      if (byContent.size >= MAX_HASHED_CONTENTS) byContent.delete(byContent.keys().next().value!);
      byContent.set(digest, hash);
    }
    dnaHashes.set(card, hash);
  }
  return hash;
}
/**
 * A JavaScript keccak of a card's JSON costs ~150 µs: 1.5 s for a listing of 10,000 cards, which
 * the agents service reads again every few seconds as new objects. So the hash is kept per card
 * object (cards are never modified once read) and per content, by its native SHA-256 (the next read
 * of an unchanged card), the oldest forgotten first beyond {@link MAX_HASHED_CONTENTS} (~7 MB).
 */
const dnaHashes = new WeakMap<AgentCard, string>();
const byContent = new Map<string, string>();
const MAX_HASHED_CONTENTS = 50_000;

/** A stored protocol string as `{name, version}`: `name@version` splits at the last `@`; a bare name has version "". */
export function protocolObject(protocol: string): { name: string; version: string } {
  const at = protocol.lastIndexOf("@");
  return at > 0 ? { name: protocol.slice(0, at), version: protocol.slice(at + 1) } : { name: protocol, version: "" };
}

/** The wire view of a card (see the module comment for the fields and their defaults). */
export function agentCardView(card: AgentCard, options: AgentCardViewOptions = {}) {
  const compose = options.compat === "compose";
  return {
    walletAddress: card.walletAddress,
    name: card.name,
    description: card.description,
    plugins: card.plugins.map((p) => ({ registryId: p.registryId, name: p.name, origin: p.origin, ...(p.tools ? { tools: [...p.tools] } : {}) })),
    skills: [...card.skills],
    protocols: compose ? card.protocols.map(protocolObject) : [...card.protocols],
    ...(card.endpoint === undefined ? {} : { endpoint: card.endpoint }),
    ...(card.model === undefined ? (compose ? { model: "" } : {}) : { model: card.model }),
    x402Support: card.x402Support,
    createdAt: compose ? new Date(card.createdAt).toISOString() : card.createdAt,
    schemaVersion: AGENT_CARD_SCHEMA_VERSION,
    dnaHash: agentDnaHash(card),
    chain: card.chain ?? options.defaultChain ?? (compose ? 0 : null),
    licensePrice: card.licensePrice ?? "0",
    licenses: card.licenses ?? 0,
    cloneable: card.cloneable ?? false,
  };
}
