/**
 * The agent card schema (CONTRACT.md "Agents"): one zod schema serves the `agents.seed` option
 * and `gateway.services.agents.upsert`, so seeded and upserted cards obey the same rules.
 */
import { getAddress, isAddress } from "viem";
import { z } from "zod";
import type { AgentCard } from "../store/agents-types.js";

const text = (max: number) => z.string().trim().min(1, "must not be empty").max(max, `must be at most ${max} characters`);
const list = (max: number, item: number) => z.array(text(item)).max(max, `must hold at most ${max} entries`);

/** An EVM address, lower-cased. */
export const walletAddressSchema = z
  .string()
  .refine((v) => isAddress(v, { strict: false }), "must be a 0x-prefixed 20-byte EVM address")
  .transform((v) => getAddress(v).toLowerCase());

/** One plugin of a card. */
export const agentPluginSchema = z.object({
  registryId: text(200),
  name: text(200),
  origin: text(2000),
  tools: list(500, 200).optional(),
});

/**
 * A card as given by a seed or by `upsert`. Unknown fields are dropped; `description`,
 * `plugins`, `skills` and `protocols` default to empty, `x402Support` to false. `createdAt`
 * (Unix ms) is used only when the card is new; it defaults to the time of the first upsert.
 */
export const agentCardInputSchema = z.object({
  walletAddress: walletAddressSchema,
  name: text(200),
  description: z.string().trim().max(10_000, "must be at most 10000 characters").default(""),
  plugins: z.array(agentPluginSchema).max(200, "must hold at most 200 plugins").default([]),
  skills: list(500, 200).default([]),
  protocols: list(100, 200).default([]),
  endpoint: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
  model: text(200).optional(),
  x402Support: z.boolean().default(false),
  createdAt: z.number().int().nonnegative().max(8.64e15).optional(),
});

/** A card as `upsert` accepts it. */
export type AgentCardInput = z.input<typeof agentCardInputSchema>;
/** A validated card, before the store fixes `createdAt`. */
export type ParsedAgentCard = z.output<typeof agentCardInputSchema>;

/** The stored card of a validated input (`createdAt` from the input, else `now`). */
export function toAgentCard(input: ParsedAgentCard, now: number): AgentCard {
  return {
    walletAddress: input.walletAddress,
    name: input.name,
    description: input.description,
    plugins: input.plugins.map((p) => ({ registryId: p.registryId, name: p.name, origin: p.origin, ...(p.tools ? { tools: p.tools } : {}) })),
    skills: input.skills,
    protocols: input.protocols,
    ...(input.endpoint === undefined ? {} : { endpoint: input.endpoint }),
    ...(input.model === undefined ? {} : { model: input.model }),
    x402Support: input.x402Support,
    createdAt: input.createdAt ?? now,
  };
}

/** The wire view of a card, with its fields in contract order. */
export function agentCardView(card: AgentCard) {
  return {
    walletAddress: card.walletAddress,
    name: card.name,
    description: card.description,
    plugins: card.plugins.map((p) => ({ registryId: p.registryId, name: p.name, origin: p.origin, ...(p.tools ? { tools: [...p.tools] } : {}) })),
    skills: [...card.skills],
    protocols: [...card.protocols],
    ...(card.endpoint === undefined ? {} : { endpoint: card.endpoint }),
    ...(card.model === undefined ? {} : { model: card.model }),
    x402Support: card.x402Support,
    createdAt: card.createdAt,
  };
}
