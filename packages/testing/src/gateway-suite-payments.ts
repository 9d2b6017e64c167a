/**
 * The payment-intent route suite (docs/payments.md "Payment intents"): prepare, idempotency, settle
 * and abort through `gateway.fetch` on a real store. Expiry, the sweeper, ownership and races are
 * in gateway-suite-payments-lifecycle.ts; {@link runPaymentRouteSuite} registers both.
 */
import { describe, expect, it } from "vitest";
import {
  asWallet,
  bearer,
  budgetOf,
  CHAIN,
  expectBudget,
  expectError,
  OTHER,
  OWNER,
  PREPARE,
  UNKNOWN_TOKEN,
  withGateway,
  type GatewaySuiteOptions,
  type Harness,
} from "./gateway-suite-fixtures.js";
import { registerPaymentLifecycleTests } from "./gateway-suite-payments-lifecycle.js";

const TTL = 15 * 60_000;

/** Registers the payment-intent route suite for the store `name` in the current vitest file. */
export function runPaymentRouteSuite(name: string, options: GatewaySuiteOptions): void {
  const test = (title: string, fn: (h: Harness) => Promise<void>) => it(title, () => withGateway(options, fn));

  describe(`payment routes: ${name}`, () => {
    describe("prepare", () => {
      test("200 {paymentIntentId, status, maxAmountWei, expiresAt} with the intent and budget headers", async (h) => {
        const key = await h.createKey();
        const r = await h.prepare(key.token, { ...PREPARE, method: "post", runId: "run-1" });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body).toEqual({ paymentIntentId: expect.stringMatching(/^pi_/), status: "authorized", maxAmountWei: "300", expiresAt: h.clock.now() + TTL });
        expect(r.headers.get("x-payment-intent-id")).toBe(r.body.paymentIntentId);
        expect(r.headers.get("x-idempotent-replay")).toBeNull();
        expect(budgetOf(r)).toEqual({ limit: "1000", used: "0", reserved: "300", remaining: "700" });
        const view = await h.inspect(key.token, key.keyId);
        expectBudget(view, { limit: "1000", used: "0", reserved: "300" });
        expect(view.lastUsedAt).toBe(h.clock.now());
        // A JSON-number amount and a bare token work too.
        const n = await h.call("POST", "/api/payments/prepare", { headers: { authorization: key.token, "x-network-id": String(CHAIN) }, body: { ...PREPARE, maxAmountWei: 200 } });
        expect(n.status).toBe(200);
        expect(n.body.maxAmountWei).toBe("200");
        expect(n.body.paymentIntentId).not.toBe(r.body.paymentIntentId);
      });

      test("chain header: missing → 400; x-chain-id alias works; another chain → 409 chain_mismatch", async (h) => {
        const key = await h.createKey();
        const noChain = await h.call("POST", "/api/payments/prepare", { headers: bearer(key.token), body: PREPARE });
        expectError(noChain, 400, "invalid_request", "x-network-id");
        expectError(await h.prepare(key.token, PREPARE, { "x-network-id": "abc" }), 400, "invalid_request", "x-network-id");
        expectError(await h.prepare(key.token, PREPARE, { "x-network-id": "0" }), 400, "invalid_request", "x-network-id");
        expectError(await h.prepare(key.token, PREPARE, { "x-network-id": "10" }), 409, "chain_mismatch");
        const alias = await h.call("POST", "/api/payments/prepare", { headers: { ...bearer(key.token), "x-chain-id": String(CHAIN) }, body: PREPARE });
        expect(alias.status).toBe(200);
        expectError(await h.call("POST", "/api/payments/prepare", { headers: { ...bearer(key.token), "x-chain-id": "10" }, body: PREPARE }), 409, "chain_mismatch");
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "300" });
      });

      test("body and credential errors → 400/401 naming the param; nothing reserved", async (h) => {
        const key = await h.createKey();
        const { maxAmountWei: _m, ...noAmount } = PREPARE;
        const meter = { modelId: "gpt-4o", modality: "text", usage: { promptTokens: 10 } };
        const cases: Array<[string, Record<string, unknown>]> = [
          ["maxAmountWei", noAmount],
          ["maxAmountWei", { ...PREPARE, meter }],
          ["maxAmountWei", { ...PREPARE, maxAmountWei: "0" }],
          ["maxAmountWei", { ...PREPARE, maxAmountWei: "-1" }],
          ["maxAmountWei", { ...PREPARE, maxAmountWei: "1.5" }],
          ["service", { ...PREPARE, service: undefined }],
          ["service", { ...PREPARE, service: "  " }],
          ["action", { ...PREPARE, action: undefined }],
          ["resource", { ...PREPARE, resource: undefined }],
          ["method", { ...PREPARE, method: undefined }],
        ];
        for (const [param, body] of cases) {
          const r = await h.prepare(key.token, JSON.parse(JSON.stringify(body)));
          expect({ body, status: r.status, param: r.body.error?.param }).toEqual({ body, status: 400, param });
          expectError(r, 400, "invalid_request", param);
        }
        expectError(await h.call("POST", "/api/payments/prepare", { headers: { ...bearer(key.token), "x-network-id": "8453" }, raw: "{nope" }), 400, "invalid_request");
        expectError(await h.call("POST", "/api/payments/prepare", { headers: { "x-network-id": "8453" }, body: PREPARE }), 401, "authentication_required");
        expectError(await h.prepare(UNKNOWN_TOKEN), 401, "invalid_key");
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "0" });
      });

      test("budget too small → 402 budget_exhausted and nothing reserved; the exact remainder fits", async (h) => {
        const key = await h.createKey();
        expect((await h.prepare(key.token, { ...PREPARE, maxAmountWei: "600" })).status).toBe(200);
        const e = expectError(await h.prepare(key.token, { ...PREPARE, maxAmountWei: "401" }), 402, "budget_exhausted");
        expect(e.type).toBe("insufficient_quota");
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "600" });
        const exact = await h.prepare(key.token, { ...PREPARE, maxAmountWei: "400" });
        expect(exact.status).toBe(200);
        expect(budgetOf(exact).remaining).toBe("0");
        expectError(await h.prepare(key.token, { ...PREPARE, maxAmountWei: "1" }), 402, "budget_exhausted");
      });

      for (const via of ["body", "header"] as const) {
        test(`idempotency key in the ${via}: a repeat replays the intent, reserved once; other params → 409`, async (h) => {
          const key = await h.createKey();
          const send = (fields: Record<string, unknown>, idem = "order-17") =>
            via === "body" ? h.prepare(key.token, { ...fields, idempotencyKey: idem }) : h.prepare(key.token, fields, { "x-idempotency-key": idem });
          const first = await send(PREPARE);
          expect(first.status).toBe(200);
          const again = await send(PREPARE);
          expect(again.status).toBe(200);
          expect(again.body).toEqual(first.body);
          expect(again.headers.get("x-idempotent-replay")).toBe("true");
          expect(again.headers.get("x-payment-intent-id")).toBe(first.body.paymentIntentId);
          expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "300" });
          // A model named beside the amount is part of the call too: naming another (or one where none was) conflicts.
          const named = [{ ...PREPARE, modelId: "gpt-4o-mini" }, { ...PREPARE, modelId: "gpt-4o" }];
          for (const changed of [{ ...PREPARE, maxAmountWei: "301" }, { ...PREPARE, resource: "https://elsewhere" }, { ...PREPARE, action: "embed" }, named[0]!]) {
            const e = expectError(await send(changed), 409, "idempotency_conflict");
            expect(e.details?.paymentIntentId ?? first.body.paymentIntentId).toBe(first.body.paymentIntentId);
          }
          expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "300" });
          const modelFirst = await send(named[0]!, "order-model");
          expect(modelFirst.status).toBe(200);
          expect((await send(named[0]!, "order-model")).headers.get("x-idempotent-replay")).toBe("true");
          expectError(await send(named[1]!, "order-model"), 409, "idempotency_conflict");
          expectError(await send(PREPARE, "order-model"), 409, "idempotency_conflict");
          await h.abort({ paymentIntentId: modelFirst.body.paymentIntentId });
          // Another idempotency key is another intent; the key is scoped to the service key.
          expect((await send(PREPARE, "order-18")).body.paymentIntentId).not.toBe(first.body.paymentIntentId);
          const other = await h.createKey();
          const elsewhere = await h.prepare(other.token, { ...PREPARE, idempotencyKey: "order-17" });
          expect(elsewhere.status).toBe(200);
          expect(elsewhere.body.paymentIntentId).not.toBe(first.body.paymentIntentId);
        });
      }
    });

    describe("list", () => {
      test("GET /api/payments/intents lists the session wallet's intents newest first, filtered and paged", async (h) => {
        const a = await h.createKey();
        const b = await h.createKey();
        const other = await h.createKey({}, OTHER);
        await h.prepare(other.token, PREPARE);
        const first = (await h.prepare(a.token, PREPARE)).body.paymentIntentId;
        h.clock.advance(10);
        const second = (await h.prepare(b.token, { ...PREPARE, maxAmountWei: "100" })).body.paymentIntentId;
        h.clock.advance(10);
        const third = (await h.prepare(a.token, PREPARE)).body.paymentIntentId;
        await h.settle({ paymentIntentId: third, finalAmountWei: "120" });
        await h.abort({ paymentIntentId: second, reason: "cancelled" });

        const session = asWallet(OWNER);
        const all = await h.call("GET", "/api/payments/intents", { headers: session });
        expect(all.status).toBe(200);
        expect(all.body.intents.map((i: any) => i.paymentIntentId)).toEqual([third, second, first]);
        expect(all.body.intents[0]).toMatchObject({ keyId: a.keyId, chainId: CHAIN, status: "settled", service: "inference", maxAmountWei: "300", finalAmountWei: "120", releasedWei: "180", managed: false });
        expect(all.body.intents[1]).toMatchObject({ status: "aborted", reason: "cancelled", releasedWei: "100", finalAmountWei: null });
        expect(all.body.next_cursor).toBeNull();

        const byKey = await h.call("GET", `/api/payments/intents?keyId=${a.keyId}&limit=1`, { headers: session });
        expect(byKey.body.intents.map((i: any) => i.paymentIntentId)).toEqual([third]);
        const next = await h.call("GET", `/api/payments/intents?keyId=${a.keyId}&limit=1&cursor=${byKey.body.next_cursor}`, { headers: session });
        expect(next.body).toEqual({ intents: [expect.objectContaining({ paymentIntentId: first, status: "authorized" })], next_cursor: null });

        // An overdue authorized intent shows as expired, its reservation as released.
        h.clock.advance(TTL);
        const late = await h.call("GET", "/api/payments/intents?limit=1&cursor=" + (await h.call("GET", "/api/payments/intents?limit=2", { headers: session })).body.next_cursor, { headers: session });
        expect(late.body.intents[0]).toMatchObject({ paymentIntentId: first, status: "expired", releasedWei: "300" });

        // A live key of the wallet proves it too, but lists only its own intents: an intent's id
        // settles it, so a key must not learn those of the wallet's other keys.
        const viaKey = await h.call("GET", "/api/payments/intents", { headers: bearer(b.token) });
        expect(viaKey.status).toBe(200);
        expect(viaKey.body.intents.map((i: any) => i.paymentIntentId)).toEqual([second]);
        expect((await h.call("GET", `/api/payments/intents?keyId=${b.keyId}`, { headers: bearer(b.token) })).body.intents).toHaveLength(1);
        expectError(await h.call("GET", `/api/payments/intents?keyId=${a.keyId}`, { headers: bearer(b.token) }), 403, "forbidden", "keyId");

        expectError(await h.call("GET", "/api/payments/intents"), 401, "authentication_required");
        expectError(await h.call("GET", "/api/payments/intents", { headers: { "x-session-user-address": OWNER } }), 401, "wallet_unverified", "x-session-user-address");
        expectError(await h.call("GET", "/api/payments/intents?cursor=nope", { headers: session }), 400, "invalid_request", "cursor");
        expectError(await h.call("GET", "/api/payments/intents?chainId=x", { headers: session }), 400, "invalid_request", "chainId");
      });

      test("?status lists the intents in that state as listed now: a key's open holds, and an overdue one as expired", async (h) => {
        const key = await h.createKey();
        const session = asWallet(OWNER);
        const ids = [];
        for (let i = 0; i < 4; i++) {
          ids.push((await h.prepare(key.token, { ...PREPARE, maxAmountWei: "100" })).body.paymentIntentId);
          h.clock.advance(10);
        }
        await h.settle({ paymentIntentId: ids[0], finalAmountWei: "1" });
        await h.abort({ paymentIntentId: ids[1] });
        const list = async (query: string) => (await h.call("GET", `/api/payments/intents?${query}`, { headers: session })).body;
        expect((await list(`keyId=${key.keyId}&status=authorized`)).intents.map((i: any) => i.paymentIntentId)).toEqual([ids[3], ids[2]]);
        expect((await list("status=authorized&limit=1")).next_cursor).not.toBeNull();
        expect((await list("status=settled")).intents.map((i: any) => [i.paymentIntentId, i.status])).toEqual([[ids[0], "settled"]]);
        expect((await list("status=aborted")).intents.map((i: any) => i.paymentIntentId)).toEqual([ids[1]]);
        expect(await list("status=expired")).toEqual({ intents: [], next_cursor: null });
        h.clock.advance(TTL);
        expect(await list("status=authorized")).toEqual({ intents: [], next_cursor: null });
        const expired = await list("status=expired");
        expect(expired.intents.map((i: any) => [i.paymentIntentId, i.status])).toEqual([
          [ids[3], "expired"],
          [ids[2], "expired"],
        ]);
        expectError(await h.call("GET", "/api/payments/intents?status=open", { headers: session }), 400, "invalid_request", "status");
      });
    });

    describe("settle", () => {
      test("a final amount within the reservation is charged and the rest released (queued)", async (h) => {
        const key = await h.createKey();
        const id = (await h.prepare(key.token)).body.paymentIntentId;
        const r = await h.settle({ paymentIntentId: id, finalAmountWei: "120" });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body).toEqual({ paymentIntentId: id, status: "settled", maxAmountWei: "300", finalAmountWei: "120", releasedWei: "180", settlement: { status: "queued" } });
        expect(budgetOf(r)).toEqual({ limit: "1000", used: "120", reserved: "0", remaining: "880" });
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "120", reserved: "0" });
      });

      test("0 is allowed: off_chain, everything released", async (h) => {
        const key = await h.createKey();
        const id = (await h.prepare(key.token)).body.paymentIntentId;
        const r = await h.settle({ paymentIntentId: id, finalAmountWei: 0 });
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ status: "settled", finalAmountWei: "0", releasedWei: "300", settlement: { status: "off_chain" } });
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "0" });
      });

      test("the same settle again replays (no double charge); another amount → 409 invalid_state", async (h) => {
        const key = await h.createKey();
        const id = (await h.prepare(key.token)).body.paymentIntentId;
        const first = await h.settle({ paymentIntentId: id, finalAmountWei: "250" });
        h.clock.advance(1000);
        const again = await h.settle({ paymentIntentId: id, finalAmountWei: 250 });
        expect(again.status).toBe(200);
        expect(again.body).toEqual(first.body);
        expect(again.headers.get("x-idempotent-replay")).toBe("true");
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "250", reserved: "0" });
        expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "100" }), 409, "invalid_state");
        expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "0" }), 409, "invalid_state");
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "250", reserved: "0" });
      });

      test("above the reservation → 409 amount_exceeds_reservation, intent unchanged; a smaller amount then settles", async (h) => {
        const key = await h.createKey();
        const id = (await h.prepare(key.token)).body.paymentIntentId;
        const e = expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "301" }), 409, "amount_exceeds_reservation", "finalAmountWei");
        expect(e.type).toBe("conflict_error");
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "300" });
        const ok = await h.settle({ paymentIntentId: id, finalAmountWei: "300" });
        expect(ok.body).toMatchObject({ status: "settled", finalAmountWei: "300", releasedWei: "0" });
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "300", reserved: "0" });
      });

      test("body errors → 400; unknown intent → 404 intent_not_found", async (h) => {
        const key = await h.createKey();
        const id = (await h.prepare(key.token)).body.paymentIntentId;
        expectError(await h.settle({ finalAmountWei: "1" }), 400, "invalid_request", "paymentIntentId");
        expectError(await h.settle({ paymentIntentId: id }), 400, "invalid_request", "finalAmountWei");
        expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "1", meter: { modelId: "gpt-4o", modality: "text", usage: { promptTokens: 1 } } }), 400, "invalid_request", "finalAmountWei");
        expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "-1" }), 400, "invalid_request", "finalAmountWei");
        expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "1e3" }), 400, "invalid_request", "finalAmountWei");
        expectError(await h.settle({ paymentIntentId: "pi_doesnotexist", finalAmountWei: "1" }), 404, "intent_not_found");
        expectError(await h.abort({ paymentIntentId: "pi_doesnotexist" }), 404, "intent_not_found");
        expectError(await h.abort({}), 400, "invalid_request", "paymentIntentId");
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "300" });
      });
    });

    describe("abort", () => {
      test("200 {status:aborted, reason, releasedWei}; a repeat gives the same 200; settle after → 409", async (h) => {
        const key = await h.createKey();
        const id = (await h.prepare(key.token)).body.paymentIntentId;
        const r = await h.abort({ paymentIntentId: id, reason: "client went away" });
        expect(r.status).toBe(200);
        expect(r.body).toEqual({ paymentIntentId: id, status: "aborted", reason: "client went away", releasedWei: "300" });
        expect(budgetOf(r)).toEqual({ limit: "1000", used: "0", reserved: "0", remaining: "1000" });
        h.clock.advance(1000);
        const again = await h.abort({ paymentIntentId: id, reason: "another reason" });
        expect(again.status).toBe(200);
        expect(again.body).toEqual(r.body);
        expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "1" }), 409, "invalid_state");
        expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "0" }), 409, "invalid_state");
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "0" });
        const plain = (await h.prepare(key.token)).body.paymentIntentId;
        expect((await h.abort({ paymentIntentId: plain })).body).toEqual({ paymentIntentId: plain, status: "aborted", reason: expect.any(String), releasedWei: "300" });
      });

      test("abort after settle → 409 invalid_state, the charge stands", async (h) => {
        const key = await h.createKey();
        const id = (await h.prepare(key.token)).body.paymentIntentId;
        expect((await h.settle({ paymentIntentId: id, finalAmountWei: "10" })).status).toBe(200);
        expectError(await h.abort({ paymentIntentId: id }), 409, "invalid_state");
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "10", reserved: "0" });
      });
    });

    registerMeterTests(test);
    registerPaymentLifecycleTests(options);
  });
}

