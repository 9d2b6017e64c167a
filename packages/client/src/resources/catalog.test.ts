/**
 * `client.models`, `client.catalog`, `client.feedback`, `client.agents`, `client.directory`,
 * `client.openapi()` and `client.request()` against real gateways on ports: one with a models
 * service and an agent directory (local stubs that can fail or hang), one with neither.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AuthenticationError,
  BadGatewayError,
  BadRequestError,
  GatewayTimeoutError,
  MethodNotAllowedError,
  NotFoundError,
  ServiceUnavailableError,
  type TollgateClient,
} from "../index.js";
import { DAY, startGateway, startStub, thrown, wallet, type Seen, type Stub, type StubReply, type TestGateway } from "../testing/harness.js";

type Client = TollgateClient & { calls: Seen[] };

const AGENT_A = { walletAddress: wallet(), name: "Weather Oracle", description: "Forecasts for any city", skills: ["weather", "forecast"], x402Support: true, createdAt: 1000 };
const AGENT_B = { walletAddress: wallet(), name: "Translator", description: "Translates text", skills: ["translation"], plugins: [{ registryId: "r1", name: "deepl", origin: "https://x.test" }], createdAt: 2000 };
const DIRECTORY_AGENT = { address: "agent1qxyz", name: "Remote", description: "d", readme: "", protocols: ["chat"], total_interactions: 3, recent_interactions: 1, featured: true };

/** What the external services answer next: "ok", "fail" (500), "hang", or "fail-once" (500 then ok). */
let mode: "ok" | "fail" | "hang" | "fail-once" = "ok";
let services: Stub;
let gw: TestGateway;
let bare: TestGateway;

function answer(ok: StubReply): StubReply {
  if (mode === "hang") return "hang";
  if (mode === "fail" || mode === "fail-once") {
    if (mode === "fail-once") mode = "ok";
    return { status: 500, json: { error: "down" } };
  }
  return ok;
}

beforeAll(async () => {
  services = await startStub((req) =>
    answer(req.url.startsWith("/models") ? { status: 200, json: { object: "list", data: [], total: 0, from: "models-service", query: req.url } } : { status: 200, json: { agents: [DIRECTORY_AGENT], total: 1 } }),
  );
  [gw, bare] = await Promise.all([
    startGateway({
      modelsService: { url: `${services.url}/models`, timeoutMs: 1000 },
      agents: { seed: [AGENT_A, AGENT_B], directory: { url: services.url, timeoutMs: 1000 } },
    }),
    startGateway(),
  ]);
});
afterAll(async () => {
  await Promise.all([gw?.close(), bare?.close()]);
  await services?.close();
});

