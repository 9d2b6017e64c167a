/**
 * The origin API's own client, by shape: every route `@compose-market/sdk` calls, through the real
 * Node server over HTTP, each answer checked against a zod schema written from the client's
 * published types (testing/origin-schemas.ts). Run with `compat: "compose"` and without it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGateway } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { serve } from "./server.js";
import * as S from "./testing/origin-schemas.js";

const SECRET = "origin-compat-internal-secret";
const WALLET = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed";
const AGENT = "0x00000000000000000000000000000000000000a9";
const CHAIN = 8453;
const dir = mkdtempSync(join(tmpdir(), "tollgate-origin-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const compat of [true, false]) {
  describe(`the origin client's calls and shapes (${compat ? 'compat: "compose"' : "no compat"})`, () => {
    let base = "";
    let close: () => Promise<void> = async () => {};
    beforeAll(async () => {
      const gateway = createGateway({
        store: createSqliteStore({ filename: join(dir, `origin-${compat}.db`) }),
        internalSecret: SECRET,
        ...(compat ? { compat: "compose" as const } : {}),
        agents: { seed: [{ walletAddress: AGENT, name: "Scout", description: "Finds things", skills: ["search"], protocols: ["a2a"], x402Support: true, createdAt: 1_760_000_000_000 }] },
      });
      const running = await serve(gateway, { port: 0 });
      base = running.url;
      close = () => running.close();
    });
    afterAll(() => close());

    const wallet = { "x-session-user-address": WALLET, "x-internal-secret": SECRET, "x-chain-id": String(CHAIN) };
    const call = async <T extends z.ZodType>(schema: T, method: string, path: string, init: { headers?: Record<string, string>; body?: unknown } = {}): Promise<z.output<T>> => {
      const res = await fetch(base + path, {
        method,
        headers: { ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...init.headers },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      const body: unknown = await res.json();
      expect(res.status, `${method} ${path}: ${JSON.stringify(body)}`).toBeLessThan(300);
      const parsed = schema.safeParse(body);
      expect(parsed.success ? [] : parsed.error.issues, `${method} ${path} against the client's type`).toEqual([]);
      return parsed.data as z.output<T>;
    };

    it("keys: create, list, get, the active session lookup", async () => {
      const created = await call(S.keyCreate, "POST", "/api/keys", { headers: wallet, body: { budgetLimit: "5000000", expiresAt: Date.now() + 86_400_000, chainId: CHAIN, purpose: "session", name: "sdk" } });
      expect(created.token.startsWith(compat ? "compose-" : "svc-")).toBe(true);
      await call(S.keyList, "GET", "/api/keys", { headers: wallet });
      await call(S.keyRecord, "GET", `/api/keys/${created.keyId}`, { headers: { authorization: `Bearer ${created.token}` } });
      const active = await call(S.activeSession, "GET", "/api/session", { headers: wallet });
      expect(active).toMatchObject({ hasSession: true, keyId: created.keyId, budgetRemaining: "5000000" });
      expect(JSON.stringify(active)).not.toContain(created.token);
      const revoked = await fetch(`${base}/api/keys/${created.keyId}`, { method: "DELETE", headers: { authorization: `Bearer ${created.token}` } });
      expect(await revoked.json()).toMatchObject({ success: true, keyId: created.keyId, revokedAt: expect.any(Number) });
    });

    it("models: list, listAll, get, search, params, modalities, pricing", async () => {
      const list = await call(S.modelSearch, "GET", "/v1/models?limit=5");
      await call(S.modelList, "GET", "/v1/models/all?limit=5");
      const id = list.data[0]!.modelId;
      await call(S.model, "GET", `/v1/models/${encodeURIComponent(id)}`);
      await call(S.modelSearch, "POST", "/v1/models/search", { body: { q: "gpt", limit: 3 } });
      await call(S.modelParams, "GET", `/v1/models/${encodeURIComponent(id)}/params`);
      const modalities = await call(S.modalityList, "GET", "/v1/modalities");
      expect(modalities.data.length).toBeGreaterThan(0);
      await call(S.pricing, "GET", "/api/pricing");
    });

    it("payments: meter a model, prepare with a caller-priced meter, settle, prepare and abort", async () => {
      const key = await call(S.keyCreate, "POST", "/api/keys", { headers: wallet, body: { budgetLimit: "5000000", expiresAt: Date.now() + 86_400_000, chainId: CHAIN, purpose: "api" } });
      const bearer = { authorization: `Bearer ${key.token}`, "x-chain-id": String(CHAIN) };
      const quote = await call(S.modelMeterQuote, "POST", "/api/payments/meter/model", { body: { modelId: "gpt-4o-mini", modality: "text", usage: { promptTokens: 1000, completionTokens: 500, totalTokens: 1500 } } });
      expect(quote.known).toBe(true);
      const meter = { subject: "acme:web-search", lineItems: [{ key: "searches", unit: "usd_per_request", quantity: 3, unitPriceUsd: 0.005 }] };
      const prepared = await call(S.prepare, "POST", "/api/payments/prepare", { headers: bearer, body: { service: "acme", action: "search", resource: "/search", method: "POST", meter } });
      await call(S.settle, "POST", "/api/payments/settle", { body: { paymentIntentId: prepared.paymentIntentId, meter } });
      const other = await call(S.prepare, "POST", "/api/payments/prepare", { headers: bearer, body: { service: "acme", action: "x", resource: "/x", method: "POST", maxAmountWei: "100" } });
      await call(S.abort, "POST", "/api/payments/abort", { body: { paymentIntentId: other.paymentIntentId, reason: "cancelled" } });
    });

    it("feedback: submit (anonymous and by key), list, summary", async () => {
      const F = S.feedbackSchemas(compat);
      const key = await call(S.keyCreate, "POST", "/api/keys", { headers: wallet, body: { budgetLimit: "10", expiresAt: Date.now() + 86_400_000, chainId: CHAIN, purpose: "api" } });
      const target = { type: "model", id: "gpt-4o-mini" };
      await call(F.submit, "POST", "/v1/feedback", { body: { target, rating: 5, message: "fast", context: { modelId: "gpt-4o-mini", sdk: { name: "sdk", version: "0.8.9" } }, metadata: { run: 1 } } });
      const byKey = await call(F.submit, "POST", "/v1/feedback", { headers: { authorization: `Bearer ${key.token}` }, body: { target, rating: 4, message: "ok" } });
      expect(byKey.verification).toBe(compat ? "compose_key" : "service_key");
      const list = await call(F.list, "GET", "/v1/feedback?targetType=model&targetId=gpt-4o-mini");
      expect(list.data.map((r) => r.message)).toEqual(["ok", "fast"]);
      expect(list.data[1]).toMatchObject({ context: { modelId: "gpt-4o-mini" }, metadata: { run: 1 } });
      await call(F.summary, "GET", "/v1/feedback/summary?targetType=model&targetId=gpt-4o-mini");
    });

    it("dispenser and settlement status", async () => {
      await call(S.dispenserStatus, "GET", "/api/dispenser/status");
      await call(S.dispenserCheck, "GET", `/api/dispenser/check/${WALLET}`);
      // No dispenser on this gateway: the by-chain status is the client's "not available" answer (404).
      const byChain = await fetch(`${base}/api/dispenser/status/${CHAIN}`);
      expect(byChain.status).toBe(404);
      expect(S.dispenserByChain.parse(await byChain.json())).toMatchObject({ available: false, reason: expect.any(String) });
      await call(S.settlementStatus, "GET", "/api/settlement/status", { headers: wallet });
    });

    // The origin's agent card (protocols as {name, version}, createdAt as ISO) replaces Tollgate's own shape only under compat;
    // without it the card keeps its contract shape and carries the origin's other fields beside it.
    it(`agents: ${compat ? "the origin's card shape" : "Tollgate's card shape plus the origin's extra fields"}`, async () => {
      // Tollgate's own card: protocols are names, createdAt Unix ms, and chain/model null or absent when unknown.
      const own = S.directoryAgent.omit({ protocols: true, createdAt: true, chain: true, model: true }).loose();
      const list = compat ? S.directoryAgentList : S.directoryAgentList.extend({ agents: own.array() });
      const agents = await call(list, "GET", "/agents");
      expect(agents.agents.map((a) => a.walletAddress)).toEqual([AGENT]);
      expect(agents.agents[0]).toMatchObject(compat ? { protocols: [{ name: "a2a" }], createdAt: new Date(1_760_000_000_000).toISOString() } : { protocols: ["a2a"], createdAt: 1_760_000_000_000 });
      await call(compat ? S.directoryAgent : own, "GET", `/agent/${AGENT}`);
    });
  });
}
