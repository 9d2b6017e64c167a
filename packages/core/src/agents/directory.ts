/**
 * Client of an external Agentverse-style agent directory (`POST {url}/v1/search/agents`) behind
 * `GET /api/directory/agents`. The upstream answer is validated with zod and normalised to the
 * directory shape of docs/discovery.md "Agents"; missing or mistyped fields get neutral defaults.
 */
import { z } from "zod";
import { GatewayError } from "../errors.js";
import type { HttpClient } from "../http/client.js";
import { boundedText, hostOf } from "../http/client.js";
import type { DirectoryOptions } from "./options.js";

/** The largest directory answer read (a page of agents is a few KB; larger is refused with 502). */
const MAX_DIRECTORY_BYTES = 4 * 1024 * 1024;

export const DIRECTORY_SORTS = ["relevancy", "created-at", "last-modified", "interactions"] as const;
export const DIRECTORY_DIRECTIONS = ["asc", "desc"] as const;

/** A directory search, as the route validated it. */
export interface DirectoryQuery {
  search?: string | undefined;
  category?: string | undefined;
  tags?: string[] | undefined;
  /** 1..100. */
  limit: number;
  /** ≥ 0. */
  offset: number;
  sort?: (typeof DIRECTORY_SORTS)[number] | undefined;
  direction?: (typeof DIRECTORY_DIRECTIONS)[number] | undefined;
}

const str = z.string().catch("");
const nullableStr = z.string().nullable().catch(null);
const count = z.number().finite().nonnegative().catch(0);
/** Protocols are strings or `{name, version, digest}` objects upstream; anything else is dropped. */
const protocols = z
  .array(z.unknown())
  .catch([])
  .transform((items) =>
    items.filter((p): p is string | Record<string, unknown> => typeof p === "string" || (typeof p === "object" && p !== null && !Array.isArray(p))),
  );

/** One directory agent, normalised. */
const directoryAgentSchema = z
  .object({
    address: str,
    name: str,
    description: str,
    readme: str,
    protocols,
    avatar_href: nullableStr,
    total_interactions: count,
    recent_interactions: count,
    rating: z.number().finite().nullable().catch(null),
    status: nullableStr,
    type: nullableStr,
    featured: z.boolean().catch(false),
    category: nullableStr,
    system_wide_tags: z
      .array(z.unknown())
      .catch([])
      .transform((tags) => tags.filter((t): t is string => typeof t === "string")),
    last_updated: nullableStr,
    created_at: nullableStr,
    owner: nullableStr,
  })
  .transform((a) => ({
    address: a.address,
    name: a.name,
    description: a.description,
    readme: a.readme,
    protocols: a.protocols,
    avatar_href: a.avatar_href,
    total_interactions: a.total_interactions,
    recent_interactions: a.recent_interactions,
    rating: a.rating,
    status: a.status,
    type: a.type,
    featured: a.featured,
    category: a.category,
    system_wide_tags: a.system_wide_tags,
    last_updated: a.last_updated,
    created_at: a.created_at,
    owner: a.owner,
  }));

export type DirectoryAgent = z.output<typeof directoryAgentSchema>;

/** A normalised page of the directory. */
export interface DirectoryPage {
  agents: DirectoryAgent[];
  total: number;
  offset: number;
  limit: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const nonNegative = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.trunc(v) : undefined);

/**
 * Normalises an upstream answer: `{agents, total|num_hits, offset, limit}` or a bare array of
 * agents. Entries that are not objects are dropped. @returns null when the shape is unusable.
 */
export function normaliseDirectoryAnswer(body: unknown, query: DirectoryQuery): DirectoryPage | null {
  const raw = Array.isArray(body) ? body : isObject(body) ? (body.agents ?? []) : null;
  if (!Array.isArray(raw)) return null;
  const agents = raw.filter(isObject).map((a) => directoryAgentSchema.parse(a));
  const meta = isObject(body) ? body : {};
  return {
    agents,
    total: nonNegative(meta.total) ?? nonNegative(meta.num_hits) ?? query.offset + agents.length,
    offset: nonNegative(meta.offset) ?? query.offset,
    limit: nonNegative(meta.limit) ?? query.limit,
  };
}

/**
 * The upstream request body. Field names follow Agentverse's search API: `search_text`, and
 * `filters.category` as a list; `tags` ride in `filters.tags`. `sort` and `direction` are sent
 * only when given, so the directory's own defaults apply otherwise.
 */
export function directoryRequestBody(query: DirectoryQuery): Record<string, unknown> {
  const filters: Record<string, unknown> = {};
  if (query.category !== undefined) filters.category = [query.category];
  if (query.tags !== undefined && query.tags.length > 0) filters.tags = query.tags;
  const body: Record<string, unknown> = {};
  if (query.search !== undefined) body.search_text = query.search;
  body.filters = filters;
  if (query.sort !== undefined) body.sort = query.sort;
  if (query.direction !== undefined) body.direction = query.direction;
  body.offset = query.offset;
  body.limit = query.limit;
  return body;
}

/**
 * Searches the directory. Throws 504 `upstream_timeout` when `timeoutMs` passes, 502
 * `upstream_error` on a connection failure, a non-2xx status, a body that is not JSON or a JSON
 * shape without an agent list.
 */
export async function searchDirectory(http: HttpClient, options: DirectoryOptions, query: DirectoryQuery, signal?: AbortSignal): Promise<DirectoryPage> {
  const url = `${options.url.replace(/\/+$/, "")}/v1/search/agents`;
  const host = hostOf(options.url);
  const res = await http({
    method: "POST",
    url,
    headers: {
      accept: "application/json",
      "content-type": "application/json",
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    },
    body: JSON.stringify(directoryRequestBody(query)),
    timeoutMs: options.timeoutMs ?? 5000,
    ...(signal ? { signal } : {}),
  });
  const text = await boundedText(res, MAX_DIRECTORY_BYTES, `The agent directory at ${host}`);
  if (res.status < 200 || res.status > 299)
    throw new GatewayError("upstream_error", `The agent directory at ${host} answered ${res.status}.`, { details: { upstreamStatus: res.status } });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new GatewayError("upstream_error", `The agent directory at ${host} did not answer JSON.`);
  }
  const page = normaliseDirectoryAnswer(body, query);
  if (!page) throw new GatewayError("upstream_error", `The agent directory at ${host} answered JSON without an agent list.`);
  return page;
}