describe("models and catalog", () => {
  it("list in pages, all, get and params (ids with / and :), search by body; 400 and 404 typed", async () => {
    const client: Client = gw.client();
    const page = await client.models.list({ provider: "openai", limit: 2 });
    expect(page).toMatchObject({ object: "list", total: expect.any(Number), next_cursor: expect.any(String) });
    expect(page.data.map((m) => m.provider)).toEqual(["openai", "openai"]);
    const next = await client.models.list({ provider: "openai", limit: 2, cursor: page.next_cursor! });
    expect(next.data[0]!.modelId).not.toBe(page.data[0]!.modelId);
    expect((await client.models.all({ limit: 1 })).total).toBe((await client.models.list({ limit: 1 })).total);
    for (const id of ["fal-ai/flux-pro/v1.1", "amazon.nova-canvas-v1:0"]) {
      const card = await client.models.get(id);
      expect(card.modelId).toBe(id);
      expect(card).toMatchObject({ id, object: "model", created: 0, owned_by: card.provider });
      expect(card.pricing.length).toBeGreaterThan(0);
      expect((await client.models.params(id)).modelId).toBe(id);
    }
    const params = await client.models.params("dall-e-3");
    expect(params).toMatchObject({ modelId: "dall-e-3", provider: "openai", modality: "image", type: "image", params: expect.any(Object), defaults: expect.any(Object) });
    const found = await client.models.search({ q: "embedding", modality: "embedding", limit: 3 });
    expect(found.data.length).toBeGreaterThan(0);
    expect(found.data.every((m) => m.modalities.output.includes("embedding"))).toBe(true);
    expect(JSON.parse(client.calls.at(-1)!.body!)).toEqual({ q: "embedding", modality: "embedding", limit: 3 });

    const bad = await thrown(() => client.models.search({ provider: "no-such-provider" }));
    expect(bad).toBeInstanceOf(BadRequestError);
    expect([bad.code, bad.param]).toEqual(["invalid_request", "provider"]);
    const missing = await thrown(() => client.models.get("no/such:model"));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.code).toBe("model_not_found");
  });

  it("cards carry type and operation capabilities; models.modalities() lists modalities with operations, counts and pricing units", async () => {
    const client: Client = gw.client();
    const card = await client.models.get("dall-e-3");
    expect(card.type).toBe("image");
    expect(card.operations[0]).toMatchObject({ modality: "image", sourceTypes: ["native"], input: expect.any(Array), output: ["image"], streamable: false });
    expect(card.operations[0]!.pricingUnits[0]).toMatchObject({ unitKey: "usd_per_image", unit: "images", header: "USD per image", valueKeys: ["image"], default: true });
    const chat = (await client.models.list({ modality: "text", operation: "chat", limit: 1 })).data[0]!;
    expect([chat.type, chat.operations[0]!.streamable]).toEqual(["text", true]);
    const modalities = await client.models.modalities();
    expect([client.calls.at(-1)!.method, new URL(client.calls.at(-1)!.url).pathname]).toEqual(["GET", "/v1/modalities"]);
    expect(modalities.object).toBe("list");
    expect(modalities.data.map((m) => m.modality)).toEqual(["text", "image", "audio", "video", "embedding"]);
    const image = modalities.data.find((m) => m.modality === "image")!;
    expect(image.operations.map((o) => o.operation)).toEqual(["generation", "edit"]);
    expect(image.modelCount).toBeGreaterThanOrEqual(image.operations[0]!.modelCount);
    expect(image.pricingUnits[0]).toMatchObject({ unitKey: "usd_per_image", default: true });
  });

  it("catalog.proxy: the models service's JSON with the query passed on, the native catalog without one; 502/504 when it fails", async () => {
    const client: Client = gw.client({ maxRetries: 0 });
    const { data, meta } = await client.catalog.proxy({ q: "flux", tags: ["a", "b"] }).withResponse();
    expect(data).toMatchObject({ from: "models-service", query: "/models?q=flux&tags=a%2Cb" });
    expect(meta.headers.get("x-models-source")).toBe("upstream");
    const native = await bare.client().catalog.proxy();
    expect(native).toMatchObject({ object: "list", source: "native" });
    expect(native.total).toBe(native.data!.length);
    const filtered = await bare.client().catalog.proxy({ modality: "audio", limit: 2 });
    expect(filtered.data!.map((m) => m.type)).toEqual(["audio", "audio"]);
    expect(filtered.next_cursor).toEqual(expect.any(String));
    mode = "fail";
    expect(await thrown(() => client.catalog.proxy())).toBeInstanceOf(BadGatewayError);
    mode = "hang";
    const timeout = await thrown(() => client.catalog.proxy());
    expect(timeout).toBeInstanceOf(GatewayTimeoutError);
    expect(timeout.code).toBe("upstream_timeout");
    mode = "ok";
    const pricing = await client.catalog.pricing();
    expect(pricing.version).toEqual(expect.any(String));
    expect(pricing.models.find((m) => m.modelId === "dall-e-3")?.pricing.length).toBeGreaterThan(0);
  });

  it("openapi() answers the gateway's document, which lists every route the client calls", async () => {
    const doc = await gw.client().openapi();
    expect(doc.openapi).toMatch(/^3\./);
    for (const path of ["/api/keys", "/api/payments/intents", "/v1/videos/{id}/stream", "/api/directory/agents", "/openapi.json"]) expect(Object.keys(doc.paths)).toContain(path);
  });
});

describe("feedback", () => {
  it("create as a key owner, a signed-in wallet or anonymous; list and summary never show wallets; 400 typed", async () => {
    // Without an apiKey, feedback.create sends the session token: the reviewer is the proven wallet.
    const session = await gw.signedIn();
    const key = await session.keys.create({ budgetLimit: 10n, expiresAt: gw.clock.now() + DAY, purpose: "api" });
    const target = { targetType: "model", targetId: `gpt-${Math.random()}` };
    const byKey = await gw.client({ apiKey: key.token }).feedback.create({ ...target, rating: 5, comment: "great", labels: ["fast"] });
    expect(byKey).toEqual({ feedbackId: expect.stringMatching(/^fb_/), target: { type: "model", id: target.targetId }, verification: "service_key", createdAt: gw.clock.now() });
    gw.clock.advance(1);
    expect((await session.feedback.create({ ...target, rating: 3 })).verification).toBe("wallet_header");
    gw.clock.advance(1);
    // An invalid key is ignored, not an error.
    expect((await gw.client({ apiKey: `svc-${"B".repeat(43)}` }).feedback.create({ ...target, comment: "meh", category: "latency" })).verification).toBe("anonymous");

    const list = await gw.client().feedback.list({ ...target, limit: 2 });
    expect(list.object).toBe("list");
    expect(list.data.map((f) => [f.verification, f.rating ?? null, f.comment ?? null])).toEqual([
      ["anonymous", null, "meh"],
      ["wallet_header", 3, null],
    ]);
    const summary = await gw.client().feedback.summary({ ...target, recentLimit: 1 });
    // The key's owner and the signed-in wallet are one wallet: its later rating (3) replaces its earlier one (5).
    expect(summary).toMatchObject({ count: 3, ratingCount: 1, ratingAverage: 3, ratings: { "3": 1, "5": 0 }, verification: { service_key: 1, wallet_header: 1, anonymous: 1 } });
    expect(summary.recent).toHaveLength(1);
    expect(JSON.stringify([list, summary]).toLowerCase()).not.toContain(session.address.slice(2));

    const bad = await thrown(() => gw.client().feedback.create({ ...target, rating: 6 }));
    expect(bad).toBeInstanceOf(BadRequestError);
    expect(bad.param).toBe("rating");
    expect((await thrown(() => gw.client().feedback.list({ targetType: "", targetId: "x" }))).param).toBe("targetType");
  });
});

