/**
 * Key governance through the client against a real gateway on a port: `keys.update` with the
 * owner's proof (a SIWE session, or the internal secret with the wallet) and a key renaming
 * itself, the 409 `limit_below_committed` guard, `keys.rotate` with the old token's grace,
 * `keys.events` in pages, and the allow-list and per-model caps refusing paid calls.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AuthenticationError,
  ConflictError,
  PaymentRequiredError,
  PermissionDeniedError,
  TollgateError,
  type CreateKeyParams,
  type CreatedServiceKey,
  type KeyEvent,
  type TollgateClient,
} from "../index.js";
import { CHAIN, DAY, startGateway, thrown, type Seen, type SignedInClient, type TestGateway } from "../testing/harness.js";

const SECRET = "governance-internal-secret-0123456789";
const PREPARE = { service: "inference", action: "chat", resource: "https://api.example.com/v1/chat", method: "POST" } as const;

let gw: TestGateway;
beforeAll(async () => void (gw = await startGateway({ internalSecret: SECRET })));
afterAll(() => gw?.close());

type Client = TollgateClient & { calls: Seen[] };

/** A client signed in as a fresh wallet, and a key of `budget` made with it. */
async function owner(params: Partial<CreateKeyParams> = {}): Promise<{ client: SignedInClient; key: CreatedServiceKey }> {
  const client = await gw.signedIn();
  const key = await client.keys.create({ budgetLimit: 1000n, expiresAt: gw.clock.now() + DAY, purpose: "api", ...params });
  return { client, key };
}

/** Asserts an error of `Class` with `code` (and `param`), its request id, and that the call was sent once (not retried). */
async function expectError(client: Client, call: () => unknown, Class: typeof TollgateError, status: number, code: string, param?: string) {
  const before = client.calls.length;
  const e = await thrown(call);
  expect(e).toBeInstanceOf(Class);
  expect([e.status, e.code, e.param]).toEqual([status, code, param]);
  expect(e.requestId).toMatch(/^req_/);
  expect(e.message).toContain(code);
  expect(client.calls.length - before).toBe(1);
  return e;
}

const utcDay = (ms: number) => Math.floor(ms / DAY) * DAY;

describe("keys: create with governance fields", () => {
  it("budgetPeriod, models and modelBudgets are sent as given (amounts as strings) and shown in the view", async () => {
    const { client, key } = await owner({
      budgetPeriod: "daily",
      models: ["openai/*", "claude-sonnet-4-5"],
      modelBudgets: { "gpt-4o": 300n, "openai/*": "500" },
    });
    expect(JSON.parse(client.calls.at(-1)!.body!)).toMatchObject({
      budgetPeriod: "daily",
      models: ["openai/*", "claude-sonnet-4-5"],
      modelBudgets: { "gpt-4o": "300", "openai/*": "500" },
    });
    const now = gw.clock.now();
    expect(key).toMatchObject({
      budgetPeriod: "daily",
      periodStartsAt: utcDay(now),
      periodEndsAt: utcDay(now) + DAY,
      models: ["openai/*", "claude-sonnet-4-5"],
      modelBudgets: {
        "gpt-4o": { limit: "300", used: "0", reserved: "0", remaining: "300" },
        "openai/*": { limit: "500", used: "0", reserved: "0", remaining: "500" },
      },
    });
    expect(key).not.toHaveProperty("previousTokenValidUntil");
    expect(await client.keys.get(key.keyId, { apiKey: key.token })).toMatchObject({
      budgetPeriod: "daily",
      models: key.models,
      modelBudgets: key.modelBudgets,
    });
  });
});

