import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cardView } from "@tollgate/core/internals";
import { MODALITIES, OPERATIONS, type ModelCard } from "@tollgate/core";
import { NATIVE_CATALOG } from "@tollgate/core";
import type { Gateway } from "@tollgate/core";
import { createGateway, type GatewayOptions } from "@tollgate/core";
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
 * Every route of the model catalog (docs/catalog.md) with good and bad input, including `/api/models` against a
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

      it("clamps limit 0 and 10000, and a non-numeric limit falls back to the default of 50", async () => {
        expect((await body(await get("/v1/models?limit=0"))).data).toHaveLength(1);
        expect((await body(await get("/v1/models?limit=10000"))).data).toHaveLength(Math.min(200, NATIVE_CATALOG.length));
        const fallback = await get("/v1/models?limit=abc");
        expect(fallback.status).toBe(200);
        expect((await body(fallback)).data).toHaveLength(Math.min(50, NATIVE_CATALOG.length));
      });

      it("filters by provider, modality and operation, in the query or the body", async () => {
        const edits = await body(await get("/v1/models?modality=image&operation=edit"));
        expect(edits.total).toBeGreaterThan(0);
        for (const c of edits.data) expect(c.operations).toContainEqual(expect.objectContaining({ modality: "image", operation: "edit" }));
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
          const served = await body(res);
          // Every card field as it is, plus the derived fields of the wire view (OpenAI's id/object/created/owned_by, type, operations[].*).
          expect(served).toMatchObject(JSON.parse(JSON.stringify(card)));
          expect(served).toEqual(JSON.parse(JSON.stringify(cardView(card))));
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
        const modality = card.operations[0]!.modality;
        // `type` is what the origin's client reads, `modality` what ours does: both are sent.
        expect(res).toMatchObject({ modelId: card.modelId, provider: card.provider, modality, type: modality });
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
        expect(res.data).toHaveLength(NATIVE_CATALOG.length);
        expect(res.data[0].type).toBe(res.data[0].operations[0].modality);
      });

      it("applies the /v1/models filters on /api/models without a models service (limit, cursor, q, provider, modality, operation)", async () => {
        const page = await body(await get("/api/models?limit=5"));
        expect(page).toMatchObject({ object: "list", total: NATIVE_CATALOG.length, source: "native", next_cursor: expect.any(String) });
        expect(page.data).toHaveLength(5);
        const next = await body(await get(`/api/models?limit=5&cursor=${encodeURIComponent(page.next_cursor)}`));
        expect(next.data[0]).toEqual((await body(await get("/v1/models?limit=6"))).data[5]);
        const speech = NATIVE_CATALOG.filter((c) => c.operations.some((o) => o.modality === "audio" && o.operation === "speech"));
        const filtered = await body(await get("/api/models?modality=audio&operation=speech"));
        expect(filtered.total).toBe(speech.length);
        expect(filtered.data.map((c: any) => c.modelId).sort()).toEqual(speech.map((c) => c.modelId).sort());
        expect(filtered).toEqual({ ...(await body(await get("/v1/models?modality=audio&operation=speech"))), source: "native" });
        const openai = await body(await get("/api/models?provider=openai&q=embedding"));
        expect(openai.total).toBeGreaterThan(0);
        for (const c of openai.data) expect(c.provider).toBe("openai");
        for (const [query, param] of [["modality=smell", "modality"], ["cursor=garbage", "cursor"]]) {
          const bad = await get(`/api/models?${query}`);
          expect(bad.status, query).toBe(400);
          expect((await body(bad)).error).toMatchObject({ code: "invalid_request", param });
        }
      });

      it("proxies the models service, forwarding the query", async () => {
        const proxied = await open({ modelsService: { url: `${stubUrl}/models`, timeoutMs: 500 } });
        const res = await proxied.fetch("/api/models?q=flux");
        expect(res.status).toBe(200);
        expect(res.headers.get("x-models-source")).toBe("upstream");
        expect(await body(res)).toEqual({ data: [{ id: "upstream-model" }], query: "/models?q=flux" });
        // The service's own query language is not ours to judge: nothing is refused or rewritten.
        expect(await body(await proxied.fetch("/api/models?limit=all&modality=smell"))).toEqual({ data: [{ id: "upstream-model" }], query: "/models?limit=all&modality=smell" });
      });

      it("maps a slow models service to 504 and a failing one to 502", async () => {
        // The stub's slow answer takes 2 s; the failing ones get a deadline a loaded CI machine cannot miss.
        const cases = [
          ["/slow", 504, "upstream_timeout", 300],
          ["/fail", 502, "upstream_error", 1500],
          ["/html", 502, "upstream_error", 1500],
        ] as const;
        for (const [path, status, code, timeoutMs] of cases) {
          const gw = await open({ modelsService: { url: `${stubUrl}${path}`, timeoutMs } });
          const res = await gw.fetch("/api/models");
          expect(res.status).toBe(status);
          expect((await body(res)).error.code).toBe(code);
        }
        const refused = await open({ modelsService: { url: "http://127.0.0.1:9/models", timeoutMs: 1500 } });
        expect((await refused.fetch("/api/models")).status).toBe(502);
      });
    });

    describe("OpenAI's Model fields and the origin client's: card type and operations, /v1/modalities", () => {
      const all = async (c: TestClient, path: string) => (await body(await c.fetch(path))).data as any[];

      it("gives every card a type and each operation sourceTypes, input, output, pricingUnits, streamable, on every card route", async () => {
        const cards = await all(main, "/v1/models?limit=200");
        expect(cards).toHaveLength(NATIVE_CATALOG.length);
        for (const c of cards) {
          expect(c.type, c.modelId).toBe(c.operations[0].modality);
          for (const op of c.operations) {
            expect(op).toMatchObject({ sourceTypes: ["native"], input: c.modalities.input, streamable: `${op.modality}/${op.operation}` === "text/chat" || op.modality === "video" });
            expect(op.output.length).toBeGreaterThan(0);
            for (const m of op.output) expect(c.modalities.output).toContain(m);
            expect(op.pricingUnits.map((u: any) => u.default)).toEqual(op.pricingUnits.map((_: unknown, i: number) => i === 0));
            const keys = op.pricingUnits.flatMap((u: any) => u.valueKeys);
            expect(new Set(keys)).toEqual(new Set(c.pricing.map((l: any) => l.key)));
          }
        }
        const viaSearch = await body(await main.fetch("/v1/models/search", postJson({ limit: 3 })));
        const viaAll = await all(main, "/v1/models/all?limit=3");
        const first = NATIVE_CATALOG.find((c) => c.modelId === viaSearch.data[0].modelId && c.provider === viaSearch.data[0].provider)!;
        expect(viaSearch.data[0]).toEqual(JSON.parse(JSON.stringify(cardView(first))));
        expect(viaAll).toEqual(viaSearch.data);
        const extended = await open({ catalog: { extended: generateCards(20, 3) } });
        for (const c of await all(extended, "/v1/models/all?limit=20")) for (const op of c.operations) expect(op.sourceTypes).toEqual(["extended"]);
      });

      it("gives every card OpenAI's Model fields (id = modelId, object model, created 0, owned_by = provider) first, on every card route", async () => {
        const openAi = (c: any) => ({ id: c.modelId, object: "model", created: 0, owned_by: c.provider });
        const check = (cards: any[], route: string) => {
          expect(cards.length, route).toBeGreaterThan(0);
          for (const c of cards) {
            expect(Object.keys(c).slice(0, 4), route).toEqual(["id", "object", "created", "owned_by"]);
            expect(c, `${route} ${c.provider}:${c.modelId}`).toMatchObject(openAi(c));
            expect(Number.isInteger(c.created)).toBe(true);
          }
        };
        check(await all(main, "/v1/models?limit=200"), "/v1/models");
        check((await body(await main.fetch("/v1/models/search", postJson({ limit: 200 })))).data, "/v1/models/search");
        check(await all(main, "/v1/models/all?limit=200"), "/v1/models/all");
        check(await all(main, "/api/models"), "/api/models");
        const slashed = NATIVE_CATALOG.find((c) => c.modelId.includes("/"))!;
        const one = await body(await get(`/v1/models/${encodeURIComponent(slashed.modelId)}?provider=${slashed.provider}`));
        expect(one).toMatchObject({ id: slashed.modelId, object: "model", created: 0, owned_by: slashed.provider, modelId: slashed.modelId, provider: slashed.provider });
        const extended = await open({ catalog: { extended: generateCards(20, 5) } });
        check(await all(extended, "/v1/models/all?limit=20"), "extended /v1/models/all");
        // Deterministic: the same card answers the same bytes on every call.
        const path = `/v1/models/${encodeURIComponent(slashed.modelId)}?provider=${slashed.provider}`;
        expect(await (await get(path)).text()).toBe(await (await get(path)).text());
      });

      it("derives output from the operation and pricing units from the price lines (variants, numbers, headers)", async () => {
        const byId = async (card: ModelCard) => body(await get(`/v1/models/${encodeURIComponent(card.modelId)}?provider=${card.provider}`));
        const chat = NATIVE_CATALOG.find((c) => c.operations[0]!.operation === "chat" && c.pricing.some((l) => l.key === "cached_input_tokens"))!;
        const op = (await byId(chat)).operations[0];
        expect(op).toMatchObject({ modality: "text", operation: "chat", output: ["text"], streamable: true });
        expect(op.pricingUnits).toEqual([
          {
            unitKey: "usd_per_1m_tokens",
            unit: "tokens",
            header: "USD per 1M tokens",
            entries: Object.fromEntries(chat.pricing.map((l) => [l.key, Number(l.unitPriceUsd)])),
            valueKeys: chat.pricing.map((l) => l.key),
            default: true,
          },
        ]);
        const variants = NATIVE_CATALOG.find((c) => c.pricing.some((l) => l.when && Object.keys(l.when).length > 1))!;
        const units = (await byId(variants)).operations[0].pricingUnits;
        const line = variants.pricing.find((l) => l.when && Object.keys(l.when).length > 1)!;
        const id = `${line.key}:${Object.keys(line.when!).sort().map((k) => `${k}=${line.when![k]}`).join(",")}`;
        expect(units[0]).toMatchObject({ unitKey: "usd_per_image", unit: "images", valueKeys: ["image"] });
        expect(units[0].entries[id]).toBe(Number(line.unitPriceUsd));
        const transcription = NATIVE_CATALOG.find((c) => c.operations[0]!.operation === "transcription")!;
        expect((await byId(transcription)).operations[0]).toMatchObject({ input: ["audio"], output: ["text"], streamable: false });
      });

      it("splits a card serving several modalities: type is the first operation's, each operation gets its own output and units", async () => {
        const card: ModelCard = {
          modelId: "omni-1",
          provider: "acme",
          name: "Omni",
          description: "Chat and speech.",
          modalities: { input: ["text", "audio"], output: ["text", "audio"] },
          operations: [{ modality: "text", operation: "chat" }, { modality: "audio", operation: "speech" }],
          pricing: [
            { key: "input_tokens", unit: "usd_per_1m_tokens", unitPriceUsd: "1" },
            { key: "characters", unit: "usd_per_1k_characters", unitPriceUsd: "0.015" },
          ],
        };
        const gw = await open({ catalog: { native: [card] } });
        const served = await body(await gw.fetch("/v1/models/omni-1"));
        expect(served.type).toBe("text");
        const [chat, speech] = served.operations;
        expect([chat.output, chat.streamable, chat.pricingUnits.map((u: any) => u.unitKey)]).toEqual([["text"], true, ["usd_per_1m_tokens"]]);
        expect([speech.output, speech.streamable, speech.pricingUnits.map((u: any) => u.unitKey)]).toEqual([["audio"], false, ["usd_per_1k_characters"]]);
        const modalities = (await body(await gw.fetch("/v1/modalities"))).data;
        expect(modalities.find((m: any) => m.modality === "audio").operations.find((o: any) => o.operation === "speech").pricingUnits[0].entries).toMatchObject({ characters: 0.015 });
      });

      it("serves /v1/modalities: each canonical modality with its operations, model counts and pricing units", async () => {
        const res = await get("/v1/modalities");
        expect(res.status).toBe(200);
        const list = await body(res);
        expect(list.object).toBe("list");
        expect(list.data.map((m: any) => m.modality)).toEqual([...MODALITIES]);
        for (const m of list.data) {
          const serving = NATIVE_CATALOG.filter((c) => c.operations.some((o) => o.modality === m.modality));
          expect(m.modelCount, m.modality).toBe(serving.length);
          expect(m.operations.map((o: any) => o.operation)).toEqual([...OPERATIONS[m.modality as keyof typeof OPERATIONS]]);
          for (const o of m.operations) {
            const count = NATIVE_CATALOG.filter((c) => c.operations.some((x) => x.modality === m.modality && x.operation === o.operation)).length;
            expect(o).toMatchObject({ modelCount: count, sourceTypes: count > 0 ? ["native"] : [] });
            expect(o.pricingUnits.filter((u: any) => u.default)).toHaveLength(count > 0 ? 1 : 0);
          }
        }
        const text = list.data.find((m: any) => m.modality === "text");
        const cheapest = Math.min(...NATIVE_CATALOG.filter((c) => c.operations[0]!.modality === "text").map((c) => Number(c.pricing.find((l) => l.key === "input_tokens")!.unitPriceUsd)));
        expect(text.pricingUnits[0]).toMatchObject({ unitKey: "usd_per_1m_tokens", unit: "tokens", default: true, entries: expect.objectContaining({ input_tokens: cheapest }) });
        expect(text.pricingUnits[0].valueKeys).toEqual(expect.arrayContaining(["input_tokens", "output_tokens"]));
      });
    });
  });
}