describe("agents and directory", () => {
  it("list, search (ranked with scores), get by any-case address; 400 and 404 typed", async () => {
    const client = gw.client();
    const all = await client.agents.list();
    expect(all.total).toBe(2);
    expect(all.agents.map((a) => a.name)).toEqual(["Weather Oracle", "Translator"]);
    const hits = await client.agents.search({ q: "weather forecast", limit: 5 });
    expect(hits.agents[0]).toMatchObject({ name: "Weather Oracle", score: expect.any(Number), x402Support: true });
    const card = await client.agents.get(AGENT_B.walletAddress.toUpperCase().replace("0X", "0x"));
    expect(card).toMatchObject({ walletAddress: AGENT_B.walletAddress, plugins: [{ registryId: "r1", name: "deepl", origin: "https://x.test" }] });
    expect((await thrown(() => client.agents.search({ q: "" }))).param).toBe("q");
    expect(await thrown(() => client.agents.get("0x12"))).toBeInstanceOf(BadRequestError);
    const unknown = await thrown(() => client.agents.get(wallet()));
    expect([unknown.constructor, unknown.code]).toEqual([NotFoundError, "agent_not_found"]);
  });

  it("directory.search: the directory's agents; a GET retried after its 502 succeeds; 504 when it hangs; 503 not configured (sent once)", async () => {
    const client: Client = gw.client();
    const before = services.requests.length;
    const page = await client.directory.search({ search: "remote", tags: ["chat", "llm"], limit: 5, sort: "relevancy", direction: "desc" });
    expect(page).toMatchObject({ total: 1, offset: 0, limit: 5, agents: [{ address: "agent1qxyz", name: "Remote", featured: true, protocols: ["chat"] }] });
    expect(JSON.parse(services.requests[before]!.body!)).toMatchObject({ search_text: "remote", limit: 5 });
    mode = "fail-once";
    const retried = await client.directory.search({}, { maxRetries: 1 }).withResponse();
    expect([retried.data.total, retried.meta.retries]).toEqual([1, 1]);
    mode = "hang";
    const hung = await thrown(() => client.directory.search({}, { maxRetries: 0 }));
    expect([hung.constructor, hung.status]).toEqual([GatewayTimeoutError, 504]);
    mode = "ok";
    const plain: Client = bare.client({ maxRetries: 2 });
    const off = await thrown(() => plain.directory.search());
    expect(off).toBeInstanceOf(ServiceUnavailableError);
    expect([off.status, off.code, off.type]).toEqual([503, "not_configured", "api_error"]);
    expect(plain.calls).toHaveLength(1);
  });
});

describe("request()", () => {
  it("reaches any path with the client's credentials: 405 with Allow, 404 for an unknown route, 401 as usual", async () => {
    const client: Client = gw.client();
    const wrong = await thrown(() => client.request({ method: "DELETE", path: "/v1/models" }));
    expect(wrong).toBeInstanceOf(MethodNotAllowedError);
    expect([wrong.status, wrong.code, wrong.allow]).toEqual([405, "method_not_allowed", ["GET"]]);
    expect(client.calls).toHaveLength(1);
    const nowhere = await thrown(() => client.request({ method: "GET", path: "/v2/nothing" }));
    expect([nowhere.constructor, nowhere.code]).toEqual([NotFoundError, "not_found"]);
    const keys = await thrown(() => client.request({ method: "GET", path: "/api/keys" }));
    expect(keys).toBeInstanceOf(AuthenticationError);
    // A raw call sends the session token only when told the path is a wallet route.
    const owner = await gw.signedIn();
    expect(await thrown(() => owner.request({ method: "GET", path: "/api/keys" }))).toBeInstanceOf(AuthenticationError);
    expect(await owner.request<{ keys: unknown[] }>({ method: "GET", path: "/api/keys", query: { limit: 5 }, bearer: "wallet" })).toEqual({ keys: [], next_cursor: null });
  });
});
