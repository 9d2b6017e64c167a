/**
 * The key governance route suite: model allow-lists and per-model caps refused before any
 * reservation or upstream call on every paid route (a counting upstream stub sees nothing),
 * `PATCH /api/keys/{id}` with its proof rules, guard and events, rotation with an exact grace, and
 * calendar windows seen through the key view under the suite's manual clock.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayOptions } from "@tollgate/core";
import { bytesToBase64 } from "@tollgate/core/internals";
import { encodeWav } from "@tollgate/core/internals";
import { asWallet, bearer, DAY, expectError, OTHER, withGateway, type GatewaySuiteOptions, type Harness, type Reply } from "./gateway-suite-fixtures.js";
import { expectUncharged, send } from "./gateway-suite-media-helpers.js";

/** One request to every paid route, each on a model outside `openai/*`. */
const PAID: [string, Record<string, unknown>][] = [
  ["/v1/chat/completions", { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] }],
  ["/v1/embeddings", { model: "voyage-3.5", input: "hello" }],
  ["/v1/images/generations", { model: "flux-dev", prompt: "a gate" }],
  ["/v1/audio/speech", { model: "eleven_v3", input: "hello" }],
  ["/v1/audio/transcriptions", { model: "nova-3", file: bytesToBase64(encodeWav(new Int16Array(24_000), 24_000, 1)) }],
  ["/v1/videos/generations", { model: "ray-2", prompt: "a gate", seconds: 5 }],
];

const patch = (h: Harness, keyId: string, body: unknown, headers: Record<string, string> = asWallet()) => h.call("PATCH", `/api/keys/${keyId}`, { headers, body });

