/**
 * Matches a request path against the route table. Literal segments beat parameters, so
 * `/v1/models/all` wins over `/v1/models/:model+`. Segments are percent-decoded individually, so
 * an encoded `/` (`%2F`) stays inside one parameter; a greedy `:name+` parameter also accepts an
 * unencoded id with slashes.
 */
import { invalidRequest } from "../errors.js";
import type { AnyRoute, RouteMethod } from "./route.js";

type Segment = { kind: "lit"; value: string } | { kind: "param"; name: string } | { kind: "rest"; name: string };

interface CompiledRoute {
  readonly route: AnyRoute;
  readonly segments: readonly Segment[];
  readonly restIndex: number;
}

/** The outcome of a match: a route with its raw params, or the methods allowed on the path (405), or nothing (404). */
export type RouteMatch =
  | { kind: "found"; route: AnyRoute; params: Record<string, string> }
  | { kind: "method_not_allowed"; allow: RouteMethod[] }
  | { kind: "not_found" };

/** A router over a fixed route table. */
export interface Router {
  match(method: string, path: string): RouteMatch;
  readonly routes: readonly AnyRoute[];
}

function compile(route: AnyRoute): CompiledRoute {
  const parts = route.path.split("/").filter(Boolean);
  const segments: Segment[] = parts.map((p) => {
    if (p.startsWith(":") && p.endsWith("+")) return { kind: "rest", name: p.slice(1, -1) };
    if (p.startsWith(":")) return { kind: "param", name: p.slice(1) };
    return { kind: "lit", value: p };
  });
  const restIndex = segments.findIndex((s) => s.kind === "rest");
  if (restIndex >= 0 && segments.slice(restIndex + 1).some((s) => s.kind !== "lit"))
    throw new Error(`route ${route.path}: only literal segments may follow a greedy parameter`);
  return { route, segments, restIndex };
}

const RANK = { lit: 0, param: 1, rest: 2 } as const;

/** Orders routes so that, at the first differing segment, literal < param < rest; longer patterns first on ties. */
function specificity(a: CompiledRoute, b: CompiledRoute): number {
  const n = Math.min(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const d = RANK[a.segments[i]!.kind] - RANK[b.segments[i]!.kind];
    if (d !== 0) return d;
  }
  return b.segments.length - a.segments.length;
}

function matchSegments(c: CompiledRoute, parts: readonly string[]): Record<string, string> | null {
  const segs = c.segments;
  if (c.restIndex < 0 ? parts.length !== segs.length : parts.length < segs.length) return null;
  const params: Record<string, string> = {};
  const tail = c.restIndex < 0 ? 0 : segs.length - c.restIndex - 1;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    if (seg.kind === "rest") {
      params[seg.name] = parts.slice(i, parts.length - tail).join("/");
      continue;
    }
    const part = c.restIndex >= 0 && i > c.restIndex ? parts[parts.length - (segs.length - i)]! : parts[i]!;
    if (seg.kind === "lit") {
      if (seg.value !== part) return null;
    } else params[seg.name] = part;
  }
  return params;
}

function decodePath(path: string): string[] {
  const raw = path.split("/").filter(Boolean);
  try {
    return raw.map((p) => decodeURIComponent(p));
  } catch {
    throw invalidRequest("The path contains a malformed percent-encoding.");
  }
}

/** Builds a router; throws at construction on two routes with the same method and pattern. */
export function createRouter(routes: readonly AnyRoute[]): Router {
  const compiled = routes.map(compile).sort(specificity);
  const seen = new Set<string>();
  for (const c of compiled) {
    const key = `${c.route.method} ${c.segments.map((s) => (s.kind === "lit" ? s.value : `:${s.kind}`)).join("/")}`;
    if (seen.has(key)) throw new Error(`duplicate route ${c.route.method} ${c.route.path}`);
    seen.add(key);
  }
  return {
    routes,
    match(method, path) {
      const parts = decodePath(path);
      const want = method === "HEAD" ? "GET" : method;
      const allow = new Set<RouteMethod>();
      let pattern: CompiledRoute | undefined;
      for (const c of compiled) {
        // Once a more specific pattern matched the path, only routes of that same pattern count for 405.
        if (pattern && specificity(pattern, c) !== 0) break;
        const params = matchSegments(c, parts);
        if (!params) continue;
        pattern ??= c;
        if (c.route.method === want) return { kind: "found", route: c.route, params };
        allow.add(c.route.method);
      }
      if (allow.size > 0) return { kind: "method_not_allowed", allow: [...allow].sort() };
      return { kind: "not_found" };
    },
  };
}
