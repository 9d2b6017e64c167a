/**
 * The operational routes against real parts: a real local EVM node (anvil) and closed ports for
 * the chain checks, real local HTTP servers for the upstreams, and paid calls through the
 * gateway's `local` provider for the metrics.
 */
import { closedPortUrl, startAnvil, type AnvilNode } from "@tollgate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pkg from "../../package.json" with { type: "json" };
import { createManualClock } from "../clock.js";
import { createGateway } from "../gateway.js";
import type { GatewayOptions } from "../options.js";
import { answerWith, createKey, embed, get, OWNER, sample, startUpstream, type Upstream } from "./test-fixtures.js";

const USDC = "0x0000000000000000000000000000000000000001";
const TOKEN = "metrics-token-0123456789";

let anvil: AnvilNode;
let upstream: Upstream;
let closed: string;
beforeAll(async () => {
  [anvil, upstream, closed] = await Promise.all([startAnvil(), startUpstream(answerWith(401)), closedPortUrl()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([anvil?.stop(), upstream?.close()]);
});

/** A gateway closed after the test. */
const gateways: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
});
function gatewayWith(options: GatewayOptions = {}) {
  const gateway = createGateway({ sweepIntervalMs: 0, ...options });
  gateways.push(gateway);
  return gateway;
}

const errorOf = async (res: Response) =>
  ((await res.json()) as { error: { code: string; message: string; requestId: string; details?: Record<string, unknown> } }).error;

describe("GET /", () => {
  it("answers the name, the package version and links that each answer 200", async () => {
    const gateway = gatewayWith();
    const res = await get(gateway, "/");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { name: string; version: string; apiVersion: string; links: Record<string, string> };
    expect(body).toEqual({
      name: "tollgate",
      version: pkg.version,
      apiVersion: "1.0.0",
      links: { models: "/v1/models", health: "/healthz", readiness: "/readyz", metrics: "/metrics", docs: "/openapi.json" },
    });
    for (const link of Object.values(body.links)) expect((await get(gateway, link)).status, link).toBe(200);
  });

  it("leaves the metrics link out when metrics are off, and /metrics answers 404", async () => {
    const gateway = gatewayWith({ metrics: { enabled: false } });
    const body = (await (await get(gateway, "/")).json()) as { links: Record<string, string> };
    expect(body.links).not.toHaveProperty("metrics");
    const res = await get(gateway, "/metrics");
    expect([res.status, (await errorOf(res)).code]).toEqual([404, "not_found"]);
    await embed(gateway, (await createKey(gateway, 10n ** 9n)).token);
    expect((await gateway.metrics.metrics()).trim()).toBe("");
  });

  it("is not an error any more: HEAD / answers 200 with no body", async () => {
    const res = await gatewayWith().fetch(new Request("http://gateway.test/", { method: "HEAD" }));
    expect([res.status, await res.text()]).toEqual([200, ""]);
  });
});

describe("GET /healthz", () => {
  it('answers 200 {status:"ok"} with a request id, and 405 for another method', async () => {
    const gateway = gatewayWith();
    const res = await get(gateway, "/healthz");
    expect([res.status, await res.json()]).toEqual([200, { status: "ok" }]);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const post = await gateway.fetch(new Request("http://gateway.test/healthz", { method: "POST" }));
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET"]);
  });

  it("needs no credential and counts against no rate limit (a bad Authorization header is ignored)", async () => {
    const gateway = gatewayWith({ trustedProxies: 1, rateLimits: { keyDefault: 1, perIp: { auth: 1, feedback: 1, dispenser: 1 } } });
    for (let i = 0; i < 5; i++)
      expect((await get(gateway, "/healthz", { authorization: "Bearer svc-nonsense", "x-forwarded-for": "1.2.3.4" })).status).toBe(200);
  });
});

