/** The routes of agent discovery (docs/discovery.md "Agents"). All public. */
import { z } from "zod";
import { bytes, json, stringifyJson } from "../http/respond.js";
import type { AgentCard } from "../store/agents-types.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { clampedInt, optionalText } from "../http/schemas.js";
import type { GatewayContext } from "../context.js";
import { agentCardView, type AgentCardViewOptions } from "./view.js";
import { DIRECTORY_DIRECTIONS, DIRECTORY_SORTS, type DirectoryQuery } from "./directory.js";

/** How cards are rendered: `compat: "compose"` switches `protocols` to objects and `createdAt` to ISO (see view.ts). */
const viewOptions = (gateway: GatewayContext): AgentCardViewOptions => ({ compat: gateway.compat, defaultChain: gateway.services.agents.defaultChain });

const blankIsAbsent = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

const searchQuery = z.object({ q: optionalText(500), query: optionalText(500), limit: clampedInt(8, 1, 50) }).transform((v, ctx) => {
  const q = v.q ?? v.query;
  if (q === undefined) {
    ctx.addIssue({ code: "custom", path: ["q"], message: "is required (q, or its alias query)", input: v });
    return z.NEVER;
  }
  return { q, limit: v.limit };
});

const directoryQuery = z
  .object({
    search: optionalText(500),
    q: optionalText(500),
    category: optionalText(200),
    tags: optionalText(2000),
    limit: clampedInt(30, 1, 100),
    offset: z.preprocess(
      blankIsAbsent,
      z
        .string()
        .trim()
        .regex(/^\d{1,9}$/, "must be a non-negative integer")
        .transform(Number)
        .optional(),
    ),
    sort: z.preprocess(blankIsAbsent, z.enum(DIRECTORY_SORTS).optional()),
    direction: z.preprocess(blankIsAbsent, z.enum(DIRECTORY_DIRECTIONS).optional()),
  })
  .transform((v): DirectoryQuery => ({
    search: v.search ?? v.q,
    category: v.category,
    tags: v.tags
      ?.split(",")
      .map((t) => t.trim())
      .filter(Boolean),
    limit: v.limit,
    offset: v.offset ?? 0,
    sort: v.sort,
    direction: v.direction,
  }));

/** `/api/directory/agents` and its alias `/api/agentverse/agents` (docs/api.md "Aliases and compat differences"). */
function directoryRoute(path: string, summary: string) {
  return defineRoute({
    method: "GET",
    path,
    tag: "agents",
    summary,
    query: directoryQuery,
    rateLimit: { ip: "agents" },
    handle: async ({ query, request, gateway }) => json(await gateway.services.agents.searchDirectory(query, request.signal)),
  });
}

/** The `/agents` answer of each list the agents service handed out (its view options are the gateway's, fixed). */
const listings = new WeakMap<readonly AgentCard[], Uint8Array>();

/** Builds the agents route table. */
export function agentsRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: "/agents",
      tag: "agents",
      rateLimit: { ip: "agents" },
      summary:
        'List the agent cards, oldest first: {agents, total}. Cards carry schemaVersion, dnaHash, chain, licensePrice, licenses, cloneable; under compat "compose" protocols are {name, version} objects and createdAt an ISO string.',
      handle: async ({ gateway }) => {
        const cards = await gateway.services.agents.list();
        // The service hands out one list per read of the store (every 5 s at most): it is written once.
        let body = listings.get(cards);
        if (body === undefined) {
          const view = viewOptions(gateway);
          body = Buffer.from(stringifyJson({ agents: cards.map((card) => agentCardView(card, view)), total: cards.length }));
          listings.set(cards, body);
        }
        return bytes(body, "application/json; charset=utf-8");
      },
    }),
    defineRoute({
      method: "GET",
      path: "/agents/search",
      tag: "agents",
      rateLimit: { ip: "agents" },
      summary:
        "Rank agent cards by relevance to q (alias query) over name, skills, plugin names and description; limit 1..50, default 8; each card carries its score.",
      query: searchQuery,
      handle: async ({ query, gateway }) => {
        const ranked = await gateway.services.agents.search(query.q, { limit: query.limit });
        const view = viewOptions(gateway);
        return json({ agents: ranked.map(({ score, ...card }) => Object.assign(agentCardView(card, view), { score })), total: ranked.length });
      },
    }),
    defineRoute({
      method: "GET",
      path: "/agent/:walletAddress",
      tag: "agents",
      summary: "One agent card by wallet address (400 on a malformed address, 404 agent_not_found when unknown).",
      params: z.object({ walletAddress: z.string() }),
      handle: async ({ params, gateway }) => json(agentCardView(await gateway.services.agents.get(params.walletAddress), viewOptions(gateway))),
    }),
    directoryRoute(
      "/api/directory/agents",
      "Search the configured external agent directory (search|q, category, tags comma-separated, limit 1..100 default 30, offset, sort, direction); 503 when not configured.",
    ),
    directoryRoute("/api/agentverse/agents", "Alias of /api/directory/agents."),
  ];
}
