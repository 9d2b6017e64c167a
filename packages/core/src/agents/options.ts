/** Options of the agents capability (`createGateway({ agents: … })`). */
import { z } from "zod";
import { agentCardInputSchema } from "./card.js";

/** The external Agentverse-style directory behind `/api/directory/agents`. */
export const directoryOptionsSchema = z.strictObject({
  /** Base URL; the gateway calls `POST {url}/v1/search/agents`. */
  url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey: z.string().min(1).optional(),
  /** Whole-request deadline in milliseconds. @default 5000 */
  timeoutMs: z.number().int().min(1).max(120_000).optional(),
});
export type DirectoryOptions = z.output<typeof directoryOptionsSchema>;

/** The zod schema of `options.agents`. */
export const agentsOptionsSchema = z
  .strictObject({
    /**
     * Cards upserted into the store when the gateway is created (idempotent: a restart re-applies
     * them and keeps each card's first `createdAt`). Addresses are lower-cased; two cards with one
     * address are an option error.
     */
    seed: z.array(agentCardInputSchema).optional(),
    /** The external directory; without it the directory routes answer 503 `not_configured`. */
    directory: directoryOptionsSchema.optional(),
  })
  .superRefine((o, ctx) => {
    const seen = new Map<string, number>();
    o.seed?.forEach((card, i) => {
      const first = seen.get(card.walletAddress);
      if (first === undefined) seen.set(card.walletAddress, i);
      else ctx.addIssue({ code: "custom", path: ["seed", i, "walletAddress"], message: `repeats the address of seed card ${first} (${card.walletAddress})` });
    });
  })
  .optional();
export type AgentsOptions = z.output<typeof agentsOptionsSchema>;