describe("GET /readyz", () => {
  it("answers 200 with each check when the store, a chain's RPC and an upstream answer", async () => {
    const gateway = gatewayWith({
      chains: [{ chainId: anvil.chainId, rpcUrl: anvil.rpcUrl, usdc: USDC }],
      media: { providers: { openai: { type: "openai-compatible", baseUrl: `${upstream.url}/v1`, apiKey: "sk-secret" } } },
    });
    const before = upstream.requests.length;
    const res = await get(gateway, "/readyz");
    const body = (await res.json()) as { status: string; checks: Record<string, { ok: boolean; detail: string; latencyMs: number }> };
    expect(res.status).toBe(200);
    expect(body.status).toBe("ready");
    expect(Object.keys(body.checks).sort()).toEqual([`chain:${anvil.chainId}`, "store", "upstream:openai"]);
    expect(body.checks.store).toMatchObject({ ok: true, detail: "in-memory store" });
    expect(body.checks[`chain:${anvil.chainId}`]).toMatchObject({ ok: true, detail: expect.stringContaining(`serves chain ${anvil.chainId}`) });
    // The upstream answered 401 (no credential is sent): reachable is what counts.
    expect(body.checks["upstream:openai"]).toMatchObject({ ok: true, detail: expect.stringContaining("HTTP 401") });
    for (const check of Object.values(body.checks)) expect(check.latencyMs).toBeGreaterThanOrEqual(0);
    const probe = upstream.requests.slice(before);
    expect(probe).toEqual([{ method: "GET", url: "/v1/models", authorization: undefined }]);
  });

  it("answers 503 not_ready in the error envelope when a configured chain's RPC port refuses connections", async () => {
    const gateway = gatewayWith({
      chains: [
        { chainId: 8453, rpcUrl: closed, usdc: USDC },
        { chainId: anvil.chainId, rpcUrl: anvil.rpcUrl, usdc: USDC },
      ],
    });
    const res = await get(gateway, "/readyz");
    expect(res.status).toBe(503);
    const error = await errorOf(res);
    expect(error.code).toBe("not_ready");
    expect(error.requestId).toBe(res.headers.get("x-request-id"));
    expect(error.message).toMatch(/^Not ready: chain:8453: /);
    const checks = error.details!.checks as Record<string, { ok: boolean; detail: string }>;
    expect(checks["chain:8453"]!.ok).toBe(false);
    expect(checks[`chain:${anvil.chainId}`]!.ok).toBe(true);
    expect(checks.store!.ok).toBe(true);
  });

  it("answers 503 when a chain's RPC serves another chain id than configured", async () => {
    const gateway = gatewayWith({ chains: [{ chainId: 8453, rpcUrl: anvil.rpcUrl, usdc: USDC }] });
    const res = await get(gateway, "/readyz");
    const checks = (await errorOf(res)).details!.checks as Record<string, { ok: boolean; detail: string }>;
    expect([res.status, checks["chain:8453"]]).toEqual([
      503,
      { ok: false, detail: expect.stringContaining(`serves chain ${anvil.chainId}, not 8453`), latencyMs: expect.any(Number) },
    ]);
  });

  it("answers 503 when a configured upstream is unreachable, or answers 5xx", async () => {
    const failing = await startUpstream(answerWith(503));
    try {
      const gateway = gatewayWith({
        media: {
          providers: {
            down: { type: "openai-compatible", baseUrl: `${closed}/v1` },
            sick: { type: "openai-compatible", baseUrl: failing.url },
            fine: { type: "openai-compatible", baseUrl: upstream.url },
          },
        },
      });
      const res = await get(gateway, "/readyz");
      expect(res.status).toBe(503);
      const checks = (await errorOf(res)).details!.checks as Record<string, { ok: boolean; detail: string }>;
      expect(checks["upstream:down"]!.ok).toBe(false);
      expect(checks["upstream:sick"]).toMatchObject({ ok: false, detail: expect.stringContaining("HTTP 503") });
      expect(checks["upstream:fine"]!.ok).toBe(true);
      // The local provider makes no network call: nothing to check.
      expect(checks).not.toHaveProperty("upstream:local");
    } finally {
      await failing.close();
    }
  });

  it("fails a check that outlives its deadline", async () => {
    const silent = await startUpstream(() => undefined); // never answers
    try {
      const gateway = gatewayWith({ readiness: { timeoutMs: 100 }, media: { providers: { slow: { type: "openai-compatible", baseUrl: silent.url } } } });
      const res = await get(gateway, "/readyz");
      const checks = (await errorOf(res)).details!.checks as Record<string, { ok: boolean; detail: string }>;
      expect([res.status, checks["upstream:slow"]!.ok]).toEqual([503, false]);
      expect(checks["upstream:slow"]!.detail).toMatch(/100 ms/);
    } finally {
      await silent.close();
    }
  });

  it("cannot be used to hammer upstreams: concurrent calls share one run, and a report is reused for cacheMs", async () => {
    const counted = await startUpstream(answerWith(404));
    try {
      const clock = createManualClock(Date.now());
      const gateway = gatewayWith({
        clock,
        readiness: { cacheMs: 2000 },
        media: { providers: { openai: { type: "openai-compatible", baseUrl: counted.url } } },
      });
      const answers = await Promise.all(Array.from({ length: 8 }, () => get(gateway, "/readyz")));
      expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(counted.requests).toHaveLength(1);
      clock.advance(1999);
      expect((await get(gateway, "/readyz")).status).toBe(200);
      expect(counted.requests).toHaveLength(1);
      clock.advance(1);
      expect((await get(gateway, "/readyz")).status).toBe(200);
      expect(counted.requests).toHaveLength(2);
    } finally {
      await counted.close();
    }
  });
});

