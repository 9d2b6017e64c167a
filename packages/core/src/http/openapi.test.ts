import { describe, expect, it } from "vitest";
import { z } from "zod";
import { cardView } from "../catalog/card-view.js";
import { NATIVE_CATALOG } from "../catalog/generated/native-catalog.js";
import { ERROR_TABLE } from "../errors.js";
import { createGateway, gatewayRoutes } from "../gateway.js";
import { createMemoryStore } from "../store/memory.js";
import { generateCards } from "@tollgate/testing";
import { ERROR_RESPONSES, HEADER_PARAMETERS, ROUTE_DOCS, SECURITY_SCHEMES, type JsonObject } from "./openapi-components.js";
import { API_VERSION, buildOpenApiDocument, openApiPath, operationIdOf, type OpenApiDocument } from "./openapi.js";
import { json } from "./respond.js";
import { defineRoute, type AnyRoute } from "./route.js";

const routes = gatewayRoutes();
const doc = buildOpenApiDocument(routes, { title: "Tollgate", version: API_VERSION });
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
type Op = JsonObject & { parameters?: JsonObject[]; requestBody?: JsonObject; responses: Record<string, JsonObject> };
const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op: op as Op })));
const op = (method: string, path: string) => doc.paths[path]?.[method] as Op;

/** Resolves a local JSON pointer (`#/a/b`) in the document. */
function resolve(document: unknown, ref: string): unknown {
  return ref
    .slice(2)
    .split("/")
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce<unknown>((node, key) => (node && typeof node === "object" ? (node as JsonObject)[key] : undefined), document);
}

function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refsIn(n, out));
  else if (node && typeof node === "object") for (const [k, v] of Object.entries(node)) k === "$ref" && typeof v === "string" ? out.push(v) : refsIn(v, out);
  return out;
}

// Draft 2020-12 keywords (core, applicator, validation, meta-data, content, format) — nothing else may appear in a schema.
const KEYWORDS = new Set(
  "$ref $id $anchor $comment type enum const multipleOf maximum exclusiveMaximum minimum exclusiveMinimum maxLength minLength pattern maxItems minItems uniqueItems maxContains minContains maxProperties minProperties required dependentRequired title description default deprecated readOnly writeOnly examples format contentMediaType contentEncoding contentSchema".split(
    " ",
  ),
);
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "dependentSchemas"]);
const SCHEMA_LISTS = new Set(["anyOf", "allOf", "oneOf", "prefixItems"]);
const SUBSCHEMAS = new Set("items additionalProperties not propertyNames contains if then else unevaluatedItems unevaluatedProperties".split(" "));

/** The keys of `schema` and its subschemas that are not draft 2020-12 keywords. */
function foreignKeywords(schema: unknown, at: string): string[] {
  if (typeof schema === "boolean") return [];
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return [`${at}: not a schema`];
  return Object.entries(schema).flatMap(([k, v]) => {
    if (SCHEMA_MAPS.has(k)) return Object.entries(v as JsonObject).flatMap(([name, s]) => foreignKeywords(s, `${at}.${k}.${name}`));
    if (SCHEMA_LISTS.has(k)) return (v as unknown[]).flatMap((s, i) => foreignKeywords(s, `${at}.${k}.${i}`));
    if (SUBSCHEMAS.has(k)) return foreignKeywords(v, `${at}.${k}`);
    return KEYWORDS.has(k) ? [] : [`${at}.${k}`];
  });
}

function schemasOf(document: OpenApiDocument): [string, unknown][] {
  const out: [string, unknown][] = Object.entries((document.components.schemas ?? {}) as JsonObject).map(([n, s]) => [`components.${n}`, s]);
  for (const { path, method, op: o } of operations) {
    for (const p of o.parameters ?? []) if (p.schema) out.push([`${method} ${path} ${String(p.name)}`, p.schema]);
    for (const [type, media] of Object.entries((o.requestBody?.content ?? {}) as Record<string, JsonObject>))
      out.push([`${method} ${path} body ${type}`, media.schema]);
    for (const [status, r] of Object.entries(o.responses))
      for (const [type, media] of Object.entries((r.content ?? {}) as Record<string, JsonObject>))
        if (media.schema) out.push([`${method} ${path} ${status} ${type}`, media.schema]);
  }
  return out;
}

