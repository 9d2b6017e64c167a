import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NATIVE_CATALOG } from "../catalog/generated/native-catalog.js";
import type { Gateway } from "../gateway-types.js";
import { createGateway, type GatewayOptions } from "../index.js";
import { generateCards } from "./card-fixtures.js";

/** A client bound to one gateway: sends a path (with query) and init, returns the Web Response. */
export interface TestClient {
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** How a suite reaches a gateway: directly (`gateway.fetch`) or through an adapter on a real port. */
export type Connect = (gateway: Gateway) => Promise<TestClient>;

/** `gateway.fetch` as a {@link Connect}. */
export const connectDirect: Connect = async (gateway) => ({
  fetch: (path, init) => gateway.fetch(new Request(`http://gw.test${path}`, init)),
  close: () => gateway.close(),
});

const body = async (res: Response) => (await res.json()) as any;
/** A POST with a JSON body (a JSON route answers 415 to any other Content-Type). */
const postJson = (value: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(value) });

/**
 * Every route of SPEC.md "Models" with good and bad input, including `/api/models` against a
 * local stub models service (success, slow → 504, 500 → 502, not JSON → 502, refused → 502).
 */
export function runCatalogRouteSuite(name: string, connect: Connect): void {
  describe(`catalog routes (${name})`, () => {
    const clients: TestClient[] = [];
    const open = async (options: GatewayOptions = {}) => {
      const c = await connect(createGateway(options));
      clients.push(c);
      return c;
    };
    let main: TestClient;
    const get = (path: string, init?: RequestInit) => main.fetch(path, init);

    let stub: Server;
    let stubUrl = "";
    beforeAll(async () => {
      main = await open();
      stub = createServer((req, res) => {
        if (req.url?.startsWith("/slow")) return void setTimeout(() => res.end("{}"), 2000);
        if (req.url?.startsWith("/fail")) return void res.writeHead(500).end("boom");
        if (req.url?.startsWith("/html")) return void res.writeHead(200, { "content-type": "text/html" }).end("<html>");
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: [{ id: "upstream-model" }], query: req.url }));
      });
      await new Promise<void>((r) => stub.listen(0, "127.0.0.1", r));
      stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await Promise.all(clients.map((c) => c.close()));
      await new Promise<void>((r) => stub.close(() => r()));
    });

    describe("GET /v1/models and POST /v1/models/search", () => {
      it("lists 50 by default and pages through the whole catalog without duplicates", async () => {
        const first = await body(await get("/v1/models"));
        expect(first).toMatchObject({ object: "list", total: NATIVE_CATALOG.length });
        expect(first.data).toHaveLength(50);
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page: any = await body(await get(`/v1/models?limit=17${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`));
          seen.push(...page.data.map((c: any) => `${c.provider}:${c.modelId}`));
          cursor = page.next_cursor;
        } while (cursor);
        expect(seen).toHaveLength(NATIVE_CATALOG.length);
        expect(new Set(seen).size).toBe(seen.length);
      });

      it("clamps limit 0 and 10000, and rejects a non-numeric limit", async () => {
        expect((await body(await get("/v1/models?limit=0"))).data).toHaveLength(1);
        expect((await body(await get("/v1/models?limit=10000"))).data).toHaveLength(Math.min(200, NATIVE_CATALOG.length));
        const bad = await get("/v1/models?limit=abc");
        expect(bad.status).toBe(400);
        expect((await body(bad)).error).toMatchObject({ code: "invalid_request", param: "limit" });
      });

      it("filters by provider, modality and operation, in the query or the body", async () => {
        const edits = await body(await get("/v1/models?modality=image&operation=edit"));
        expect(edits.total).toBeGreaterThan(0);
        for (const c of edits.data) expect(c.operations).toContainEqual({ modality: "image", operation: "edit" });
        const viaBody = await body(
          await get("/v1/models/search", postJson({ modality: "image", operation: "edit", limit: 200 })),
        );
        expect(viaBody.total).toBe(edits.total);
        const viaQuery = await body(await get("/v1/models/search?provider=openai&q=embedding", { method: "POST" }));
        expect(viaQuery.total).toBeGreaterThan(0);
        for (const c of viaQuery.data) expect(c.provider).toBe("openai");
      });

      it("answers 400 for an invalid provider, modality, operation or cursor", async () => {
        for (const [query, param] of [
          ["provider=nope", "provider"],
          ["modality=smell", "modality"],
          ["operation=dance", "operation"],
          ["cursor=garbage", "cursor"],
        ]) {
          const res = await get(`/v1/models?${query}`);
          expect(res.status).toBe(400);
          expect((await body(res)).error).toMatchObject({ code: "invalid_request", param, type: "invalid_request_error" });
        }
        const post = await get("/v1/models/search", postJson({ provider: "nope" }));
        expect(post.status).toBe(400);
        // The same body as text/plain (what fetch sends for a string body by default) is refused as such.
        const plain = await get("/v1/models/search", { method: "POST", body: JSON.stringify({ provider: "nope" }) });
        expect(plain.status).toBe(415);
        expect((await body(plain)).error).toMatchObject({ code: "unsupported_media_type", param: "content-type" });
      });
    });

    describe("GET /v1/models/{model} and /params", () => {
      const slashed = NATIVE_CATALOG.find((c) => c.modelId.includes("/"))!;
      const coloned = NATIVE_CATALOG.find((c) => c.modelId.includes(":"))!;

      it("serves cards by URL-encoded id, including ids with / and :", async () => {
        for (const card of [slashed, coloned]) {
          const res = await get(`/v1/models/${encodeURIComponent(card.modelId)}?provider=${card.provider}`);
          expect(res.status).toBe(200);
          expect(await body(res)).toEqual(JSON.parse(JSON.stringify(card)));
        }
      });

      it("resolves duplicate ids by provider priority and ?provider selects another", async () => {
        const ids = new Map<string, string[]>();
        for (const c of NATIVE_CATALOG) ids.set(c.modelId, [...(ids.get(c.modelId) ?? []), c.provider]);
        const [id, providers] = [...ids].find(([, p]) => p.length > 1)!;
        const preferred = createGateway().services.catalog.find(id)!.provider;
        expect((await body(await get(`/v1/models/${encodeURIComponent(id)}`))).provider).toBe(preferred);
        const other = providers.find((p) => p !== preferred)!;
        expect((await body(await get(`/v1/models/${encodeURIComponent(id)}?provider=${other}`))).provider).toBe(other);
      });

      it("answers 404 model_not_found for unknown ids", async () => {
        const res = await get("/v1/models/no-such-model%2Fv9");
        expect(res.status).toBe(404);
        expect((await body(res)).error).toMatchObject({ code: "model_not_found", type: "not_found_error" });
        expect((await get("/v1/models/no-such-model/params")).status).toBe(404);
      });

      it("serves parameter metadata with defaults", async () => {
        const card = NATIVE_CATALOG.find((c) => c.params && Object.values(c.params).some((p) => p.default !== undefined))!;
        const res = await body(await get(`/v1/models/${encodeURIComponent(card.modelId)}/params?provider=${card.provider}`));
        expect(res).toMatchObject({ modelId: card.modelId, provider: card.provider, modality: card.operations[0]!.modality });
        expect(Object.keys(res.params)).toEqual(Object.keys(card.params!));
        for (const [k, v] of Object.entries(res.defaults)) expect(card.params![k]!.default).toEqual(v);
      });
    });

    describe("/v1/models/all, /api/pricing, /api/models", () => {
      it("serves the native catalog from /v1/models/all without an extended one, and the extended one when given", async () => {
        expect((await body(await get("/v1/models/all"))).total).toBe(NATIVE_CATALOG.length);
        const extended = await open({ catalog: { extended: generateCards(300, 9) } });
        const res = await body(await extended.fetch("/v1/models/all?limit=5"));
        expect(res.total).toBe(300);
        expect(res.data).toHaveLength(5);
      });

      it("serves a compact pricing table with decimal-string prices", async () => {
        const res = await body(await get("/api/pricing"));
        expect(res.models).toHaveLength(NATIVE_CATALOG.length);
        expect(typeof res.version).toBe("string");
        for (const m of res.models) for (const line of m.pricing) expect(line.unitPriceUsd).toMatch(/^\d+(\.\d+)?$/);
      });

      it("serves the native catalog from /api/models without a models service", async () => {
        const res = await body(await get("/api/models"));
        expect(res).toMatchObject({ object: "list", total: NATIVE_CATALOG.length, source: "native" });
      });

      it("proxies the models service, forwarding the query", async () => {
        const proxied = await open({ modelsService: { url: `${stubUrl}/models`, timeoutMs: 500 } });
        const res = await proxied.fetch("/api/models?q=flux");
        expect(res.status).toBe(200);
        expect(res.headers.get("x-models-source")).toBe("upstream");
        expect(await body(res)).toEqual({ data: [{ id: "upstream-model" }], query: "/models?q=flux" });
      });

      it("maps a slow models service to 504 and a failing one to 502", async () => {
        const cases = [
          ["/slow", 504, "upstream_timeout"],
          ["/fail", 502, "upstream_error"],
          ["/html", 502, "upstream_error"],
        ] as const;
        for (const [path, status, code] of cases) {
          const gw = await open({ modelsService: { url: `${stubUrl}${path}`, timeoutMs: 300 } });
          const res = await gw.fetch("/api/models");
          expect(res.status).toBe(status);
          expect((await body(res)).error.code).toBe(code);
        }
        const refused = await open({ modelsService: { url: "http://127.0.0.1:9/models", timeoutMs: 300 } });
        expect((await refused.fetch("/api/models")).status).toBe(502);
      });
    });
  });
}
