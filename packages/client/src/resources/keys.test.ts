/**
 * `client.keys`, `client.payments` and `client.settlement.status` against a real gateway on a
 * port; the owner wallets prove themselves with a SIWE session (`gw.signedIn`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  NotFoundError,
  PaymentRequiredError,
  PermissionDeniedError,
  TollgateError,
  type CreatedServiceKey,
  type TollgateClient,
} from "../index.js";
import { CHAIN, DAY, startGateway, thrown, type Seen, type SignedInClient, type TestGateway } from "../testing/harness.js";

let gw: TestGateway;
beforeAll(async () => void (gw = await startGateway()));
afterAll(() => gw?.close());

const PREPARE = { service: "inference", action: "chat", resource: "https://api.example.com/v1/chat", method: "POST" } as const;
const EMBEDDING_METER = { modelId: "text-embedding-3-small", modality: "embedding", usage: { promptTokens: 1_000_000 } };

type Client = TollgateClient & { calls: Seen[] };

/** A client signed in as a fresh wallet on {@link CHAIN}, and a key of `budget` made with it. */
async function owner(budget: bigint | string = 1000n, purpose: "api" | "session" = "api"): Promise<{ client: SignedInClient; key: CreatedServiceKey }> {
  const client = await gw.signedIn();
  const key = await client.keys.create({ budgetLimit: budget, expiresAt: gw.clock.now() + DAY, purpose });
  return { client, key };
}

/** Asserts an error of `Class` with `code` (and `param`), its request id, and that the call was sent once (not retried). */
async function expectError(client: Client, call: () => unknown, Class: typeof TollgateError, status: number, code: string, param?: string) {
  const before = client.calls.length;
  const e = await thrown(call);
  expect(e).toBeInstanceOf(Class);
  expect(e).toBeInstanceOf(TollgateError);
  expect([e.status, e.code, e.param]).toEqual([status, code, param]);
  expect(e.requestId).toMatch(/^req_/);
  expect(e.requestId).toBe(e.headers.get("x-request-id"));
  expect(e.message).toContain(code);
  expect(client.calls.length - before).toBe(1);
  return e;
}

