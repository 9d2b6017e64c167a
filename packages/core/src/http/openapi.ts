/**
 * The OpenAPI 3.1 document of a route table: paths from the route patterns, parameters and
 * request bodies from the zod schemas (their input side, as JSON Schema draft 2020-12), security
 * from each route's `security`, and the error envelope on every operation. Served at
 * `/openapi.json` and checked in as docs/openapi.json.
 */
import { z } from "zod";
import { componentSchemas, ERROR_RESPONSES, HEADER_PARAMETERS, ROUTE_DOCS, SECURITY_SCHEMES, type JsonObject } from "./openapi-components.js";
import { json } from "./respond.js";
import { defineRoute, type AnyRoute } from "./route.js";

/** The version of the HTTP API the document describes (the wire contract, not a package version). */
export const API_VERSION = "1.0.0";

/** Options of {@link buildOpenApiDocument}. */
export interface OpenApiOptions {
  readonly title: string;
  readonly version: string;
  /** The base URL clients call; omitted from the document when not given. */
  readonly serverUrl?: string;
}

/** An OpenAPI 3.1.0 document as plain JSON, keys in a fixed order. */
export interface OpenApiDocument {
  readonly openapi: "3.1.0";
  readonly info: { readonly title: string; readonly version: string; readonly description: string };
  readonly servers?: readonly { readonly url: string }[];
  readonly tags: readonly { readonly name: string }[];
  readonly paths: Record<string, Record<string, JsonObject>>;
  readonly components: JsonObject;
}

const DESCRIPTION = [
  "Generated from the route table — do not edit by hand.",
  "Every error answers the envelope in `#/components/schemas/Error`; every response carries `x-request-id`.",
  "Amounts are USDC atomic units: decimal strings on output, a positive integer or digits string on input.",
  "A known path called with another method answers 405 `method_not_allowed` with `Allow`.",
  "A `{name}` documented as greedy takes a URL-encoded id that may contain `/` (as `%2F`) and `:`.",
].join("\n");

/** The OpenAPI form of a route path: `:id` → `{id}`, greedy `:id+` → `{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)\+?/g, "{$1}");
}

/** A deterministic operation id: the method then the path's words, parameters as `By<Name>`. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split("/")
    .filter(Boolean)
    .flatMap((segment) => (segment.startsWith(":") ? ["by", segment.replace(/^:|\+$/g, "")] : segment.split(/[^A-Za-z0-9]+/)))
    .filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
}

const NEVER: JsonObject = { not: {} };
const FILE_PART: JsonObject = { type: "string", contentMediaType: "application/octet-stream" };

/** Drops `{not:{}}` branches of `anyOf` (a multipart-only member in a JSON body), collapsing a lone survivor. */
function pruneNever(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(pruneNever);
  if (typeof node !== "object" || node === null) return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) out[k] = pruneNever(v);
  const anyOf = out.anyOf;
  if (Array.isArray(anyOf)) {
    const kept = anyOf.filter(
      (b) => !(typeof b === "object" && b !== null && "not" in b && Object.keys(b).length === 1 && Object.keys((b as JsonObject).not as object).length === 0),
    );
    if (kept.length === 1 && typeof kept[0] === "object") {
      const { anyOf: _dropped, ...rest } = out;
      return { ...rest, ...(kept[0] as JsonObject) };
    }
    out.anyOf = kept;
  }
  return out;
}

/** Rewrites `#/$defs/<name>` references to their hoisted component names. */
function rewriteRefs(node: unknown, names: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, names));
  if (typeof node !== "object" || node === null) return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    const target = k === "$ref" && typeof v === "string" ? names.get(v) : undefined;
    out[k] = target ? `#/components/schemas/${target}` : rewriteRefs(v, names);
  }
  return out;
}

/**
 * Converts a route's zod schema (its input side) to a JSON Schema for the document. `z.custom`
 * members are multipart file parts: a binary part in a multipart body, absent from a JSON one.
 * Any other type without a JSON Schema form throws, naming `where`. `$defs` (recursive or
 * `meta({id})` schemas) move to `components.schemas`.
 */