describe("keys.update", () => {
  it("the owner's session changes limit, period, models, caps and rate; null clears; budget in meta", async () => {
    const { client, key } = await owner({ name: "first", rateLimit: { requestsPerMinute: 10 } });
    const { data, meta } = await client.keys
      .update(key.keyId, {
        budgetLimit: 2000n,
        budgetPeriod: "weekly",
        models: ["openai/*"],
        modelBudgets: { "gpt-4o": 100n },
        rateLimit: { requestsPerMinute: 30 },
      })
      .withResponse();
    const sent = client.calls.at(-1)!;
    expect([sent.method, new URL(sent.url).pathname, sent.headers.authorization]).toEqual([
      "PATCH",
      `/api/keys/${key.keyId}`,
      `Bearer ${client.session.token}`,
    ]);
    expect(JSON.parse(sent.body!)).toEqual({
      budgetLimit: "2000",
      budgetPeriod: "weekly",
      models: ["openai/*"],
      modelBudgets: { "gpt-4o": "100" },
      rateLimit: { requestsPerMinute: 30 },
    });
    expect(data).toMatchObject({
      keyId: key.keyId,
      name: "first",
      budgetLimit: "2000",
      budgetRemaining: "2000",
      budgetPeriod: "weekly",
      periodEndsAt: data.periodStartsAt! + 7 * DAY,
      models: ["openai/*"],
      modelBudgets: { "gpt-4o": { limit: "100", used: "0", reserved: "0", remaining: "100" } },
      rateLimit: { requestsPerMinute: 30 },
    });
    // A weekly window starts on a Monday, 00:00 UTC.
    expect([new Date(data.periodStartsAt!).getUTCDay(), data.periodStartsAt! % DAY]).toEqual([1, 0]);
    expect(meta.budget).toEqual({ limit: 2000n, used: 0n, reserved: 0n, remaining: 2000n });

    const cleared = await client.keys.update(key.keyId, { name: null, budgetPeriod: null, models: null, modelBudgets: null, rateLimit: null });
    for (const field of ["name", "budgetPeriod", "periodStartsAt", "periodEndsAt", "models", "modelBudgets", "rateLimit"])
      expect(cleared).not.toHaveProperty(field);
    expect(cleared.budgetLimit).toBe("2000");
  });

  it("the internal secret with the wallet header proves the owner too; another wallet's key is 403", async () => {
    const { client, key } = await owner();
    const host: Client = gw.client({ internalSecret: SECRET, sessionAddress: client.address, networkId: CHAIN });
    const updated = await host.keys.update(key.keyId, { budgetLimit: "1500", expiresAt: gw.clock.now() + 2 * DAY });
    expect(updated).toMatchObject({ budgetLimit: "1500", expiresAt: gw.clock.now() + 2 * DAY });
    expect(host.calls[0]!.headers["x-internal-secret"]).toBe(SECRET);
    const stranger = await owner();
    await expectError(stranger.client, () => stranger.client.keys.update(key.keyId, { name: "mine" }), PermissionDeniedError, 403, "forbidden");
    await expectError(
      host,
      () => host.keys.update(key.keyId, { name: "x" }, { internalSecret: null }),
      AuthenticationError,
      401,
      "wallet_unverified",
      "x-session-user-address",
    );
  });

  it("a key may rename itself, and only that; a sibling key may not rename it", async () => {
    const { client, key } = await owner({ name: "laptop" });
    const sibling = await client.keys.create({ budgetLimit: 10n, expiresAt: gw.clock.now() + DAY, purpose: "api" });
    // The call's own apiKey wins over the client's session on a wallet route.
    const renamed = await client.keys.update(key.keyId, { name: "desktop" }, { apiKey: key.token });
    expect(client.calls.at(-1)!.headers.authorization).toBe(`Bearer ${key.token}`);
    expect(renamed).toMatchObject({ keyId: key.keyId, name: "desktop", budgetLimit: "1000" });
    const self = gw.client({ apiKey: key.token, maxRetries: 2 });
    await expectError(self, () => self.keys.update(key.keyId, { name: "x", budgetLimit: 5000n }), PermissionDeniedError, 403, "forbidden", "budgetLimit");
    await expectError(self, () => self.keys.update(key.keyId, { models: null }), PermissionDeniedError, 403, "forbidden", "models");
    await expectError(self, () => self.keys.update(sibling.keyId, { name: "x" }), PermissionDeniedError, 403, "forbidden");
    expect((await client.keys.get(key.keyId, { apiKey: key.token })).name).toBe("desktop");
  });

  it("a limit below the window's used + reserved is a ConflictError limit_below_committed, sent once, nothing changed", async () => {
    const { client, key } = await owner();
    const payer = gw.client({ apiKey: key.token, networkId: CHAIN });
    const a = await payer.payments.prepare({ ...PREPARE, maxAmountWei: 300n });
    await payer.payments.settle({ paymentIntentId: a.paymentIntentId, finalAmountWei: 200n });
    await payer.payments.prepare({ ...PREPARE, maxAmountWei: 150n });
    const retrying = await gw.signedIn({ maxRetries: 2 }, client.account);
    const e = await expectError(
      retrying,
      () => retrying.keys.update(key.keyId, { budgetLimit: 349n }),
      ConflictError,
      409,
      "limit_below_committed",
      "budgetLimit",
    );
    expect([e.type, e.details]).toEqual(["conflict_error", { budgetUsed: "200", budgetReserved: "150" }]);
    expect((await client.keys.get(key.keyId, { apiKey: key.token })).budgetLimit).toBe("1000");
    const { data, meta } = await client.keys.update(key.keyId, { budgetLimit: 350n }).withResponse();
    expect(data).toMatchObject({ budgetLimit: "350", budgetUsed: "200", budgetReserved: "150", budgetRemaining: "0", status: "exhausted" });
    expect(meta.budget).toEqual({ limit: 350n, used: 200n, reserved: 150n, remaining: 0n });
    expect((await client.keys.events(key.keyId)).events.map((ev) => ev.changes)).toEqual([{ budgetLimit: { from: "1000", to: "350" } }]);
  });

  it("bad fields are 400 naming them: unknown model, past expiry", async () => {
    const { client, key } = await owner();
    const e = await thrown(() => client.keys.update(key.keyId, { models: ["no-such-model"] }));
    expect([e.status, e.code, e.param]).toEqual([400, "invalid_request", "models"]);
    const past = await thrown(() => client.keys.update(key.keyId, { expiresAt: gw.clock.now() - 1 }));
    expect([past.status, past.code, past.param]).toEqual([400, "invalid_request", "expiresAt"]);
  });
});