describe("buildOpenApiDocument over the gateway route table", () => {
  it("is an OpenAPI 3.1.0 document with every route exactly once, under its method", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info).toMatchObject({ title: "Tollgate", version: API_VERSION });
    expect(doc.servers).toBeUndefined();
    expect(operations).toHaveLength(routes.length);
    for (const r of routes)
      expect(op(r.method.toLowerCase(), openApiPath(r.path)), `${r.method} ${r.path}`).toMatchObject({ tags: [r.tag], summary: r.summary });
    for (const item of Object.values(doc.paths)) for (const m of Object.keys(item)) expect(METHODS).toContain(m);
    expect(doc.tags.map((t) => t.name)).toEqual([...new Set(routes.map((r) => r.tag))]);
  });

  it("declares every {param} of a path as a required path parameter, and no other", () => {
    for (const { path, method, op: o } of operations) {
      const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const declared = (o.parameters ?? []).filter((p) => p.in === "path");
      expect(
        declared.map((p) => p.name),
        `${method} ${path}`,
      ).toEqual(inPath);
      for (const p of declared) expect(p.required).toBe(true);
    }
    expect(op("get", "/v1/models/{model}").parameters?.[0]?.description).toMatch(/URL-encode/);
  });

  it("resolves every $ref, uses unique operationIds and names only defined security schemes", () => {
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(100);
    for (const ref of refs) expect(resolve(doc, ref), ref).toBeTypeOf("object");
    const ids = operations.map(({ op: o }) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const schemes = (doc.components.securitySchemes ?? {}) as JsonObject;
    for (const { op: o } of operations)
      for (const req of (o.security ?? []) as JsonObject[]) for (const name of Object.keys(req)) expect(schemes).toHaveProperty(name);
    expect(Object.keys(schemes).sort()).toEqual(Object.keys(SECURITY_SCHEMES).sort());
  });

  it("uses only the fields OpenAPI 3.1 defines for operations, parameters, bodies and responses", () => {
    const only = (o: object, allowed: string, at: string) =>
      expect(
        Object.keys(o).filter((k) => !allowed.split(" ").includes(k)),
        at,
      ).toEqual([]);
    const components = doc.components as Record<string, Record<string, JsonObject>>;
    for (const [name, p] of Object.entries(components.parameters!)) only(p, "name in description required schema", name);
    for (const [name, r] of Object.entries(components.responses!)) expect(r.description, name).toBeTypeOf("string");
    for (const { path, method, op: o } of operations) {
      const at = `${method} ${path}`;
      only(o, "tags summary operationId parameters requestBody responses security", at);
      for (const p of o.parameters ?? []) only(p, p.$ref ? "$ref" : "name in description required schema", at);
      if (o.requestBody) only(o.requestBody, "description required content", at);
      for (const [status, r] of Object.entries(o.responses)) {
        expect(status, at).toMatch(/^(default|[1-5]\d\d)$/);
        if (r.$ref) only(r, "$ref", at);
        else for (const media of Object.values(r.content as Record<string, JsonObject>)) only(media, "schema", at);
      }
    }
  });

  it("has a request body exactly on the routes that read one, required when the schema requires a field", () => {
    for (const r of routes) {
      const o = op(r.method.toLowerCase(), openApiPath(r.path));
      expect(o.requestBody !== undefined, `${r.method} ${r.path}`).toBe(r.body !== undefined);
      if (r.multipart) expect(Object.keys(o.requestBody!.content as JsonObject)).toEqual(["application/json", "multipart/form-data"]);
    }
    expect(op("post", "/api/settlement/batch").requestBody).toBeUndefined();
    expect(op("post", "/v1/models/search").requestBody).toMatchObject({ required: false, description: expect.stringMatching(/query string/) });
  });

  it("writes draft 2020-12 schemas with no zod leftovers", () => {
    const schemas = schemasOf(doc);
    expect(schemas.length).toBeGreaterThan(80);
    for (const [at, schema] of schemas) expect(foreignKeywords(schema, at)).toEqual([]);
    expect(JSON.stringify(doc)).not.toMatch(/"\$schema"|"~standard"|"_zod"|"\$defs"/);
  });

  it("answers errors in the envelope: the Error schema lists every code of the error table", () => {
    const body = (doc.components.schemas as Record<string, { properties: Record<string, { enum?: string[] }> }>).ErrorBody!;
    expect(body.properties.code!.enum).toEqual(Object.keys(ERROR_TABLE));
    expect(new Set(body.properties.type!.enum)).toEqual(new Set(Object.values(ERROR_TABLE).map((s) => s.type)));
    const statuses = (method: string, path: string) => Object.keys(op(method, path).responses);
    expect(statuses("get", "/api/pricing")).toEqual(["200", "404", "500", "default"]);
    expect(statuses("post", "/api/keys")).toEqual(["201", "400", "401", "402", "403", "404", "408", "413", "415", "429", "500", "503", "default"]);
    expect(statuses("post", "/api/keys/settle")).toEqual(["200", "400", "401", "402", "403", "404", "408", "413", "415", "429", "500", "default"]);
    expect(statuses("post", "/api/dispenser/claim")).toEqual(["200", "400", "404", "408", "413", "415", "429", "500", "default"]);
    expect(op("post", "/api/keys/settle").responses["402"]).toEqual({ $ref: "#/components/responses/BudgetExhausted" });
    // Key creation and changes need the wallet's funds on a settled chain, read from the chain.
    for (const [method, path] of [["post", "/api/keys"], ["patch", "/api/keys/{keyId}"]] as const) {
      expect(op(method, path).responses["402"]).toEqual({ $ref: "#/components/responses/InsufficientFunds" });
      expect(op(method, path).responses["503"]).toEqual({ $ref: "#/components/responses/ChainUnavailable" });
    }
    expect(op("post", "/v1/embeddings").responses["402"]).toEqual({ $ref: "#/components/responses/PaymentRequired" });
    expect(op("post", "/api/settlement/batch").responses["401"]).toEqual({ $ref: "#/components/responses/Unauthorized" });
  });

  it("states each route's credentials as its security requirement", () => {
    // Acting for a wallet takes a proof of it: a wallet session, the internal secret together with
    // the wallet header (never the header alone), or (except for key creation) a key of that wallet.
    expect(op("post", "/api/keys").security).toEqual([{ walletSession: [] }, { internalSecret: [], session: [] }]);
    for (const [method, path] of [["get", "/api/keys"], ["get", "/api/payments/intents"], ["get", "/api/settlement/status"]])
      expect(op(method!, path!).security, `${method} ${path}`).toEqual([{ walletSession: [] }, { serviceKey: [] }, { internalSecret: [], session: [] }]);
    expect(op("get", "/api/keys/{keyId}").security).toEqual([{ serviceKey: [] }]);
    expect(op("post", "/api/payments/settle").security).toEqual([{ serviceKey: [] }, {}]);
    expect(op("post", "/v1/feedback").security).toEqual([{ walletSession: [] }, { serviceKey: [] }, { internalSecret: [], session: [] }, {}]);
    expect(op("post", "/v1/audio/speech").security).toEqual([{ serviceKey: [] }, { x402: [] }]);
    expect(op("post", "/api/settlement/batch").security).toEqual([{ internalSecret: [] }]);
    expect(op("get", "/v1/models").security).toBeUndefined();
    expect(SECURITY_SCHEMES.session).toMatchObject({ type: "apiKey", in: "header", name: "x-session-user-address" });
    expect(SECURITY_SCHEMES.walletSession).toMatchObject({ type: "http", scheme: "bearer" });
    expect(SECURITY_SCHEMES.internalSecret).toMatchObject({ type: "apiKey", in: "header", name: "x-internal-secret" });
    expect(SECURITY_SCHEMES.x402).toMatchObject({ type: "apiKey", in: "header", name: "PAYMENT-SIGNATURE" });
    for (const r of routes) if (r.security?.accepts.flat().includes("x402")) expect(r.security.charges, `${r.method} ${r.path}`).toBe(true);
  });

  it("keys every per-route response fact by a route of the table", () => {
    const keys = new Set(routes.map((r) => `${r.method} ${r.path}`));
    for (const [key, facts] of Object.entries(ROUTE_DOCS)) {
      expect(keys, key).toContain(key);
      for (const h of facts.headers ?? []) expect(HEADER_PARAMETERS).toHaveProperty(h);
      for (const name of Object.values(facts.errors ?? {})) expect(ERROR_RESPONSES, key).toHaveProperty(name);
    }
  });

  it("spot-checks real routes", () => {
    const keyBody = (op("post", "/api/keys").requestBody!.content as Record<string, { schema: JsonObject }>)["application/json"]!.schema;
    expect(keyBody.required).toEqual(expect.arrayContaining(["budgetLimit", "expiresAt", "purpose"]));
    expect((keyBody.properties as JsonObject).purpose).toEqual({ type: "string", enum: ["session", "api"] });
    expect(op("post", "/api/keys").responses["201"]).toBeDefined();

    const query = op("get", "/v1/models").parameters!.filter((p) => p.in === "query");
    expect(query.map((p) => p.name)).toEqual(["q", "provider", "modality", "operation", "limit", "cursor"]);
    expect(query.every((p) => p.required === false)).toBe(true);
    expect(
      op("get", "/v1/feedback")
        .parameters!.filter((p) => p.required)
        .map((p) => p.name),
    ).toEqual(["targetType", "targetId"]);

    expect(Object.keys(op("get", "/v1/videos/{id}/stream").responses["200"]!.content as JsonObject)).toEqual(["text/event-stream"]);
    expect(Object.keys(op("post", "/v1/audio/speech").responses["200"]!.content as JsonObject)).toEqual(["audio/*"]);
    expect(Object.keys(op("post", "/v1/videos/generations").responses)[0]).toBe("202");
    expect(op("post", "/api/payments/prepare").parameters).toContainEqual({ $ref: "#/components/parameters/IdempotencyKey" });

    const edits = op("post", "/v1/images/edits").requestBody!.content as Record<string, { schema: { properties: Record<string, JsonObject> } }>;
    expect(edits["application/json"]!.schema.properties.image).toEqual({ type: "string", minLength: 1 });
    expect(edits["multipart/form-data"]!.schema.properties.image!.anyOf).toContainEqual({ type: "string", contentMediaType: "application/octet-stream" });
  });

  it("documents the model card routes' answers: ModelCard (OpenAI's id/object/created/owned_by first) covers every field a served card view has", () => {
    const schema = (method: string, path: string) => (op(method, path).responses["200"]!.content as Record<string, { schema?: JsonObject }>)["application/json"]!.schema;
    for (const path of ["/v1/models", "/v1/models/all"]) expect(schema("get", path)).toEqual({ $ref: "#/components/schemas/ModelList" });
    expect(schema("post", "/v1/models/search")).toEqual({ $ref: "#/components/schemas/ModelList" });
    expect(schema("get", "/v1/models/{model}")).toEqual({ $ref: "#/components/schemas/ModelCard" });
    type Obj = { properties: Record<string, JsonObject>; required: string[] };
    const schemas = doc.components.schemas as Record<string, Obj>;
    const [card, operation, unit] = [schemas.ModelCard!, schemas.ModelOperation!, schemas.ModelPricingUnit!];
    expect(card.required.slice(0, 4)).toEqual(["id", "object", "created", "owned_by"]);
    expect(card.properties.object).toEqual({ const: "model" });
    expect(card.properties.created).toMatchObject({ type: "integer" });
    /** Every key of `value` is a documented property and every required property is present. */
    const covers = (s: Obj, value: object, at: string) => {
      expect(Object.keys(value).filter((k) => !(k in s.properties)), at).toEqual([]);
      expect(s.required.filter((k) => !(k in value)), at).toEqual([]);
    };
    for (const c of [...NATIVE_CATALOG, ...generateCards(50, 7)]) {
      const view = cardView(c);
      covers(card, view, c.modelId);
      for (const o of view.operations) {
        covers(operation, o, `${c.modelId} ${o.operation}`);
        for (const u of o.pricingUnits) covers(unit, u, `${c.modelId} ${u.unitKey}`);
      }
    }
  });

  it("is deterministic: two builds from two route tables give the same text", () => {
    const again = buildOpenApiDocument(gatewayRoutes(), { title: "Tollgate", version: API_VERSION });
    expect(JSON.stringify(again)).toBe(JSON.stringify(doc));
    expect(Object.keys(buildOpenApiDocument(routes, { title: "T", version: "1", serverUrl: "https://api.example.com" }))).toEqual([
      "openapi",
      "info",
      "servers",
      "tags",
      "paths",
      "components",
    ]);
  });
});