function toSchema(schema: z.ZodType, where: string, form: "json" | "multipart", defs: Record<string, JsonObject>): JsonObject {
  const converted = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io: "input",
    unrepresentable: (ctx) => {
      if (ctx.zodSchema._zod.def.type === "custom") return form === "multipart" ? FILE_PART : NEVER;
      throw new Error(`OpenAPI: ${where}.${ctx.path.join(".")}: ${ctx.message}`);
    },
  }) as JsonObject;
  const { $schema: _dialect, $defs, ...rest } = converted;
  const names = new Map<string, string>();
  for (const name of Object.keys(($defs ?? {}) as JsonObject)) names.set(`#/$defs/${name}`, name.startsWith("__") ? `${where}${name.slice(1)}` : name);
  for (const [name, def] of Object.entries(($defs ?? {}) as JsonObject)) {
    const target = names.get(`#/$defs/${name}`)!;
    const value = pruneNever(rewriteRefs(def, names)) as JsonObject;
    if (target in defs && JSON.stringify(defs[target]) !== JSON.stringify(value))
      throw new Error(`OpenAPI: two different schemas share the id "${target}" (${where})`);
    defs[target] = value;
  }
  return pruneNever(rewriteRefs(rest, names)) as JsonObject;
}

/** One OpenAPI parameter per property of an object schema. */
function parametersOf(schema: JsonObject, location: "path" | "query", where: string): JsonObject[] {
  if (schema.type !== "object") throw new Error(`OpenAPI: ${where} must be a z.object schema`);
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries((schema.properties ?? {}) as Record<string, JsonObject>).map(([name, s]) => ({
    name,
    in: location,
    required: location === "path" || required.has(name),
    schema: s,
  }));
}

function pathParameters(route: AnyRoute, opId: string, defs: Record<string, JsonObject>): JsonObject[] {
  const names = [...route.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)(\+?)/g)].map((m) => ({ name: m[1]!, greedy: m[2] === "+" }));
  const declared = route.params ? parametersOf(toSchema(route.params, `${opId}.params`, "json", defs), "path", `${opId}.params`) : [];
  return names.map(({ name, greedy }) => ({
    ...(declared.find((p) => p.name === name) ?? { name, in: "path", required: true, schema: { type: "string" } }),
    ...(greedy ? { description: "Greedy: URL-encode the id; it may contain `/` (as %2F) and `:`." } : {}),
  }));
}

function requestBodyOf(route: AnyRoute, opId: string, defs: Record<string, JsonObject>): JsonObject | undefined {
  if (!route.body) return undefined;
  const schema = toSchema(route.body, `${opId}.body`, "json", defs);
  const content: JsonObject = { "application/json": { schema } };
  if (route.multipart) content["multipart/form-data"] = { schema: toSchema(route.body, `${opId}.body`, "multipart", defs) };
  const notes = [
    ...(route.bodyFromQuery ? ["Fields missing from the body are taken from the query string."] : []),
    ...(route.multipart ? ["Files may be sent as base64 or a data URL in JSON, or as parts of a multipart form."] : []),
  ];
  return {
    ...(notes.length ? { description: notes.join(" ") } : {}),
    required: Array.isArray(schema.required) && schema.required.length > 0,
    content,
  };
}

const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });

function responsesOf(route: AnyRoute, doc: (typeof ROUTE_DOCS)[string] | undefined): JsonObject {
  const status = doc?.status ?? 200;
  const security = route.security;
  const accepts = (security?.accepts ?? []).flat();
  const out: JsonObject = {
    [String(status)]: {
      description: doc?.description ?? (status === 201 ? "Created" : status === 202 ? "Accepted" : "OK"),
      content: doc?.content ?? { "application/json": { schema: { type: "object" } } },
    },
  };
  if (route.params || route.query || route.body || accepts.includes("session") || doc?.headers?.length) out["400"] = responseRef("BadRequest");
  if (accepts.length > 0) out["401"] = responseRef("Unauthorized");
  if (security?.charges) out["402"] = responseRef(accepts.includes("x402") ? "PaymentRequired" : "BudgetExhausted");
  out["404"] = responseRef("NotFound");
  // A wallet proof can name another wallet; a key can be of another owner, or barred from a model.
  if (accepts.includes("walletSession") || accepts.includes("serviceKey")) out["403"] = responseRef("Forbidden");
  if (route.body) out["408"] = responseRef("RequestTimeout");
  if (route.body) out["413"] = responseRef("PayloadTooLarge");
  if (route.body) out["415"] = responseRef("UnsupportedMediaType");
  // A body counts against its client's share of the in-flight body bytes.
  if (route.rateLimit || security?.charges || route.body) out["429"] = responseRef("RateLimited");
  for (const [code, name] of Object.entries(doc?.errors ?? {})) out[code] = responseRef(name);
  out["500"] = responseRef("InternalError");
  out.default = responseRef("Error");
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a === "default" ? 1 : b === "default" ? -1 : a.localeCompare(b))));
}

