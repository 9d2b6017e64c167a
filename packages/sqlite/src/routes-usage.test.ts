/**
 * `GET /api/usage` through `gateway.fetch`, on the memory store and on real SQLite files: the
 * wallet proof, range validation, and the spend of real paid calls through the offline `local`
 * provider matching their receipts.
 */
import { createMemoryStore } from "@tollgate/core";
import { withGateway, type GatewaySuiteOptions, type Harness } from "@tollgate/testing";
import { describe, expect, it } from "vitest";
import { tempSqliteStores } from "./temp-stores.js";

const CHAIN = 8453;
const DAY = 86_400_000;
const OWNER = "0x00000000000000000000000000000000000000a1";
const OTHER = "0x00000000000000000000000000000000000000b2";
const SECRET = "usage-internal-secret-0123456789";
/** Names and proves `address` as a host app does (the internal secret). */
const asWallet = (address = OWNER) => ({ "x-session-user-address": address, "x-internal-secret": SECRET });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Asserts an error envelope with `code` (and `param` when given) at `status`. */
function expectError(r: { status: number; body: any }, status: number, code: string, param?: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.error).toMatchObject({ code, message: expect.any(String), type: expect.any(String), requestId: expect.stringMatching(/^req_/) });
  if (param !== undefined) expect(r.body.error.param).toBe(param);
}