describe("keys", () => {
  it("create, list in pages, get with the budget in meta, revoke (twice) — with bigint and string amounts", async () => {
    const client = await gw.signedIn();
    const { data: first, meta } = await client.keys.create({ budgetLimit: 1000n, expiresAt: gw.clock.now() + DAY, purpose: "api" }).withResponse();
    expect(meta.status).toBe(201);
    expect(first).toMatchObject({ keyId: expect.stringMatching(/^key_/), token: expect.stringMatching(/^svc-/), chainId: CHAIN, budgetLimit: "1000", budgetRemaining: "1000", status: "active" });
    expect(first).not.toHaveProperty("rateLimit");
    expect(meta.budget).toEqual({ limit: 1000n, used: 0n, reserved: 0n, remaining: 1000n });
    expect(JSON.parse(client.calls[0]!.body!)).toMatchObject({ budgetLimit: "1000", networkId: CHAIN });
    // The session proves the wallet; no wallet header is needed.
    expect(client.calls[0]!.headers.authorization).toBe(`Bearer ${client.session.token}`);
    expect(client.calls[0]!.headers["x-session-user-address"]).toBeUndefined();
    gw.clock.advance(1);
    const second = await client.keys.create({ budgetLimit: "500", expiresAt: gw.clock.now() + DAY, purpose: "session", name: "laptop" });
    expect(second).toMatchObject({ name: "laptop", purpose: "session", budgetLimit: "500" });

    const page1 = await client.keys.list({ limit: 1 });
    expect(page1.keys.map((k) => k.keyId)).toEqual([second.keyId]);
    expect(page1.next_cursor).toEqual(expect.any(String));
    const page2 = await client.keys.list({ limit: 1, cursor: page1.next_cursor! });
    expect(page2.keys.map((k) => k.keyId)).toEqual([first.keyId]);
    expect(JSON.stringify([page1, page2])).not.toContain("svc-");

    const { data: view, meta: viewMeta } = await client.keys.get(first.keyId, { apiKey: first.token }).withResponse();
    expect(view).toMatchObject({ keyId: first.keyId, budgetLimit: "1000", status: "active" });
    expect(view).not.toHaveProperty("token");
    expect(viewMeta.budget?.remaining).toBe(1000n);
    // A sibling key of the same owner may inspect and revoke.
    expect((await client.keys.get(second.keyId, { apiKey: first.token })).keyId).toBe(second.keyId);
    const revoked = await client.keys.revoke(second.keyId, { apiKey: first.token });
    expect(revoked).toEqual({ success: true, keyId: second.keyId, revokedAt: gw.clock.now() });
    gw.clock.advance(1000);
    expect(await client.keys.revoke(second.keyId, { apiKey: first.token })).toEqual(revoked);
    expect((await client.keys.get(second.keyId, { apiKey: first.token })).status).toBe("revoked");
  });

  it("maps every key failure to its error class: 400, 401 (each code), 403, 404 — none retried", async () => {
    const { client, key } = await owner();
    const other = await owner();
    const noWallet: Client = gw.client({ networkId: CHAIN });
    const body = { budgetLimit: 10n, expiresAt: gw.clock.now() + DAY, purpose: "api" as const };
    await expectError(noWallet, () => noWallet.keys.create(body), AuthenticationError, 401, "authentication_required", "x-session-user-address");
    await expectError(noWallet, () => noWallet.keys.create(body, { sessionAddress: client.address }), AuthenticationError, 401, "wallet_unverified", "x-session-user-address");
    await expectError(noWallet, () => noWallet.keys.create(body, { sessionAddress: "0x12" }), BadRequestError, 400, "invalid_request", "x-session-user-address");
    await expectError(client, () => client.keys.create(body, { sessionAddress: other.client.address }), PermissionDeniedError, 403, "forbidden", "x-session-user-address");
    const past = await expectError(client, () => client.keys.create({ ...body, expiresAt: gw.clock.now() - 1 }), BadRequestError, 400, "invalid_request", "expiresAt");
    expect(past.type).toBe("invalid_request_error");
    expect(past.message).toContain("expiresAt");
    await expectError(client, () => client.keys.create({ ...body, budgetLimit: "1.5" }), BadRequestError, 400, "invalid_request", "budgetLimit");
    await expectError(client, () => client.keys.get(key.keyId), AuthenticationError, 401, "authentication_required");
    await expectError(client, () => client.keys.get(key.keyId, { apiKey: `svc-${"A".repeat(43)}` }), AuthenticationError, 401, "invalid_key");
    const forbidden = await expectError(client, () => client.keys.get(key.keyId, { apiKey: other.key.token }), PermissionDeniedError, 403, "forbidden");
    expect(forbidden.type).toBe("permission_error");
    await expectError(client, () => client.keys.revoke("key_nope", { apiKey: key.token }), NotFoundError, 404, "key_not_found");

    await client.keys.revoke(key.keyId, { apiKey: key.token });
    await expectError(client, () => client.payments.prepare({ ...PREPARE, maxAmountWei: 1n }, { apiKey: key.token }), AuthenticationError, 401, "key_revoked");
    const brief = await client.keys.create({ ...body, expiresAt: gw.clock.now() + 1000 });
    gw.clock.advance(2000);
    await expectError(client, () => client.payments.prepare({ ...PREPARE, maxAmountWei: 1n }, { apiKey: brief.token }), AuthenticationError, 401, "key_expired");
  });

  it("settle (legacy) charges at once; over the budget it is a 402 budget_exhausted without an x402 offer", async () => {
    const { client, key } = await owner(1000n);
    const { data, meta } = await client.keys.settle({ amount: 300n }, { apiKey: key.token }).withResponse();
    expect(data).toEqual({ success: true, keyId: key.keyId, amount: "300", budgetRemaining: "700" });
    expect(meta.budget).toEqual({ limit: 1000n, used: 300n, reserved: 0n, remaining: 700n });
    const e = await expectError(client, () => client.keys.settle({ amount: "5000" }, { apiKey: key.token }), PaymentRequiredError, 402, "budget_exhausted");
    expect(e.type).toBe("insufficient_quota");
    expect(e.paymentRequired).toBeUndefined();
    expect((await client.keys.get(key.keyId, { apiKey: key.token })).budgetUsed).toBe("300");
  });
});