function operationOf(route: AnyRoute, defs: Record<string, JsonObject>): JsonObject {
  const opId = operationIdOf(route.method, route.path);
  const doc = ROUTE_DOCS[`${route.method} ${route.path}`];
  const parameters = [
    ...pathParameters(route, opId, defs),
    ...(route.query ? parametersOf(toSchema(route.query, `${opId}.query`, "json", defs), "query", `${opId}.query`) : []),
    ...(doc?.headers ?? []).map((name) => ({ $ref: `#/components/parameters/${name}` })),
  ];
  const body = requestBodyOf(route, opId, defs);
  const security = route.security;
  return {
    tags: [route.tag],
    summary: route.summary,
    operationId: opId,
    ...(parameters.length ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: responsesOf(route, doc),
    ...(security
      ? { security: [...security.accepts.map((c) => Object.fromEntries((typeof c === "string" ? [c] : c).map((name) => [name, []]))), ...(security.optional ? [{}] : [])] }
      : {}),
  };
}

/** The document with `servers` set to `url` (or removed), keys kept in the document's order. */
export function withServer(document: OpenApiDocument, url: string | undefined): OpenApiDocument {
  const { openapi, info, servers: _old, ...rest } = document;
  return { openapi, info, ...(url ? { servers: [{ url }] } : {}), ...rest };
}

/**
 * Builds the OpenAPI 3.1.0 document of `routes`, in table order. Deterministic: the same table
 * gives the same JSON text, byte for byte. Throws when a route's params/query schema is not an
 * object or a schema has a type JSON Schema cannot express (other than multipart files).
 */
export function buildOpenApiDocument(routes: readonly AnyRoute[], options: OpenApiOptions): OpenApiDocument {
  const defs: Record<string, JsonObject> = {};
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of routes) {
    const item = (paths[openApiPath(route.path)] ??= {});
    const method = route.method.toLowerCase();
    if (method in item) throw new Error(`OpenAPI: ${route.method} ${route.path} is declared twice`);
    item[method] = operationOf(route, defs);
  }
  const used = new Set(routes.flatMap((r) => (r.security?.accepts ?? []).flat()));
  const document: OpenApiDocument = {
    openapi: "3.1.0",
    info: { title: options.title, version: options.version, description: DESCRIPTION },
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { ...componentSchemas(), ...defs },
      responses: ERROR_RESPONSES,
      parameters: HEADER_PARAMETERS,
      securitySchemes: Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([name]) => used.has(name as never))),
    },
  };
  return withServer(document, options.serverUrl);
}

/**
 * `GET /openapi.json`: the document of `routes` (read on first request, so the table may include
 * this route itself), built once per route instance and served with `servers[0].url` set to the
 * origin the request reached, when known.
 */
export function openApiRoute(routes: readonly AnyRoute[], options: Omit<OpenApiOptions, "serverUrl"> = { title: "Tollgate", version: API_VERSION }): AnyRoute {
  let cached: OpenApiDocument | undefined;
  return defineRoute({
    method: "GET",
    path: "/openapi.json",
    tag: "meta",
    summary: "This API's OpenAPI 3.1 document, generated from the route table; servers[0] is the origin the request reached.",
    handle: ({ request }) => {
      cached ??= buildOpenApiDocument(routes, options);
      // servers[0] follows the Host (and, behind a trusted proxy, X-Forwarded-Host/-Proto): a shared cache must key on them.
      return json(withServer(cached, request.origin), { headers: { vary: "Host, X-Forwarded-Host, X-Forwarded-Proto" } });
    },
  });
}