/** The origin client's example: 100,000 × 0.0000004 USD per 1k, 40 atoms + 1 % fee = 41. */
const SEARCH = { subject: "acme:web-search", lineItems: [{ key: "search_tokens", unit: "usd_per_1k_tokens", quantity: 100_000, unitPriceUsd: 0.0000004 }] };
const searchMeter = (quantity: number | string, unitPriceUsd: number | string = 0.0000004) => ({ ...SEARCH, lineItems: [{ ...SEARCH.lineItems[0]!, quantity, unitPriceUsd }] });

/** Meters in prepare and settle: catalog models priced by the catalog, other subjects by the caller. */
function registerMeterTests(test: (title: string, fn: (h: Harness) => Promise<void>) => void): void {
  describe("meters", () => {
    test("a caller-priced subject (JSON numbers) reserves and settles exactly 41 atoms; the answer has the client's shape", async (h) => {
      const key = await h.createKey();
      const r = await h.prepare(key.token, { ...PREPARE, maxAmountWei: undefined, meter: SEARCH });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.maxAmountWei).toBe("41");
      const s = await h.settle({ paymentIntentId: r.body.paymentIntentId, meter: SEARCH });
      expect(s.status, JSON.stringify(s.body)).toBe(200);
      expect(s.body).toEqual({
        paymentIntentId: r.body.paymentIntentId,
        status: "settled",
        maxAmountWei: "41",
        finalAmountWei: "41",
        releasedWei: "0",
        meterSubject: "acme:web-search",
        lineItems: [{ key: "search_tokens", unit: "usd_per_1k_tokens", quantity: 100000, unitPriceUsd: 0.0000004, amountWei: "40" }],
        providerAmountWei: "40",
        platformFeeWei: "1",
        settlement: { status: "queued" },
      });
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "41", reserved: "0" });
    });

    test("caller prices: decimal strings price like numbers; settle below releases the rest, above → 409 and nothing moves", async (h) => {
      const key = await h.createKey();
      const id = (await h.prepare(key.token, { ...PREPARE, maxAmountWei: undefined, meter: searchMeter("100000", "0.0000004") })).body.paymentIntentId;
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "41" });
      // 200,000 × 0.0000004 per 1k = 80 + 1 → 81 > 41: refused, the reservation stands.
      expectError(await h.settle({ paymentIntentId: id, meter: searchMeter(200_000) }), 409, "amount_exceeds_reservation", "meter");
      // A higher caller price is refused the same way.
      expectError(await h.settle({ paymentIntentId: id, meter: searchMeter(100_000, "0.000001") }), 409, "amount_exceeds_reservation", "meter");
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "41" });
      const ok = await h.settle({ paymentIntentId: id, meter: searchMeter("50000") });
      expect(ok.body).toMatchObject({ finalAmountWei: "21", releasedWei: "20", providerAmountWei: "20", platformFeeWei: "1" });
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "21", reserved: "0" });
    });

    test("a catalog model ignores caller prices: priced by the catalog", async (h) => {
      const key = await h.createKey({ budgetLimit: "100000" });
      const meter = { subject: "openai:gpt-4o", lineItems: [{ key: "input_tokens", unit: "usd_per_request", quantity: 1000, unitPriceUsd: 1000 }] };
      // gpt-4o input: 2.50 USD per 1M tokens → 1000 tokens = 2500 atoms + 25 fee.
      const r = await h.prepare(key.token, { ...PREPARE, maxAmountWei: undefined, meter });
      expect(r.body.maxAmountWei).toBe("2525");
      const s = await h.settle({ paymentIntentId: r.body.paymentIntentId, meter });
      expect(s.body).toMatchObject({ finalAmountWei: "2525", meterSubject: "openai:gpt-4o", lineItems: [{ key: "input_tokens", unit: "usd_per_1m_tokens", quantity: 1000, unitPriceUsd: 2.5, amountWei: "2500" }] });
    });

    test("caller prices are validated strictly; an unpriced unknown subject is 404", async (h) => {
      const key = await h.createKey();
      const prep = (meter: unknown) => h.prepare(key.token, { ...PREPARE, maxAmountWei: undefined, meter });
      for (const bad of ["1e-7", "-0.1", "0.0000004 ", "NaN", "0.1234567890123456789", "0.12345678901234567", 1e16, -1])
        expect((await prep(searchMeter(100_000, bad as string))).status, String(bad)).toBe(400);
      expect((await prep(searchMeter("1e5"))).status).toBe(400);
      expectError(await prep({ subject: "acme:web-search", lineItems: [{ key: "a", quantity: 1 }] }), 404, "model_not_found", "meter.subject");
      const partial = { subject: "acme:web-search", lineItems: [SEARCH.lineItems[0], { key: "b", unit: "usd_per_request", quantity: 1 }] };
      expectError(await prep(partial), 400, "invalid_request", "meter.lineItems.1.unitPriceUsd");
      const { unit: _unit, ...noUnit } = SEARCH.lineItems[0]!;
      expectError(await prep({ subject: "acme:web-search", lineItems: [noUnit] }), 400, "invalid_request", "meter.lineItems.0.unit");
      // 0.0000001 as a JSON number is 1e-7 in JavaScript; it is read exactly: 100,000 × 1e-7 per 1k → 10 + 1.
      expect((await prep(searchMeter(100_000, 0.0000001))).body.maxAmountWei).toBe("11");
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "11" });
    });

    test("prepare with top-level modelId, modality and usage (no maxAmountWei or meter) reserves the metered price", async (h) => {
      const key = await h.createKey({ budgetLimit: "100000" });
      const { maxAmountWei: _cap, ...base } = PREPARE;
      const usage = { promptTokens: 1000, completionTokens: 500, totalTokens: 1500 };
      const quote = await h.call("POST", "/api/payments/meter/model", { body: { modelId: "gpt-4o", modality: "text", usage } });
      expect(quote.body).toMatchObject({ known: true, meter: { subject: "openai:gpt-4o" } });
      const r = await h.prepare(key.token, { ...base, modelId: "gpt-4o", modality: "text", usage });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.maxAmountWei).toBe(quote.body.finalAmountWei);
      expectError(await h.prepare(key.token, { ...base, modelId: "gpt-4o", usage }), 400, "invalid_request", "modality");
      expectError(await h.prepare(key.token, { ...base, modelId: "no-such-model", modality: "text", usage }), 404, "model_not_found");
      // Beside maxAmountWei they only describe the work: the cap is reserved.
      expect((await h.prepare(key.token, { ...PREPARE, modelId: "gpt-4o", modality: "text", usage })).body.maxAmountWei).toBe("300");
      // The quote's meter settles the first intent to the quoted atom.
      const s = await h.settle({ paymentIntentId: r.body.paymentIntentId, meter: quote.body.meter });
      expect(s.body).toMatchObject({ finalAmountWei: quote.body.finalAmountWei, releasedWei: "0" });
    });
  });
}
