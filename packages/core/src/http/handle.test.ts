import { describe, expect, it } from "vitest";
import { createGateway } from "../gateway.js";
import { GatewayOptionsError } from "../options.js";
import { generateCards } from "@tollgate/testing";

/** The host app's secret: it proves the wallet named in x-session-user-address. */
const INTERNAL_SECRET = "handle-test-internal-secret";

const gateway = createGateway({
  catalog: { native: generateCards(50, 3) },
  limits: { jsonBodyBytes: 2048 },
  cors: { origins: ["https://app.example.com"] },
  internalSecret: INTERNAL_SECRET,
});
const url = (path: string) => `http://gateway.test${path}`;

async function errorOf(res: Response) {
  const body = (await res.json()) as { error: Record<string, unknown> };
  return body.error;
}

describe("request pipeline", () => {
  it("echoes a well-formed x-request-id and mints one otherwise", async () => {
    const echoed = await gateway.fetch(new Request(url("/v1/models"), { headers: { "x-request-id": "abc-123.x:y_z" } }));
    expect(echoed.headers.get("x-request-id")).toBe("abc-123.x:y_z");
    const minted = await gateway.fetch(new Request(url("/v1/models"), { headers: { "x-request-id": "bad id with spaces" } }));
    expect(minted.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{24}$/);
  });

  it("answers unknown routes with the 404 envelope carrying the request id", async () => {
    const res = await gateway.fetch(new Request(url("/nope"), { headers: { "x-request-id": "r1" } }));
    expect(res.status).toBe(404);
    expect(await errorOf(res)).toEqual({ code: "not_found", message: "No route for GET /nope.", type: "not_found_error", requestId: "r1" });
  });

  it("answers a wrong method with 405 and Allow", async () => {
    const res = await gateway.fetch(new Request(url("/v1/models"), { method: "DELETE" }));
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
    expect((await errorOf(res)).code).toBe("method_not_allowed");
  });

  it("rejects malformed JSON, non-object JSON and non-UTF-8 bodies with 400", async () => {
    for (const body of ["{not json", "[1,2]", "42", new Uint8Array([0xff, 0xfe, 0x7b])]) {
      const res = await gateway.fetch(new Request(url("/v1/models/search"), { method: "POST", body, headers: { "content-type": "application/json" } }));
      expect(res.status).toBe(400);
      expect((await errorOf(res)).code).toBe("invalid_request");
    }
  });

  it("answers 413 for a body over the JSON limit, declared or streamed", async () => {
    const big = JSON.stringify({ q: "x".repeat(4000) });
    const declared = await gateway.fetch(new Request(url("/v1/models/search"), { method: "POST", body: big }));
    expect(declared.status).toBe(413);
    expect((await errorOf(declared)).code).toBe("payload_too_large");
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode("x".repeat(500)));
        c.close();
      },
    });
    const streamed = await gateway.fetch(new Request(url("/v1/models/search"), { method: "POST", body: stream, duplex: "half" } as RequestInit));
    expect(streamed.status).toBe(413);
  });

  it("answers 413 for a body a framework already parsed when it is over the JSON limit, measured as JSON", async () => {
    const parsed = (value: unknown) =>
      gateway.handle({ method: "POST", path: "/v1/models/search", query: new URLSearchParams(), headers: { "content-type": "application/json" }, body: { kind: "parsed", value } });
    const over = await parsed({ q: "x".repeat(4000) });
    expect([over.status, (over.body as { value: { error: { details: unknown } } }).value.error.details]).toEqual([413, { limitBytes: 2048 }]);
    expect((await parsed({ q: "x".repeat(100) })).status).toBe(200);
    // A bigint (a bigint-aware parser in front) is measured as its digits, never as nothing; a value that is not JSON at all is too large.
    expect((await parsed({ q: "x".repeat(4000), n: 1n })).status).toBe(413);
    const cycle: Record<string, unknown> = { q: "x" };
    cycle.self = cycle;
    expect((await parsed(cycle)).status).toBe(413);
  });

  it("tolerates Content-Type: application/json with an empty body on GET and POST", async () => {
    const get = await gateway.fetch(new Request(url("/v1/models"), { headers: { "content-type": "application/json" } }));
    expect(get.status).toBe(200);
    const post = await gateway.fetch(new Request(url("/v1/models/search"), { method: "POST", headers: { "content-type": "application/json" } }));
    expect(post.status).toBe(200);
  });

  it("answers CORS preflight for allowed origins and exposes headers", async () => {
    const pre = await gateway.fetch(
      new Request(url("/v1/models/search"), { method: "OPTIONS", headers: { origin: "https://app.example.com", "access-control-request-method": "POST" } }),
    );
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(pre.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
    const get = await gateway.fetch(new Request(url("/v1/models"), { headers: { origin: "https://app.example.com" } }));
    expect(get.headers.get("access-control-expose-headers")).toContain("x-request-id");
    const foreign = await gateway.fetch(new Request(url("/v1/models"), { headers: { origin: "https://evil.example" } }));
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("says Vary: Origin on every answer, with an allowed Origin, a foreign one or none (a shared cache keys on it)", async () => {
    for (const headers of [{ origin: "https://app.example.com" }, { origin: "https://evil.example" }, {}] as Record<string, string>[]) {
      const res = await gateway.fetch(new Request(url("/v1/models"), { headers }));
      expect(res.headers.get("vary"), JSON.stringify(headers)).toBe("Origin");
    }
    // A route's own Vary is kept beside it.
    const doc = await gateway.fetch(new Request(url("/openapi.json"), { headers: { origin: "https://evil.example" } }));
    expect(doc.headers.get("vary")).toBe("Host, X-Forwarded-Host, X-Forwarded-Proto, Origin");
  });

  it("an answer to a credential is private and never stored; a public one is left to the caches", async () => {
    const keys = await gateway.fetch(new Request(url("/api/keys"), { headers: { "x-session-user-address": "0x00000000000000000000000000000000000000aa", "x-internal-secret": INTERNAL_SECRET } }));
    expect([keys.status, keys.headers.get("cache-control")]).toEqual([200, "private, no-store"]);
    const refused = await gateway.fetch(new Request(url("/api/keys")));
    expect([refused.status, refused.headers.get("cache-control")]).toEqual([401, "private, no-store"]);
    // A route that checks its credential in its handler (one key by id, its events) too.
    for (const path of ["/api/keys/key_unknown", "/api/keys/key_unknown/events"]) {
      const res = await gateway.fetch(new Request(url(path), { headers: { authorization: "Bearer svc-nope" } }));
      expect(res.headers.get("cache-control"), path).toBe("private, no-store");
    }
    expect((await gateway.fetch(new Request(url("/v1/models")))).headers.get("cache-control")).toBeNull();
  });

  it("marks every 409 as definitive with x-should-retry: false, and no other answer", async () => {
    const owner = { "x-session-user-address": "0x00000000000000000000000000000000000000a1", "x-internal-secret": INTERNAL_SECRET };
    const created = await gateway.fetch(
      new Request(url("/api/keys"), { method: "POST", headers: { ...owner, "content-type": "application/json" }, body: JSON.stringify({ budgetLimit: "100", expiresAt: Date.now() + 60_000, networkId: 8453, purpose: "api" }) }),
    );
    expect(created.status).toBe(201);
    expect(created.headers.get("x-should-retry")).toBeNull();
    const { token } = (await created.json()) as { token: string };
    const prepare = (chain: string) =>
      gateway.fetch(
        new Request(url("/api/payments/prepare"), {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "x-network-id": chain, "content-type": "application/json" },
          body: JSON.stringify({ service: "inference", action: "chat", resource: "r", method: "POST", maxAmountWei: "10" }),
        }),
      );
    const conflict = await prepare("1");
    expect([conflict.status, (await errorOf(conflict)).code, conflict.headers.get("x-should-retry")]).toEqual([409, "chain_mismatch", "false"]);
    const ok = await prepare("8453");
    expect([ok.status, ok.headers.get("x-should-retry")]).toEqual([200, null]);
    const missing = await gateway.fetch(new Request(url("/nope")));
    expect([missing.status, missing.headers.get("x-should-retry")]).toEqual([404, null]);
  });

  it("answers HEAD like GET without a body", async () => {
    const res = await gateway.fetch(new Request(url("/v1/models"), { method: "HEAD" }));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });
});