describe("keys.rotate", () => {
  it("a new token for the same key; the old one works through the grace, then 401 key_rotated", async () => {
    const { client, key } = await owner();
    const open = await client.payments.prepare({ ...PREPARE, maxAmountWei: 100n }, { apiKey: key.token });
    await expectError(client, () => client.keys.rotate(key.keyId, {}, { apiKey: key.token }), PermissionDeniedError, 403, "forbidden");

    const rotated = await client.keys.rotate(key.keyId);
    expect(client.calls.at(-1)!.headers.authorization).toBe(`Bearer ${client.session.token}`);
    expect(rotated).toMatchObject({
      keyId: key.keyId,
      budgetReserved: "100",
      token: expect.stringMatching(/^svc-/),
      previousTokenValidUntil: gw.clock.now() + 3_600_000,
    });
    expect(rotated.token).not.toBe(key.token);
    // In the grace both tokens work; the intent made before settles with the new token.
    expect((await client.keys.get(key.keyId, { apiKey: key.token })).previousTokenValidUntil).toBe(rotated.previousTokenValidUntil);
    await client.payments.settle({ paymentIntentId: open.paymentIntentId, finalAmountWei: 40n }, { apiKey: rotated.token });
    gw.clock.advance(3_600_000 - 1);
    expect((await client.keys.get(key.keyId, { apiKey: key.token })).budgetUsed).toBe("40");
    gw.clock.advance(1);
    await expectError(client, () => client.keys.get(key.keyId, { apiKey: key.token }), AuthenticationError, 401, "key_rotated");
    const view = await client.keys.get(key.keyId, { apiKey: rotated.token });
    expect(view).not.toHaveProperty("previousTokenValidUntil");
  });

  it("graceSeconds: 0 ends the old token at once; rotating again drops the older token", async () => {
    const { client, key } = await owner();
    const first = await client.keys.rotate(key.keyId, { graceSeconds: 300 });
    expect(JSON.parse(client.calls.at(-1)!.body!)).toEqual({ graceSeconds: 300 });
    const second = await client.keys.rotate(key.keyId, { graceSeconds: 0 });
    expect(second.previousTokenValidUntil).toBe(gw.clock.now());
    const payer = gw.client({ networkId: CHAIN, maxRetries: 2 });
    expect((await payer.keys.get(key.keyId, { apiKey: second.token })).keyId).toBe(key.keyId);
    const intent = await payer.payments.prepare({ ...PREPARE, maxAmountWei: 5n }, { apiKey: second.token });
    expect(intent.status).toBe("authorized");
    // The token the second rotation replaced, with no grace: key_rotated at once.
    const e = await expectError(
      payer,
      () => payer.payments.prepare({ ...PREPARE, maxAmountWei: 1n }, { apiKey: first.token }),
      AuthenticationError,
      401,
      "key_rotated",
    );
    expect(e.type).toBe("authentication_error");
    await expectError(payer, () => payer.keys.get(key.keyId, { apiKey: first.token }), AuthenticationError, 401, "key_rotated");
    // The original token, though its 300 s are not over, is dropped by the second rotation: only one
    // previous token is kept, and a dropped one is unknown to the gateway (invalid_key).
    await expectError(payer, () => payer.payments.prepare({ ...PREPARE, maxAmountWei: 1n }, { apiKey: key.token }), AuthenticationError, 401, "invalid_key");
    const bad = await thrown(() => client.keys.rotate(key.keyId, { graceSeconds: 604_801 }));
    expect([bad.status, bad.param]).toEqual([400, "graceSeconds"]);
  });
});