/** A key of `owner` with a large budget, created through the API. */
async function createKey(h: Harness, owner = OWNER, chainId = CHAIN): Promise<{ keyId: string; token: string }> {
  const r = await h.call("POST", "/api/keys", {
    headers: asWallet(owner),
    body: { budgetLimit: "100000000", expiresAt: h.clock.now() + 30 * DAY, networkId: chainId, purpose: "api" },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

/** One paid call with `token`; returns its receipt (the body field, equal to the X-Receipt header). */
async function paidCall(h: Harness, token: string, path: string, body: unknown): Promise<{ finalAmountWei: string; subject: string; paymentIntentId: string }> {
  const res = await h.gateway.fetch(
    new Request(`http://gateway.test${path}`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  const json: any = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(200);
  const receipt = JSON.parse(Buffer.from(res.headers.get("x-receipt") ?? "", "base64url").toString("utf8"));
  if (json.receipt) expect(json.receipt).toEqual(receipt);
  return receipt;
}

const usage = (h: Harness, query = "", headers: Record<string, string> = asWallet()) => h.call("GET", `/api/usage${query}`, { headers });

function runUsageRouteTests(name: string, options: GatewaySuiteOptions): void {
  const test = (title: string, fn: (h: Harness) => Promise<void>) => it(title, () => withGateway(options, fn, { internalSecret: SECRET }));

  describe(`usage route: ${name}`, () => {
    test("the wallet must be proven: 401 without proof, 403 when the header names another wallet, 400 for a bad address", async (h) => {
      expectError(await usage(h, "", {}), 401, "authentication_required");
      expectError(await usage(h, "", { "x-session-user-address": OWNER }), 401, "wallet_unverified", "x-session-user-address");
      expectError(await usage(h, "", { "x-session-user-address": "0x1234", "x-internal-secret": SECRET }), 400, "invalid_request", "x-session-user-address");
      expectError(await usage(h, "", { "x-session-user-address": OWNER, "x-internal-secret": "wrong-secret-wrong-secret-wrong" }), 401, "unauthorized");
      const key = await createKey(h);
      expectError(await usage(h, "", { ...bearer(key.token), "x-session-user-address": OTHER }), 403, "forbidden", "x-session-user-address");
      // A live key of the wallet proves it (with or without the header); so does the internal secret.
      for (const headers of [bearer(key.token), { ...bearer(key.token), "x-session-user-address": OWNER }, asWallet()]) {
        const r = await usage(h, "", headers);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.wallet).toBe(OWNER);
      }
      // A revoked key proves nothing.
      expect((await h.call("DELETE", `/api/keys/${key.keyId}`, { headers: bearer(key.token) })).status).toBe(200);
      expectError(await usage(h, "", bearer(key.token)), 401, "key_revoked");
    });

    test("ranges: defaults to the 30 days to today (gateway clock); malformed days, from after to and over 366 days are 400", async (h) => {
      h.clock.set(Date.UTC(2026, 2, 15, 18, 30));
      const r = await usage(h);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ wallet: OWNER, from: "2026-02-14", to: "2026-03-15", models: [], totals: { spent: "0", calls: 0, reserved: "0" } });
      expect(r.body.days).toHaveLength(30);
      expect((await usage(h, "?to=2026-01-10")).body).toMatchObject({ from: "2025-12-12", to: "2026-01-10" });
      expect((await usage(h, "?from=2026-03-10")).body).toMatchObject({ from: "2026-03-10", to: "2026-03-15" });
      // A leap year: 366 days is the longest range; one day more is refused.
      const leap = await usage(h, "?from=2024-01-01&to=2024-12-31");
      expect(leap.body.days).toHaveLength(366);
      expect(leap.body.days[59]).toEqual({ date: "2024-02-29", spent: "0", calls: 0 });
      expectError(await usage(h, "?from=2024-01-01&to=2025-01-01"), 400, "invalid_request", "from");
      expectError(await usage(h, "?from=2026-01-02&to=2026-01-01"), 400, "invalid_request", "from");
      expectError(await usage(h, "?from=2026-03-16"), 400, "invalid_request", "from"); // after today
      for (const [query, param] of [
        ["?from=2026-02-30", "from"],
        ["?from=2026-13-01", "from"],
        ["?from=20260101", "from"],
        ["?from=2026-01-01T00:00:00Z", "from"],
        ["?from=", "from"],
        ["?to=yesterday", "to"],
        ["?to=2025-2-01", "to"],
        ["?chainId=abc", "chainId"],
        ["?chainId=0", "chainId"],
      ] as const)
        expectError(await usage(h, query), 400, "invalid_request", param);
      // The wallet proof comes before the query is read.
      expectError(await usage(h, "?from=nope", {}), 401, "authentication_required");
      // The service checks the same for callers in code (gateway.services.usage).
      const usageService = h.gateway.services.usage;
      await expect(usageService.forWallet(OWNER, { to: "2026-02-30" })).rejects.toMatchObject({ code: "invalid_request", param: "to" });
      await expect(usageService.forWallet(OWNER, { from: "2025-01-01", to: "2026-01-02" })).rejects.toMatchObject({ code: "invalid_request", param: "from" });
      // Years before 100 are read as written (not shifted to 19xx).
      expect(await usageService.forWallet(OWNER, { from: "0099-12-31", to: "0100-01-01" })).toMatchObject({
        from: "0099-12-31",
        to: "0100-01-01",
        days: [{ date: "0099-12-31" }, { date: "0100-01-01" }],
      });
    });

    test("after real paid calls: spend by day and by model equals the receipts; open reservations are reserved", async (h) => {
      const key = await createKey(h);
      const embedding = await paidCall(h, key.token, "/v1/embeddings", { model: "text-embedding-3-small", input: "hello metered world" });
      const embedding2 = await paidCall(h, key.token, "/v1/embeddings", { model: "text-embedding-3-small", input: ["two", "inputs here"] });
      const chat = await paidCall(h, key.token, "/v1/chat/completions", {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi there" }],
        max_tokens: 16,
      });
      h.clock.advance(DAY); // 2026-01-02
      const image = await paidCall(h, key.token, "/v1/images/generations", { model: "dall-e-2", prompt: "a lighthouse", size: "256x256" });
      // A caller-settled intent that named no model, and one left open.
      const manual = await h.call("POST", "/api/payments/prepare", {
        headers: { ...bearer(key.token), "x-network-id": String(CHAIN) },
        body: { service: "agent", action: "run", resource: "https://agent.example/run", method: "POST", maxAmountWei: "700" },
      });
      expect((await h.call("POST", "/api/payments/settle", { body: { paymentIntentId: manual.body.paymentIntentId, finalAmountWei: "650" } })).status).toBe(
        200,
      );
      const open = await h.call("POST", "/api/payments/prepare", {
        headers: { ...bearer(key.token), "x-network-id": String(CHAIN) },
        body: { service: "agent", action: "run", resource: "https://agent.example/run", method: "POST", maxAmountWei: "1234" },
      });
      expect(open.status).toBe(200);
      // Another wallet's spend on the same days stays out.
      const stranger = await createKey(h, OTHER);
      await paidCall(h, stranger.token, "/v1/embeddings", { model: "text-embedding-3-small", input: "not mine" });

      const amount = (...rs: { finalAmountWei: string }[]) => rs.reduce((sum, r) => sum + BigInt(r.finalAmountWei), 0n);
      for (const r of [embedding, embedding2, chat, image]) expect(BigInt(r.finalAmountWei)).toBeGreaterThan(0n);
      const r = await usage(h, "?from=2025-12-31&to=2026-01-03");
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const day1 = amount(embedding, embedding2, chat);
      const day2 = amount(image) + 650n;
      expect(r.body).toEqual({
        wallet: OWNER,
        from: "2025-12-31",
        to: "2026-01-03",
        days: [
          { date: "2025-12-31", spent: "0", calls: 0 },
          { date: "2026-01-01", spent: day1.toString(), calls: 3 },
          { date: "2026-01-02", spent: day2.toString(), calls: 2 },
          { date: "2026-01-03", spent: "0", calls: 0 },
        ],
        models: expect.any(Array),
        totals: { spent: (day1 + day2).toString(), calls: 5, reserved: "1234" },
      });
      const expectedModels = [
        { modelId: "text-embedding-3-small", spent: amount(embedding, embedding2).toString(), calls: 2 },
        { modelId: "gpt-4o-mini", spent: amount(chat).toString(), calls: 1 },
        { modelId: "dall-e-2", spent: amount(image).toString(), calls: 1 },
        { modelId: null, spent: "650", calls: 1 },
      ];
      // Spent descending; a tie by modelId (the null group sorts last).
      const rank = (m: { spent: string; modelId: string | null }) => [-BigInt(m.spent), m.modelId ?? "\uffff"] as const;
      expectedModels.sort((a, b) => {
        const [x, y] = [rank(a), rank(b)];
        return x[0] !== y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0;
      });
      expect(r.body.models).toEqual(expectedModels);
      // The ledger agrees: the key's used budget is the total spend, its reserved budget the open intent.
      const view = (await h.call("GET", `/api/keys/${key.keyId}`, { headers: bearer(key.token) })).body;
      expect({ used: view.budgetUsed, reserved: view.budgetReserved }).toEqual({ used: r.body.totals.spent, reserved: "1234" });

      // The chain filter: every key is on CHAIN.
      expect((await usage(h, `?from=2025-12-31&to=2026-01-03&chainId=${CHAIN}`)).body).toEqual(r.body);
      const elsewhere = (await usage(h, "?from=2025-12-31&to=2026-01-03&chainId=1")).body;
      expect(elsewhere.totals).toEqual({ spent: "0", calls: 0, reserved: "0" });
      expect(elsewhere.models).toEqual([]);
      // The open reservation expires (15 minutes): no longer reserved, never spent.
      h.clock.advance(16 * 60_000);
      expect((await usage(h, "?from=2026-01-01&to=2026-01-02")).body.totals).toEqual({ spent: (day1 + day2).toString(), calls: 5, reserved: "0" });
    });
  });
}

runUsageRouteTests("memory", { createStore: () => createMemoryStore() });
runUsageRouteTests("sqlite", { createStore: tempSqliteStores("usage") });