describe("options", () => {
  it("reports every problem at once", () => {
    let caught: unknown;
    try {
      createGateway({
        limits: { jsonBodyBytes: 10 },
        cors: { origins: ["not an origin"] },
        modelsService: { url: "ftp://x" },
        catalog: { native: [{ modelId: "x", provider: "Bad Slug" }] },
        bogus: true,
      } as never);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(GatewayOptionsError);
    const issues = (caught as GatewayOptionsError).issues.join("\n");
    for (const fragment of ["limits.jsonBodyBytes", "cors.origins.0", "modelsService.url", "catalog.native.0.provider", "bogus"]) expect(issues).toContain(fragment);
  });

  it("refuses credentialed CORS for any origin, and a short internal secret", () => {
    const issuesOf = (options: object) => {
      try {
        void createGateway({ sweepIntervalMs: 0, ...options } as never).close();
      } catch (e) {
        if (e instanceof GatewayOptionsError) return e.issues.join("\n");
        throw e;
      }
      return "";
    };
    expect(issuesOf({ cors: { origins: "*", credentials: true } })).toContain("cors.credentials");
    expect(issuesOf({ internalSecret: "short" })).toContain("internalSecret");
    expect(issuesOf({ cors: { origins: ["https://app.example.com"], credentials: true }, internalSecret: "a-long-enough-secret" })).toBe("");
  });
});