describe("GET /metrics", () => {
  it("serves the Prometheus text format with every family, moving with a key-billed paid call", async () => {
    const gateway = gatewayWith();
    const { keyId, token } = await createKey(gateway, 10n ** 9n);
    const paid = await embed(gateway, token);
    expect(paid.status).toBe(200);
    const charged = (await paid.json()) as { receipt: { finalAmountWei: string } };
    expect((await get(gateway, "/v1/models/text-embedding-3-small")).status).toBe(200);
    expect((await get(gateway, "/no/such/path")).status).toBe(404);

    const res = await get(gateway, "/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    for (const family of [
      "tollgate_http_requests_total counter",
      "tollgate_http_request_duration_seconds histogram",
      "tollgate_upstream_duration_seconds histogram",
      "tollgate_charged_usdc_atomic_total counter",
      "tollgate_open_reservations gauge",
      "tollgate_budget_refusals_total counter",
      "tollgate_x402_verifications_total counter",
      "tollgate_settlement_batches_total counter",
      "tollgate_settlement_groups_total counter",
    ])
      expect(text).toContain(`# TYPE ${family}`);
    expect(sample(text, "tollgate_http_requests_total", { method: "POST", route: "/v1/embeddings", status: "200" })).toBe(1);
    // The route label is the pattern, never the raw path; no route at all is "unmatched".
    expect(sample(text, "tollgate_http_requests_total", { method: "GET", route: "/v1/models/{model}", status: "200" })).toBe(1);
    expect(sample(text, "tollgate_http_requests_total", { method: "GET", route: "unmatched", status: "404" })).toBe(1);
    expect(text).not.toContain('text-embedding-3-small",status');
    expect(sample(text, "tollgate_http_request_duration_seconds_count", { method: "POST", route: "/v1/embeddings", status: "200" })).toBe(1);
    expect(sample(text, "tollgate_charged_usdc_atomic_total", { model: "openai:text-embedding-3-small", payment: "key" })).toBe(
      Number(charged.receipt.finalAmountWei),
    );
    expect(sample(text, "tollgate_upstream_duration_seconds_count", { provider: "local", outcome: "ok" })).toBe(1);
    expect(sample(text, "tollgate_open_reservations")).toBe(0);
    // The key was charged exactly what the metric says.
    expect((await gateway.services.store.getKeyById(keyId))!.budgetUsed).toBe(BigInt(charged.receipt.finalAmountWei));
  });

  it("counts open reservations from the store at scrape time, and budget refusals", async () => {
    const gateway = gatewayWith();
    const { token } = await createKey(gateway, 1_000n);
    const prepare = (maxAmountWei: string) =>
      gateway.fetch(
        new Request("http://gateway.test/api/payments/prepare", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}`, "x-network-id": "8453" },
          body: JSON.stringify({ service: "s", action: "a", resource: "r", method: "POST", maxAmountWei }),
        }),
      );
    const open = (await (await prepare("600")).json()) as { paymentIntentId: string };
    const scrape = async () => (await gateway.metrics.metrics()) as string;
    expect(sample(await scrape(), "tollgate_open_reservations")).toBe(1);
    const refused = await prepare("600");
    expect([refused.status, (await errorOf(refused)).code]).toEqual([402, "budget_exhausted"]);
    const poor = await createKey(gateway, 1n);
    const unpaid = await embed(gateway, poor.token);
    expect([unpaid.status, (await errorOf(unpaid)).code]).toEqual([402, "budget_exhausted"]);
    let text = await scrape();
    expect(sample(text, "tollgate_budget_refusals_total", { reason: "budget_exhausted" })).toBe(2);
    const settle = await gateway.fetch(
      new Request("http://gateway.test/api/payments/settle", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ paymentIntentId: open.paymentIntentId, finalAmountWei: "250" }),
      }),
    );
    expect(settle.status).toBe(200);
    text = await scrape();
    expect(sample(text, "tollgate_open_reservations")).toBe(0);
    expect(sample(text, "tollgate_charged_usdc_atomic_total", { model: "unmetered", payment: "intent" })).toBe(250);
  });

  it("counts reservations refused at the key's open-intent cap", async () => {
    const gateway = gatewayWith({ limits: { openIntentsPerKey: 1 } });
    const { token } = await createKey(gateway, 1_000n);
    const prepare = () =>
      gateway.fetch(
        new Request("http://gateway.test/api/payments/prepare", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}`, "x-network-id": "8453" },
          body: JSON.stringify({ service: "s", action: "a", resource: "r", method: "POST", maxAmountWei: "10" }),
        }),
      );
    expect((await prepare()).status).toBe(200);
    const full = await prepare();
    expect([full.status, (await errorOf(full)).code]).toEqual([429, "too_many_open_intents"]);
    const text = (await gateway.metrics.metrics()) as string;
    expect(sample(text, "tollgate_budget_refusals_total", { reason: "too_many_open_intents" })).toBe(1);
    expect(sample(text, "tollgate_open_reservations")).toBe(1);
  });

  it("counts direct charges, settlement batches and their failed groups", async () => {
    const secret = "settlement-secret-0123456789";
    const gateway = gatewayWith({
      // A USDC address without code: the batch's transferFrom fails in simulation, so its group fails.
      chains: [{ chainId: anvil.chainId, rpcUrl: anvil.rpcUrl, usdc: "0x00000000000000000000000000000000000000aa" }],
      settlement: {
        internalSecret: secret,
        treasury: anvil.accounts[1]!.address,
        chains: [{ chainId: anvil.chainId, spenderPrivateKey: anvil.accounts[2]!.privateKey }],
        // Unbacked credit: the key is created without reading the (codeless) token.
        requireFunding: false,
      },
    });
    const batch = async () => {
      const res = await gateway.fetch(new Request("http://gateway.test/api/settlement/batch", { method: "POST", headers: { "x-internal-secret": secret } }));
      expect(res.status).toBe(200);
      return (await res.json()) as { totalGroups: number; failCount: number };
    };
    expect(await batch()).toMatchObject({ totalGroups: 0, failCount: 0 });
    const { token } = await gateway.services.keys.create({
      owner: OWNER,
      chainId: anvil.chainId,
      purpose: "api",
      budgetLimit: 1_000n,
      expiresAt: Date.now() + 3_600_000,
    });
    const charge = await gateway.fetch(
      new Request("http://gateway.test/api/keys/settle", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ amount: "100" }),
      }),
    );
    expect(charge.status).toBe(200);
    expect(await batch()).toMatchObject({ totalGroups: 1, failCount: 1 });
    const text = await gateway.metrics.metrics();
    expect(sample(text, "tollgate_charged_usdc_atomic_total", { model: "unmetered", payment: "direct" })).toBe(100);
    expect(sample(text, "tollgate_settlement_batches_total", { outcome: "ok" })).toBe(2);
    expect(sample(text, "tollgate_settlement_groups_total", { outcome: "failed" })).toBe(1);
    expect(sample(text, "tollgate_settlement_groups_total", { outcome: "settled" })).toBeUndefined();
  });

  it("requires the bearer token when one is set: 401 without it or with a wrong one, in the error envelope", async () => {
    const gateway = gatewayWith({ metrics: { token: TOKEN } });
    const none = await get(gateway, "/metrics");
    expect([none.status, none.headers.get("www-authenticate")]).toEqual([401, 'Bearer realm="metrics"']);
    const noneError = await errorOf(none);
    expect([noneError.code, noneError.requestId]).toEqual(["authentication_required", none.headers.get("x-request-id")]);
    const wrong = await get(gateway, "/metrics", { authorization: `Bearer ${TOKEN}x` });
    expect([wrong.status, (await errorOf(wrong)).code]).toEqual([401, "unauthorized"]);
    const right = await get(gateway, "/metrics", { authorization: `Bearer ${TOKEN}` });
    expect(right.status).toBe(200);
    expect(sample(await right.text(), "tollgate_http_requests_total", { method: "GET", route: "/metrics", status: "401" })).toBe(2);
    // Health stays open.
    expect((await get(gateway, "/healthz")).status).toBe(200);
  });

  it("keeps two gateways in one process apart: each has its own registry", async () => {
    const [a, b] = [gatewayWith(), gatewayWith()];
    await get(a, "/healthz");
    await get(a, "/healthz");
    await get(b, "/healthz");
    const labels = { method: "GET", route: "/healthz", status: "200" };
    expect(sample(await a.metrics.metrics(), "tollgate_http_requests_total", labels)).toBe(2);
    expect(sample(await b.metrics.metrics(), "tollgate_http_requests_total", labels)).toBe(1);
  });

  it("rejects a short token and an unknown metrics option at creation", () => {
    expect(() => createGateway({ metrics: { token: "short" } })).toThrow(/metrics\.token: must be at least 16 characters/);
    expect(() => createGateway({ metrics: { port: 9100 } as never })).toThrow(/metrics/);
    expect(() => createGateway({ logger: {} as never })).toThrow(/logger: must be a pino-compatible logger/);
  });
});