describe("keys.events", () => {
  it("newest first in pages; who changed what; a sibling key reads them, another wallet's key cannot", async () => {
    const { client, key } = await owner({ name: "a" });
    const sibling = await client.keys.create({ budgetLimit: 10n, expiresAt: gw.clock.now() + DAY, purpose: "api" });
    const wallet = `wallet:${client.address}`;
    gw.clock.advance(1);
    await client.keys.update(key.keyId, { name: "b" }, { apiKey: key.token });
    gw.clock.advance(1);
    await client.keys.update(key.keyId, { budgetLimit: 2000n, budgetPeriod: "monthly" });
    gw.clock.advance(1);
    // A patch that changes nothing records nothing.
    await client.keys.update(key.keyId, { budgetLimit: 2000n });
    const rotated = await client.keys.rotate(key.keyId, { graceSeconds: 60 });
    gw.clock.advance(1);
    await client.keys.update(key.keyId, { models: ["openai/*"] });

    const page1 = await client.keys.events(key.keyId, { limit: 2 });
    const sent = client.calls.at(-1)!;
    expect([sent.method, new URL(sent.url).pathname + new URL(sent.url).search]).toEqual(["GET", `/api/keys/${key.keyId}/events?limit=2`]);
    expect(page1.next_cursor).toEqual(expect.any(String));
    const page2 = await client.keys.events(key.keyId, { limit: 2, cursor: page1.next_cursor! });
    expect(page2.next_cursor).toBeNull();
    const all: KeyEvent[] = [...page1.events, ...page2.events];
    expect(all.map((e) => [e.type, e.actor, Object.keys(e.changes).sort()])).toEqual([
      ["update", wallet, ["models"]],
      ["rotate", wallet, ["previousTokenValidUntil"]],
      ["update", wallet, ["budgetLimit", "budgetPeriod"]],
      ["update", `key:${key.keyId}`, ["name"]],
    ]);
    expect(all.every((e) => e.keyId === key.keyId && /^kev_/.test(e.eventId))).toBe(true);
    expect(all.map((e) => e.at)).toEqual([...all.map((e) => e.at)].sort((x, y) => y - x));
    expect(all[0]!.changes).toEqual({ models: { from: null, to: ["openai/*"] } });
    expect(all[1]!.changes).toEqual({ previousTokenValidUntil: { from: null, to: rotated.previousTokenValidUntil } });
    expect(all[2]!.changes).toEqual({ budgetLimit: { from: "1000", to: "2000" }, budgetPeriod: { from: null, to: "monthly" } });
    expect(all[3]!.changes).toEqual({ name: { from: "a", to: "b" } });
    expect(JSON.stringify(all)).not.toContain("svc-");

    // A live key of the owner reads them (the key itself, with its new token, or a sibling).
    expect((await client.keys.events(key.keyId, {}, { apiKey: sibling.token })).events).toEqual(all);
    expect((await client.keys.events(key.keyId, { limit: 1 }, { apiKey: rotated.token })).events).toEqual([all[0]]);
    const stranger = await owner();
    await expectError(
      stranger.client,
      () => stranger.client.keys.events(key.keyId, {}, { apiKey: stranger.key.token }),
      PermissionDeniedError,
      403,
      "forbidden",
    );
    await expectError(stranger.client, () => stranger.client.keys.events(key.keyId), PermissionDeniedError, 403, "forbidden");
    const bad = await thrown(() => client.keys.events(key.keyId, { cursor: "nope" }));
    expect([bad.status, bad.param]).toEqual([400, "cursor"]);
  });
});