describe("buildOpenApiDocument over other tables", () => {
  const route = (extra: Partial<AnyRoute>): AnyRoute =>
    defineRoute({ method: "POST", path: "/x", tag: "t", summary: "s", handle: () => json({}), ...extra }) as AnyRoute;
  const build = (...table: AnyRoute[]) => buildOpenApiDocument(table, { title: "T", version: "1" });

  it("moves recursive and named schemas to components.schemas and rewrites their references", () => {
    const Node: z.ZodType = z.object({
      name: z.string(),
      get children() {
        return z.array(Node).optional();
      },
    });
    const Named = z.object({ id: z.string() }).meta({ id: "Named" });
    const d = build(route({ body: z.object({ tree: Node, a: Named }) }), route({ path: "/y", body: z.object({ b: Named }) }));
    const schemas = d.components.schemas as JsonObject;
    expect(schemas.Named).toEqual({ type: "object", properties: { id: { type: "string" } }, required: ["id"] });
    const recursive = Object.keys(schemas).filter((n) => n.startsWith("postX.body_"));
    expect(recursive).toHaveLength(1);
    for (const ref of refsIn(d)) expect(resolve(d, ref), ref).toBeTypeOf("object");
    expect(JSON.stringify(d)).not.toContain("$defs");
  });

  it("declares an undeclared path parameter as a string, and rejects what it cannot describe", () => {
    const d = build(route({ method: "GET", path: "/things/:thingId" }));
    expect((d.paths["/things/{thingId}"]!.get as Op).parameters).toEqual([{ name: "thingId", in: "path", required: true, schema: { type: "string" } }]);
    const optional = build(route({ method: "GET", path: "/things/:thingId", params: z.object({ thingId: z.string().optional() }) }));
    expect((optional.paths["/things/{thingId}"]!.get as Op).parameters?.[0]).toMatchObject({ name: "thingId", required: true });
    expect(() => build(route({ body: z.object({ when: z.date() }) }))).toThrow(/postX\.body\.properties\.when/);
    expect(() => build(route({ method: "GET", query: z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]) as z.ZodType }))).toThrow(
      /getX\.query must be a z\.object/,
    );
    expect(() => build(route({}), route({}))).toThrow(/POST \/x is declared twice/);
    expect(operationIdOf("GET", "/v1/models/:model+/params")).toBe("getV1ModelsByModelParams");
  });
});