describe("payments", () => {
  it("prepare sends a generated idempotency key and network id; settle and abort replay; list and meter", async () => {
    const { client, key } = await owner(100_000n);
    const payer: Client = gw.client({ apiKey: key.token, networkId: CHAIN });
    const { data: intent, meta } = await payer.payments.prepare({ ...PREPARE, maxAmountWei: 300n }).withResponse();
    expect(intent).toEqual({ paymentIntentId: expect.stringMatching(/^pi_/), status: "authorized", maxAmountWei: "300", expiresAt: gw.clock.now() + 15 * 60_000 });
    expect(meta.paymentIntentId).toBe(intent.paymentIntentId);
    expect(meta.idempotencyKey).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(meta.idempotentReplay).toBe(false);
    expect(meta.budget).toEqual({ limit: 100_000n, used: 0n, reserved: 300n, remaining: 99_700n });
    const sent = payer.calls[0]!;
    expect([sent.headers["x-idempotency-key"], sent.headers["x-network-id"], sent.headers.authorization]).toEqual([meta.idempotencyKey, String(CHAIN), `Bearer ${key.token}`]);
    expect(JSON.parse(sent.body!)).toEqual({ ...PREPARE, maxAmountWei: "300" });

    // A caller's own key: the same key and parameters answer the same intent, reserved once.
    gw.clock.advance(1);
    const first = await payer.payments.prepare({ ...PREPARE, maxAmountWei: "50" }, { idempotencyKey: "order-1" }).withResponse();
    const again = await payer.payments.prepare({ ...PREPARE, maxAmountWei: "50", idempotencyKey: "order-1" }).withResponse();
    expect(again.data.paymentIntentId).toBe(first.data.paymentIntentId);
    expect([first.meta.idempotentReplay, again.meta.idempotentReplay, again.meta.idempotencyKey]).toEqual([false, true, "order-1"]);
    expect(again.meta.budget?.reserved).toBe(350n);

    const settled = await payer.payments.settle({ paymentIntentId: intent.paymentIntentId, finalAmountWei: 120n }).withResponse();
    expect(settled.data).toEqual({ paymentIntentId: intent.paymentIntentId, status: "settled", maxAmountWei: "300", finalAmountWei: "120", releasedWei: "180", settlement: { status: "queued" } });
    expect(settled.meta.budget).toEqual({ limit: 100_000n, used: 120n, reserved: 50n, remaining: 99_830n });
    const replay = await gw.client().payments.settle({ paymentIntentId: intent.paymentIntentId, finalAmountWei: "120" }).withResponse();
    expect([replay.data, replay.meta.idempotentReplay]).toEqual([settled.data, true]);

    const aborted = await payer.payments.abort({ paymentIntentId: first.data.paymentIntentId, reason: "user cancelled" });
    expect(aborted).toEqual({ paymentIntentId: first.data.paymentIntentId, status: "aborted", reason: "user cancelled", releasedWei: "50" });
    expect((await payer.payments.abort({ paymentIntentId: first.data.paymentIntentId }).withResponse()).meta.idempotentReplay).toBe(true);

    const list = await client.payments.list({ limit: 10 });
    expect(list.intents.map((i) => [i.paymentIntentId, i.status])).toEqual([
      [first.data.paymentIntentId, "aborted"],
      [intent.paymentIntentId, "settled"],
    ]);
    expect(list.next_cursor).toBeNull();
    expect((await client.payments.list({ keyId: "key_other" })).intents).toEqual([]);
    expect((await client.payments.list({ status: "aborted" })).intents.map((i) => i.paymentIntentId)).toEqual([first.data.paymentIntentId]);
    expect((await client.payments.list({ status: "authorized" })).intents).toEqual([]);

    const priced = await gw.client().payments.meter(EMBEDDING_METER);
    expect(priced).toMatchObject({ modelId: "text-embedding-3-small", provider: "openai", subject: "openai:text-embedding-3-small", lineItems: [expect.objectContaining({ quantity: 1000000 })] });
    expect(BigInt(priced.finalAmountWei)).toBe(BigInt(priced.providerAmountWei) + BigInt(priced.platformFeeWei));
    const metered = await payer.payments.prepare({ ...PREPARE, meter: EMBEDDING_METER });
    expect(metered.maxAmountWei).toBe(priced.finalAmountWei);
    const byMeter = await payer.payments.settle({ paymentIntentId: metered.paymentIntentId, meter: { ...EMBEDDING_METER, usage: { promptTokens: 1000 } } });
    expect(byMeter.lineItems?.[0]?.quantity).toBe(1000);
  });

  it("conflicts are ConflictErrors, sent once despite retries (x-should-retry: false); 404, 400 and 402 likewise", async () => {
    const { key } = await owner(1000n);
    const payer: Client = gw.client({ apiKey: key.token, networkId: CHAIN, maxRetries: 2 });
    const mismatch = await expectError(payer, () => payer.payments.prepare({ ...PREPARE, maxAmountWei: 1n }, { networkId: 1 }), ConflictError, 409, "chain_mismatch", "x-network-id");
    expect([mismatch.type, mismatch.headers.get("x-should-retry")]).toEqual(["conflict_error", "false"]);
    const intent = await payer.payments.prepare({ ...PREPARE, maxAmountWei: 100n }, { idempotencyKey: "k-1" });
    const over = await expectError(payer, () => payer.payments.settle({ paymentIntentId: intent.paymentIntentId, finalAmountWei: 101n }), ConflictError, 409, "amount_exceeds_reservation", "finalAmountWei");
    expect(over.details).toEqual({ maxAmountWei: "100", finalAmountWei: "101" });
    const reused = await expectError(payer, () => payer.payments.prepare({ ...PREPARE, maxAmountWei: 99n }, { idempotencyKey: "k-1" }), ConflictError, 409, "idempotency_conflict", "idempotencyKey");
    expect(reused.details).toEqual({ paymentIntentId: intent.paymentIntentId });
    await payer.payments.settle({ paymentIntentId: intent.paymentIntentId, finalAmountWei: 0n });
    await expectError(payer, () => payer.payments.abort({ paymentIntentId: intent.paymentIntentId }), ConflictError, 409, "invalid_state");
    await expectError(payer, () => payer.payments.settle({ paymentIntentId: "pi_nope", finalAmountWei: 1n }), NotFoundError, 404, "intent_not_found", "paymentIntentId");
    await expectError(payer, () => payer.payments.prepare({ ...PREPARE, maxAmountWei: 1n, idempotencyKey: "a" }, { idempotencyKey: "b" }), BadRequestError, 400, "invalid_request", "idempotencyKey");
    await expectError(payer, () => payer.payments.prepare({ ...PREPARE }), BadRequestError, 400, "invalid_request", "maxAmountWei");
    await expectError(payer, () => payer.payments.prepare({ ...PREPARE, maxAmountWei: 2000n }), PaymentRequiredError, 402, "budget_exhausted");
    // A live key of the wallet proves it for reads: the list is its wallet's.
    expect((await payer.payments.list()).intents.map((i) => i.paymentIntentId)).toEqual([intent.paymentIntentId]);
    const anonymous: Client = gw.client({ maxRetries: 2 });
    await expectError(anonymous, () => anonymous.payments.list(), AuthenticationError, 401, "authentication_required", "x-session-user-address");
    await expectError(payer, () => payer.payments.meter({ modelId: "no-such-model", modality: "text" }), NotFoundError, 404, "model_not_found", "model");
  });
});

