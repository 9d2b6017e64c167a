/**
 * The agent card schema (docs/discovery.md "Agents"): one zod schema serves the `agents.seed` option
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

/** A protocol: a string (`name` or `name@version`), or the origin API's `{name, version}` object, stored as `name@version`. */
export const agentProtocolSchema = z.union([
  text(200),
  z
    .object({ name: text(100).refine((n) => !n.includes("@"), "must not contain @"), version: z.string().trim().max(99).optional() })
    .transform((p) => (p.version ? `${p.name}@${p.version}` : p.name)),
]);

/** Unix ms, or an ISO 8601 date-time (the origin API's form) converted to Unix ms. */
const timestamp = z.union([
  z.number().int().nonnegative().max(8.64e15),
  z.iso
    .datetime({ offset: true })
    .transform((v) => Date.parse(v))
    .pipe(z.number().int().nonnegative().max(8.64e15)),
]);

/**
 * A card as given by a seed or by `upsert`. Unknown fields are dropped; `description`,
 * `plugins`, `skills` and `protocols` default to empty, `x402Support` to false. `createdAt`
 * (Unix ms or ISO 8601) is used only when the card is new; it defaults to the time of the first
 * upsert. `chain`, `licensePrice` (USDC atomic units), `licenses` and `cloneable` are optional;
 * when absent the views show their defaults (see `agentCardView` in view.ts).
 */
export const agentCardInputSchema = z.object({
  walletAddress: walletAddressSchema,
  name: text(200),
  description: z.string().trim().max(10_000, "must be at most 10000 characters").default(""),
  plugins: z.array(agentPluginSchema).max(200, "must hold at most 200 plugins").default([]),
  skills: list(500, 200).default([]),
  protocols: z.array(agentProtocolSchema).max(100, "must hold at most 100 entries").default([]),
  endpoint: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
  model: text(200).optional(),
  x402Support: z.boolean().default(false),
  chain: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  licensePrice: z
    .string()
    .regex(/^(0|[1-9]\d{0,77})$/, "must be USDC atomic units: a non-negative integer as a decimal string")
    .optional(),
  licenses: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  cloneable: z.boolean().optional(),
  createdAt: timestamp.optional(),
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
    ...(input.chain === undefined ? {} : { chain: input.chain }),
    ...(input.licensePrice === undefined ? {} : { licensePrice: input.licensePrice }),
    ...(input.licenses === undefined ? {} : { licenses: input.licenses }),
    ...(input.cloneable === undefined ? {} : { cloneable: input.cloneable }),
    createdAt: input.createdAt ?? now,
  };
}