describe("allow-lists and per-model caps on paid calls", () => {
  it("a model outside the key's models is a PermissionDeniedError model_not_allowed before any reservation", async () => {
    const { client, key } = await owner({ budgetLimit: 100_000_000n, models: ["text-embedding-3-large", "anthropic/*"] });
    const payer: Client = gw.client({ apiKey: key.token, maxRetries: 2 });
    const e = await expectError(
      payer,
      () => payer.embeddings.create({ model: "text-embedding-3-small", input: "hello" }),
      PermissionDeniedError,
      403,
      "model_not_allowed",
      "model",
    );
    expect(e.type).toBe("permission_error");
    expect(e.details).toMatchObject({
      keyId: key.keyId,
      model: "text-embedding-3-small",
      provider: "openai",
      allowed: ["text-embedding-3-large", "anthropic/*"],
    });
    expect(await client.keys.get(key.keyId, { apiKey: key.token })).toMatchObject({ budgetUsed: "0", budgetReserved: "0" });
    // The owner widens the list; the same call goes through.
    await client.keys.update(key.keyId, { models: ["openai/*"] });
    const { meta } = await payer.embeddings.create({ model: "text-embedding-3-small", input: "hello" }).withResponse();
    expect(meta.receipt?.subject).toBe("openai:text-embedding-3-small");
  });

  it("past a per-model cap a call is a PaymentRequiredError model_budget_exhausted; the view shows the cap's counters", async () => {
    const { client, key } = await owner({ budgetLimit: 100_000_000n, modelBudgets: { "text-embedding-3-small": 3n } });
    const payer: Client = gw.client({ apiKey: key.token });
    const first = await payer.embeddings.create({ model: "text-embedding-3-small", input: "hello" }).withResponse();
    const cost = BigInt(first.meta.receipt!.finalAmountWei);
    expect(cost).toBeLessThanOrEqual(3n);
    let refused: any;
    for (let i = 0; i < 5 && !refused; i++)
      refused = await payer.embeddings.create({ model: "text-embedding-3-small", input: "hello" }).then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(PaymentRequiredError);
    expect([refused.status, refused.code, refused.details.scope]).toEqual([402, "model_budget_exhausted", "text-embedding-3-small"]);
    const view = await client.keys.get(key.keyId, { apiKey: key.token });
    const cap = view.modelBudgets!["text-embedding-3-small"]!;
    expect([cap.limit, cap.reserved]).toEqual(["3", "0"]);
    expect(BigInt(cap.used) + BigInt(cap.remaining)).toBe(3n);
    expect(view.budgetUsed).toBe(cap.used);
  });
});