describe("settlement.status", () => {
  it("shows the wallet's session budget with its queued charges on the chain of the call", async () => {
    const { client, key } = await owner(5000n, "session");
    const intent = await client.payments.prepare({ ...PREPARE, maxAmountWei: 400n }, { apiKey: key.token });
    await client.payments.settle({ paymentIntentId: intent.paymentIntentId, finalAmountWei: 250n });
    const expected = {
      hasActiveBudget: true,
      budget: { keyId: key.keyId, totalWei: "5000", lockedWei: "0", usedWei: "250", availableWei: "4750", pendingWei: "250", pendingIntents: 1, expiresAt: key.expiresAt },
    };
    expect(await client.settlement.status()).toEqual(expected);
    expect(await client.settlement.status({ chainId: CHAIN }, { networkId: 1 })).toEqual(expected);
    expect(await client.settlement.status({ chainId: 1 })).toEqual({ hasActiveBudget: false });
    // The session's key reads too; without either proof, 401.
    expect(await client.settlement.status({}, { apiKey: key.token })).toEqual(expected);
    await expectError(client, () => client.settlement.status({}, { sessionToken: null }), AuthenticationError, 401, "authentication_required", "x-session-user-address");
  });
});

describe("keys.getActive", () => {
  it("GET /api/session: the wallet's active session key on the chain of the call, never its token", async () => {
    const { client, key } = await owner(5000n, "session");
    await client.payments.prepare({ ...PREPARE, maxAmountWei: 1000n }, { apiKey: key.token });
    const before = client.calls.length;
    const active = await client.keys.getActive();
    expect(client.calls[before]).toMatchObject({ method: "GET", url: expect.stringMatching(/\/api\/session$/) });
    expect(client.calls[before]!.headers["x-network-id"]).toBe(String(CHAIN));
    expect(active).toEqual({
      hasSession: true,
      keyId: key.keyId,
      budgetLimit: "5000",
      budgetUsed: "0",
      budgetLocked: "1000",
      budgetRemaining: "4000",
      expiresAt: key.expiresAt,
      chainId: CHAIN,
      status: {
        isActive: true,
        isExpired: false,
        expiresInSeconds: Math.floor((key.expiresAt - gw.clock.now()) / 1000),
        budgetPercentRemaining: 80,
        warnings: { budgetDepleted: false, budgetLow: false, expiringSoon: false, expired: false },
      },
    });
    expect(JSON.stringify(active)).not.toContain(key.token);
    expect(await client.keys.getActive({}, { apiKey: key.token })).toEqual(active);
    expect(await client.keys.getActive({ chainId: 1 })).toEqual({ hasSession: false, reason: expect.any(String) });
    await expectError(client, () => client.keys.getActive({}, { sessionToken: null }), AuthenticationError, 401, "authentication_required", "x-session-user-address");
  });
});
