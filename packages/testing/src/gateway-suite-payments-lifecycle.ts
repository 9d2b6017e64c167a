/**
 * Payment intents over time and under contention: expiry after `intentTtlMs`, the sweeper,
 * who may settle or abort, and concurrent requests through `gateway.fetch` with an exact count
 * of winners (docs/architecture.md "Money invariants").
 */
import { describe, expect, it } from "vitest";
import type { GatewayOptions } from "@tollgate/core";
import {
  asWallet,
  bearer,
  CHAIN,
  DAY,
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

const TTL = 60_000;

/** Registers the lifecycle tests in the current `describe` (called by `runPaymentRouteSuite`). */
export function registerPaymentLifecycleTests(options: GatewaySuiteOptions): void {
  const test = (title: string, fn: (h: Harness) => Promise<void>, extra: Partial<GatewayOptions> = {}) =>
    it(title, () => withGateway(options, fn, { intentTtlMs: TTL, ...extra }));

  describe("expiry", () => {
    test("past intentTtlMs an intent cannot be settled or aborted (409) and its reservation is back", async (h) => {
      const key = await h.createKey();
      const r = await h.prepare(key.token);
      expect(r.body.expiresAt).toBe(h.clock.now() + TTL);
      const id = r.body.paymentIntentId;
      h.clock.advance(TTL - 1);
      const early = (await h.prepare(key.token, { ...PREPARE, maxAmountWei: "100" })).body.paymentIntentId;
      expect((await h.settle({ paymentIntentId: early, finalAmountWei: "40" })).status).toBe(200);
      h.clock.advance(1);
      const e = expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "1" }), 409, "invalid_state");
      expect(e.details?.status ?? "expired").toBe("expired");
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "40", reserved: "0" });
      expectError(await h.abort({ paymentIntentId: id }), 409, "invalid_state");
      expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "0" }), 409, "invalid_state");
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "40", reserved: "0" });
    });

    test("a prepare on the key releases its own overdue reservations first", async (h) => {
      const key = await h.createKey();
      expect((await h.prepare(key.token, { ...PREPARE, maxAmountWei: "1000" })).status).toBe(200);
      expectError(await h.prepare(key.token, { ...PREPARE, maxAmountWei: "1" }), 402, "budget_exhausted");
      h.clock.advance(TTL);
      const r = await h.prepare(key.token, { ...PREPARE, maxAmountWei: "1000" });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "1000" });
    });

    test("the sweeper (ledger.sweep) releases overdue intents and only those", async (h) => {
      const key = await h.createKey();
      const a = (await h.prepare(key.token, { ...PREPARE, maxAmountWei: "100" })).body.paymentIntentId;
      const b = (await h.prepare(key.token, { ...PREPARE, maxAmountWei: "200" })).body.paymentIntentId;
      h.clock.advance(TTL / 2);
      const c = (await h.prepare(key.token, { ...PREPARE, maxAmountWei: "50" })).body.paymentIntentId;
      h.clock.advance(TTL / 2);
      expect(await h.gateway.services.ledger.sweep()).toBe(2);
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "50" });
      expect(await h.gateway.services.ledger.sweep()).toBe(0);
      for (const id of [a, b]) expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "1" }), 409, "invalid_state");
      expect((await h.settle({ paymentIntentId: c, finalAmountWei: "50" })).body).toMatchObject({ status: "settled", releasedWei: "0" });
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "50", reserved: "0" });
    });

    test("the sweeper drains a backlog in batches, stopping at a short batch or after its batches", async (h) => {
      const key = await h.createKey();
      for (let i = 0; i < 7; i++) expect((await h.prepare(key.token, { ...PREPARE, maxAmountWei: "10" })).status).toBe(200);
      h.clock.advance(TTL);
      expect(await h.gateway.services.ledger.sweep(3, 2)).toBe(6);
      // (Not read in between: a read of the key releases its own overdue intents.)
      expect(await h.gateway.services.ledger.sweep(3, 10)).toBe(1);
      expect(await h.gateway.services.ledger.sweep(3, 10)).toBe(0);
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "0" });
    });
  });

  describe("who may settle and abort", () => {
    test("no credential is needed; a bearer of another owner → 403; an unknown bearer → 401", async (h) => {
      const key = await h.createKey();
      const sibling = await h.createKey();
      const stranger = await h.createKey({}, OTHER);
      const id = (await h.prepare(key.token)).body.paymentIntentId;
      expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "5" }, bearer(stranger.token)), 403, "forbidden");
      expectError(await h.abort({ paymentIntentId: id }, bearer(stranger.token)), 403, "forbidden");
      expectError(await h.settle({ paymentIntentId: id, finalAmountWei: "5" }, bearer(UNKNOWN_TOKEN)), 401, "invalid_key");
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "300" });
      expect((await h.settle({ paymentIntentId: id, finalAmountWei: "5" }, bearer(sibling.token))).status).toBe(200);
      const id2 = (await h.prepare(key.token)).body.paymentIntentId;
      expect((await h.abort({ paymentIntentId: id2 }, { authorization: key.token })).status).toBe(200);
      const id3 = (await h.prepare(key.token)).body.paymentIntentId;
      expect((await h.settle({ paymentIntentId: id3, finalAmountWei: "7" })).status).toBe(200);
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "12", reserved: "0" });
    });

    test("intents of a key revoked after prepare can still be settled", async (h) => {
      const key = await h.createKey();
      const id = (await h.prepare(key.token)).body.paymentIntentId;
      expect((await h.call("DELETE", `/api/keys/${key.keyId}`, { headers: bearer(key.token) })).status).toBe(200);
      expect((await h.settle({ paymentIntentId: id, finalAmountWei: "30" })).status).toBe(200);
      // Read through another live key of the owner: whether a revoked key may still inspect itself is the keys routes' call.
      const other = await h.createKey();
      expectBudget(await h.inspect(other.token, key.keyId), { limit: "1000", used: "30", reserved: "0" });
    });
  });

  describe("open-intent cap (limits.openIntentsPerKey)", () => {
    test(
      "10 concurrent prepares on a key capped at 3 open → 3 × 200 and 7 × 429 too_many_open_intents; a finished intent frees its slot; the cap is per key",
      async (h) => {
        const key = await h.createKey();
        const body = { ...PREPARE, maxAmountWei: "7" };
        const sized = { "content-length": String(new TextEncoder().encode(JSON.stringify(body)).byteLength) };
        const replies = await Promise.all(Array.from({ length: 10 }, () => h.prepare(key.token, body, sized)));
        const ok = replies.filter((r) => r.status === 200);
        expect(ok).toHaveLength(3);
        for (const r of replies.filter((x) => x.status !== 200)) {
          const e = expectError(r, 429, "too_many_open_intents");
          expect(e.details).toEqual({ limit: 3 });
          expect(r.headers.get("retry-after")).toBe("1");
        }
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "21" });
        // Another key of the same wallet has its own slots.
        const sibling = await h.createKey();
        expect((await h.prepare(sibling.token, body)).status).toBe(200);
        expect((await h.settle({ paymentIntentId: ok[0]!.body.paymentIntentId, finalAmountWei: "5" })).status).toBe(200);
        expect((await h.abort({ paymentIntentId: ok[1]!.body.paymentIntentId })).status).toBe(200);
        expect((await h.prepare(key.token, body)).status).toBe(200);
        expect((await h.prepare(key.token, body)).status).toBe(200);
        expectError(await h.prepare(key.token, body), 429, "too_many_open_intents");
        // Past the TTL the held ones lapse: the next prepare expires them and gets a slot.
        h.clock.advance(TTL);
        expect((await h.prepare(key.token, body)).status).toBe(200);
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "5", reserved: "7" });
      },
      { limits: { openIntentsPerKey: 3 } },
    );
  });

  describe("live-key cap (limits.liveKeysPerWallet)", () => {
    test(
      "6 concurrent creations for a wallet capped at 3 live keys → 3 × 201 and 3 × 409 too_many_keys; a revoked or expired key frees its place; the cap is per wallet",
      async (h) => {
        const create = (fields: Record<string, unknown> = {}, owner = OWNER) =>
          h.call("POST", "/api/keys", { headers: asWallet(owner), body: { budgetLimit: "1000", expiresAt: h.clock.now() + DAY, networkId: CHAIN, purpose: "api", ...fields } });
        const replies = await Promise.all(Array.from({ length: 6 }, () => create()));
        const made = replies.filter((r) => r.status === 201).map((r) => r.body);
        expect(made).toHaveLength(3);
        for (const r of replies.filter((x) => x.status !== 201)) expect(expectError(r, 409, "too_many_keys").details).toEqual({ limit: 3 });
        expect((await h.call("GET", "/api/keys", { headers: asWallet() })).body.keys).toHaveLength(3);
        // Another wallet has its own cap.
        expect((await create({}, OTHER)).status).toBe(201);
        expect((await h.call("DELETE", `/api/keys/${made[0].keyId}`, { headers: asWallet() })).status).toBe(200);
        expect((await create({ expiresAt: h.clock.now() + 1_000 })).status).toBe(201);
        expectError(await create(), 409, "too_many_keys");
        h.clock.advance(1_000);
        expect((await create()).status).toBe(201);
        // A key of the wallet still works at the cap: only creation is refused.
        expect((await h.prepare(made[1].token)).status).toBe(200);
      },
      { limits: { liveKeysPerWallet: 3 } },
    );
  });

  describe("races through gateway.fetch", () => {
    test("200 concurrent prepares of 7 against a budget of 706 → exactly 100 × 200 and 100 × 402", async (h) => {
      const key = await h.createKey({ budgetLimit: "706" });
      const body = { ...PREPARE, maxAmountWei: "7" };
      // Content-Length as any HTTP client sends it: a body of unknown length holds the whole JSON
      // limit of the in-flight body budget while it is read, and 200 of those at once would be 503s.
      const sized = { "content-length": String(new TextEncoder().encode(JSON.stringify(body)).byteLength) };
      const replies = await Promise.all(Array.from({ length: 200 }, () => h.prepare(key.token, body, sized)));
      const ok = replies.filter((r) => r.status === 200);
      const refused = replies.filter((r) => r.status === 402);
      expect([ok.length, refused.length]).toEqual([100, 100]);
      for (const r of refused) expectError(r, 402, "budget_exhausted");
      expect(new Set(ok.map((r) => r.body.paymentIntentId)).size).toBe(100);
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "706", used: "0", reserved: "700" });
    });

    test("50 concurrent prepares with one idempotency key → one intent, reserved once", async (h) => {
      const key = await h.createKey();
      const replies = await Promise.all(Array.from({ length: 50 }, () => h.prepare(key.token, { ...PREPARE, idempotencyKey: "same" })));
      expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
      expect(new Set(replies.map((r) => r.body.paymentIntentId)).size).toBe(1);
      expect(replies.filter((r) => r.headers.get("x-idempotent-replay") === "true")).toHaveLength(49);
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "300" });
    });

    test("20 concurrent settles with different amounts → exactly one wins, charged once", async (h) => {
      const key = await h.createKey();
      const id = (await h.prepare(key.token)).body.paymentIntentId;
      const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => h.settle({ paymentIntentId: id, finalAmountWei: String(i + 1) })));
      const won = replies.filter((r) => r.status === 200);
      expect(won).toHaveLength(1);
      for (const r of replies.filter((x) => x.status !== 200)) expectError(r, 409, "invalid_state");
      expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: won[0]!.body.finalAmountWei, reserved: "0" });
    });

    test("concurrent settle and abort of one intent → exactly one of them happens", async (h) => {
      const key = await h.createKey();
      const id = (await h.prepare(key.token)).body.paymentIntentId;
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? h.settle({ paymentIntentId: id, finalAmountWei: "100" }) : h.abort({ paymentIntentId: id }))),
      );
      const settled = replies.filter((r) => r.status === 200 && r.body.status === "settled").length;
      const aborted = replies.filter((r) => r.status === 200 && r.body.status === "aborted").length;
      // The winner's kind gets 200 replays; the other kind gets 409.
      expect(settled === 10 ? aborted : settled).toBe(0);
      expect(settled + aborted).toBe(10);
      const view = await h.inspect(key.token, key.keyId);
      expectBudget(view, { limit: "1000", used: settled ? "100" : "0", reserved: "0" });
    });
  });
}