describe("GET /openapi.json", () => {
  it("serves the document with servers[0] set to the request origin, the same on every call", async () => {
    const gateway = createGateway({ store: createMemoryStore() });
    try {
      const first = await gateway.fetch(new Request("http://gateway.test/openapi.json"));
      expect(first.status).toBe(200);
      expect(first.headers.get("content-type")).toMatch(/^application\/json/);
      expect(first.headers.get("x-request-id")).toMatch(/^req_/);
      const text = await first.text();
      const served = JSON.parse(text) as OpenApiDocument;
      expect(served.servers).toEqual([{ url: "http://gateway.test" }]);
      expect(served).toEqual(
        JSON.parse(JSON.stringify(buildOpenApiDocument(routes, { title: "Tollgate", version: API_VERSION, serverUrl: "http://gateway.test" }))),
      );
      expect(await (await gateway.fetch(new Request("http://gateway.test/openapi.json"))).text()).toBe(text);

      const other = (await (await gateway.fetch(new Request("https://api.example.com:8443/openapi.json"))).json()) as OpenApiDocument;
      expect(other.servers).toEqual([{ url: "https://api.example.com:8443" }]);
      expect({ ...other, servers: undefined }).toEqual({ ...served, servers: undefined });

      const wrong = await gateway.fetch(new Request("http://gateway.test/openapi.json", { method: "POST" }));
      expect(wrong.status).toBe(405);
      expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
    } finally {
      await gateway.close();
    }
  });
});