/** Registers the governance route suite for the store `name`. */
export function runGovernanceRouteSuite(name: string, options: GatewaySuiteOptions): void {
  let calls = 0;
  let url = "";
  const server = http.createServer((req, res) => {
    calls++;
    req.resume();
    res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"the stub should not be called"}}');
  });
  const counting = (): Partial<GatewayOptions> => ({ media: { providers: { counting: { type: "openai-compatible", baseUrl: url } }, defaultProvider: "counting" } });
  const test = (title: string, fn: (h: Harness) => Promise<void>, extra: () => Partial<GatewayOptions> = () => ({})) => it(title, () => withGateway(options, fn, extra()));

  describe(`key governance routes: ${name}`, () => {
    beforeAll(() => new Promise<void>((r) => server.listen(0, "127.0.0.1", () => ((url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`), r()))));
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    test(
      "an allow-list refuses every paid route and a meter prepare with 403 model_not_allowed before any reservation or upstream call",
      async (h) => {
        const key = await h.createKey({ budgetLimit: "100000000", models: ["openai/*", "gpt-4o"] });
        expect(key.models).toEqual(["openai/*", "gpt-4o"]);
        const before = calls;
        for (const [path, body] of PAID) {
          const r = await send(h, path, { token: key.token, json: body });
          const e = expectError(r, 403, "model_not_allowed", "model");
          expect(e.details.allowed).toEqual(["openai/*", "gpt-4o"]);
        }
        const meter = { service: "inference", action: "chat", resource: "x", method: "POST", meter: { modelId: "claude-sonnet-4-5", modality: "text", usage: { promptTokens: 10, completionTokens: 10 } } };
        expectError(await h.prepare(key.token, meter), 403, "model_not_allowed", "model");
        const described = { service: "inference", action: "chat", resource: "x", method: "POST", maxAmountWei: "10" };
        expectError(await h.prepare(key.token, { ...described, modelId: "claude-sonnet-4-5" }), 403, "model_not_allowed", "model");
        // No model named, or a caller-priced subject outside the catalog: the key's budget alone decides.
        expect((await h.prepare(key.token, described)).status).toBe(200);
        const own = { service: "search", action: "query", resource: "x", method: "POST", meter: { subject: "acme:web-search", lineItems: [{ key: "query", unit: "usd_per_request", quantity: "1", unitPriceUsd: "0.001" }] } };
        expect((await h.prepare(key.token, own)).status).toBe(200);
        expect(calls - before).toBe(0);
        // A model on the list goes through (to the stub, which fails: nothing charged either).
        expect((await send(h, "/v1/embeddings", { token: key.token, json: { model: "text-embedding-3-small", input: "x" } })).status).toBe(502);
        expect(calls - before).toBe(1);
      },
      counting,
    );

    test(
      "an exhausted per-model cap refuses every paid route with 402 model_budget_exhausted before any upstream call",
      async (h) => {
        const caps = Object.fromEntries(PAID.map(([, body]) => [String(body.model), "0"]));
        const key = await h.createKey({ budgetLimit: "100000000", modelBudgets: caps });
        const before = calls;
        for (const [path, body] of PAID) {
          const e = expectError(await send(h, path, { token: key.token, json: body }), 402, "model_budget_exhausted");
          expect(e.details.scope).toBe(body.model);
        }
        expect(calls - before).toBe(0);
        await expectUncharged(h, key);
      },
      counting,
    );

    test("a per-model cap refuses past its limit (402 model_budget_exhausted) while other models still spend", async (h) => {
      const key = await h.createKey({ budgetLimit: "100000000", modelBudgets: { "gpt-4o-mini": "30", "anthropic/*": "100000" } });
      const chat = (model: string) => send(h, "/v1/chat/completions", { token: key.token, json: { model, messages: [{ role: "user", content: "hi" }], max_completion_tokens: 5 } });
      const first = await chat("gpt-4o-mini");
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      let refused: Reply | undefined;
      for (let i = 0; i < 10 && !refused; i++) {
        const r = await chat("gpt-4o-mini");
        if (r.status !== 200) refused = r;
      }
      const e = expectError(refused!, 402, "model_budget_exhausted");
      expect(e.details.scope).toBe("gpt-4o-mini");
      expect((await chat("claude-sonnet-4-5")).status).toBe(200);
      const view = await h.inspect(key.token, key.keyId);
      expect(BigInt(view.modelBudgets["gpt-4o-mini"].used)).toBeLessThanOrEqual(30n);
      expect(view.modelBudgets["gpt-4o-mini"].reserved).toBe("0");
      expect(BigInt(view.modelBudgets["anthropic/*"].used)).toBeGreaterThan(0n);
    });

    test("create and PATCH check models against the catalog; unknown fields and past expiries are 400", async (h) => {
      expectError(await h.call("POST", "/api/keys", { headers: asWallet(), body: { budgetLimit: "10", expiresAt: h.clock.now() + DAY, networkId: 8453, purpose: "api", models: ["no-such-model"] } }), 400, "invalid_request", "models");
      const key = await h.createKey();
      expectError(await patch(h, key.keyId, { modelBudgets: { "nobody/*": "5" } }), 400, "invalid_request", "modelBudgets");
      expectError(await patch(h, key.keyId, { expiresAt: h.clock.now() - 1 }), 400, "invalid_request", "expiresAt");
      expectError(await patch(h, key.keyId, { owner: OTHER }), 400, "invalid_request");
    });

    test("PATCH: the owner changes limits, period and models; the key may only rename itself; every change is an event", async (h) => {
      const key = await h.createKey({ budgetLimit: "1000", name: "first" });
      const sibling = await h.createKey();
      const other = await h.createKey({}, OTHER);
      expectError(await patch(h, key.keyId, { budgetLimit: "5000" }, bearer(key.token)), 403, "forbidden", "budgetLimit");
      expectError(await patch(h, key.keyId, { name: "x" }, bearer(sibling.token)), 403, "forbidden");
      expectError(await patch(h, key.keyId, { name: "x" }, asWallet(OTHER)), 403, "forbidden");
      expectError(await patch(h, other.keyId, { name: "x" }), 403, "forbidden");
      const renamed = await patch(h, key.keyId, { name: "second" }, bearer(key.token));
      expect([renamed.status, renamed.body.name]).toEqual([200, "second"]);
      h.clock.advance(1000);
      const changed = await patch(h, key.keyId, { budgetLimit: "2000", budgetPeriod: "weekly", models: ["openai/*"], rateLimit: { requestsPerMinute: 30 } });
      expect(changed.status, JSON.stringify(changed.body)).toBe(200);
      expect(changed.body).toMatchObject({ budgetLimit: "2000", budgetPeriod: "weekly", periodStartsAt: Date.UTC(2025, 11, 29), periodEndsAt: Date.UTC(2026, 0, 5), models: ["openai/*"], rateLimit: { requestsPerMinute: 30 } });
      const events = await h.call("GET", `/api/keys/${key.keyId}/events`, { headers: bearer(sibling.token) });
      expect(events.status).toBe(200);
      expect(events.body.events.map((e: any) => [e.type, e.actor, Object.keys(e.changes).sort()])).toEqual([
        ["update", "wallet:0x00000000000000000000000000000000000000a1", ["budgetLimit", "budgetPeriod", "models", "rateLimit"]],
        ["update", `key:${key.keyId}`, ["name"]],
      ]);
      expect(events.body.events[0].changes.budgetLimit).toEqual({ from: "1000", to: "2000" });
      expectError(await h.call("GET", `/api/keys/${key.keyId}/events`, { headers: bearer(other.token) }), 403, "forbidden");
      await h.call("DELETE", `/api/keys/${sibling.keyId}`, { headers: bearer(sibling.token) });
      expectError(await patch(h, sibling.keyId, { budgetLimit: "5" }), 409, "invalid_state");
    });

    test("PATCH cannot lower the limit below used + reserved: 409 limit_below_committed, nothing changed", async (h) => {
      const key = await h.createKey({ budgetLimit: "1000" });
      const prepared = await h.prepare(key.token, { service: "inference", action: "chat", resource: "x", method: "POST", maxAmountWei: "300" });
      await h.settle({ paymentIntentId: prepared.body.paymentIntentId, finalAmountWei: "200" });
      await h.prepare(key.token, { service: "inference", action: "chat", resource: "x", method: "POST", maxAmountWei: "150" });
      const e = expectError(await patch(h, key.keyId, { budgetLimit: "349" }), 409, "limit_below_committed", "budgetLimit");
      expect(e.details).toEqual({ budgetUsed: "200", budgetReserved: "150" });
      expect((await patch(h, key.keyId, { budgetLimit: "350" })).body).toMatchObject({ budgetLimit: "350", budgetRemaining: "0" });
      expect((await h.call("GET", `/api/keys/${key.keyId}/events`, { headers: asWallet() })).body.events).toHaveLength(1);
    });

    test("PATCH cannot lower a per-model cap below its scope's used + reserved either: 409 limit_below_committed", async (h) => {
      const key = await h.createKey({ budgetLimit: "1000000", modelBudgets: { "gpt-4o": "100000" } });
      const model = { service: "inference", action: "chat", resource: "x", method: "POST", modelId: "gpt-4o" };
      const prepared = await h.prepare(key.token, { ...model, maxAmountWei: "50000" });
      await h.settle({ paymentIntentId: prepared.body.paymentIntentId, finalAmountWei: "50000" });
      await h.prepare(key.token, { ...model, maxAmountWei: "30000" });
      const e = expectError(await patch(h, key.keyId, { modelBudgets: { "gpt-4o": "10" } }), 409, "limit_below_committed", "modelBudgets");
      expect(e.details).toEqual({ scope: "gpt-4o", budgetUsed: "50000", budgetReserved: "30000" });
      const ok = await patch(h, key.keyId, { modelBudgets: { "gpt-4o": "80000" } });
      expect(ok.body.modelBudgets["gpt-4o"]).toEqual({ limit: "80000", used: "50000", reserved: "30000", remaining: "0" });
    });

    test("rotation: a new token for the same key; the old one works until the grace ends, to the millisecond, then 401 key_rotated", async (h) => {
      const key = await h.createKey({ budgetLimit: "1000" });
      const open = await h.prepare(key.token, { service: "inference", action: "chat", resource: "x", method: "POST", maxAmountWei: "100" });
      // A key cannot rotate itself (nor a sibling): rotation needs the owner's wallet.
      expectError(await h.call("POST", `/api/keys/${key.keyId}/rotate`, { headers: bearer(key.token), body: {} }), 403, "forbidden");
      const rotated = await h.call("POST", `/api/keys/${key.keyId}/rotate`, { headers: asWallet(), body: { graceSeconds: 60 } });
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
      expect(rotated.body).toMatchObject({ keyId: key.keyId, budgetReserved: "100", previousTokenValidUntil: h.clock.now() + 60_000 });
      expect(rotated.body.token).not.toBe(key.token);
      const fresh = rotated.body.token as string;
      // Both tokens work in the grace; the intent made before is settled with the new token.
      expect((await h.call("GET", `/api/keys/${key.keyId}`, { headers: bearer(key.token) })).status).toBe(200);
      expect((await h.settle({ paymentIntentId: open.body.paymentIntentId, finalAmountWei: "40" }, bearer(fresh))).status).toBe(200);
      h.clock.advance(59_999);
      expect((await h.prepare(key.token, { service: "inference", action: "chat", resource: "x", method: "POST", maxAmountWei: "1" })).status).toBe(200);
      h.clock.advance(1);
      expectError(await h.prepare(key.token, { service: "inference", action: "chat", resource: "x", method: "POST", maxAmountWei: "1" }), 401, "key_rotated");
      expect((await h.inspect(fresh, key.keyId)).budgetUsed).toBe("40");
      const now = await h.call("POST", `/api/keys/${key.keyId}/rotate`, { headers: asWallet(), body: { graceSeconds: 0 } });
      expectError(await h.call("GET", `/api/keys/${key.keyId}`, { headers: bearer(fresh) }), 401, "key_rotated");
      expect((await h.inspect(now.body.token, key.keyId)).keyId).toBe(key.keyId);
    });

    test("a daily key's view follows the calendar: spend today, a fresh window tomorrow, reservations carried over", async (h) => {
      h.clock.set(Date.UTC(2026, 2, 10, 23, 55));
      const key = await h.createKey({ budgetLimit: "500", budgetPeriod: "daily", expiresAt: h.clock.now() + 30 * DAY });
      expect(key).toMatchObject({ budgetPeriod: "daily", periodStartsAt: Date.UTC(2026, 2, 10), periodEndsAt: Date.UTC(2026, 2, 11) });
      const a = await h.prepare(key.token, { service: "inference", action: "chat", resource: "x", method: "POST", maxAmountWei: "300" });
      await h.settle({ paymentIntentId: a.body.paymentIntentId, finalAmountWei: "300" });
      await h.prepare(key.token, { service: "inference", action: "chat", resource: "x", method: "POST", maxAmountWei: "150" });
      expectError(await h.prepare(key.token, { service: "inference", action: "chat", resource: "x", method: "POST", maxAmountWei: "100" }), 402, "budget_exhausted");
      h.clock.set(Date.UTC(2026, 2, 11, 0, 0));
      expect(await h.inspect(key.token, key.keyId)).toMatchObject({ budgetUsed: "0", budgetReserved: "150", budgetRemaining: "350", periodStartsAt: Date.UTC(2026, 2, 11) });
      expect((await h.prepare(key.token, { service: "inference", action: "chat", resource: "x", method: "POST", maxAmountWei: "350" })).status).toBe(200);
    });
  });
}
