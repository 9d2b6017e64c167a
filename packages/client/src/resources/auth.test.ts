/**
 * `client.auth` (Sign-In with Ethereum wallet sessions) and the wallet proofs of the wallet
 * routes, against a real gateway on a port; wallets are viem local accounts with fixed keys.
 */
import { privateKeyToAccount } from "viem/accounts";
import { parseSiweMessage } from "viem/siwe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AuthenticationError,
  BadRequestError,
  buildSiweMessage,
  DEFAULT_SIGN_IN_STATEMENT,
  PermissionDeniedError,
  RateLimitError,
  TollgateError,
  UnsupportedMediaTypeError,
  type TollgateClient,
} from "../index.js";
import { CHAIN, DAY, startGateway, thrown, type Seen, type TestGateway } from "../testing/harness.js";

// Well-known development keys (never funded anywhere that matters).
const ALICE = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const BOB = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const SECRET = "internal-secret-of-the-host-app";
const PREPARE = { service: "inference", action: "chat", resource: "r", method: "POST", maxAmountWei: 1n } as const;

type Client = TollgateClient & { calls: Seen[] };
type Account = typeof ALICE;

let gw: TestGateway;
let host: string;
beforeAll(async () => {
  gw = await startGateway({ internalSecret: SECRET });
  host = new URL(gw.url).host;
});
afterAll(() => gw?.close());

const signer = (account: Account) => (message: string) => account.signMessage({ message });
const signIn = (client: Client, account: Account, extra: { useToken?: boolean } = {}) =>
  client.auth.signIn({ address: account.address.toLowerCase(), chainId: CHAIN, signMessage: signer(account), issuedAt: new Date(gw.clock.now()), ...extra });
const future = () => gw.clock.now() + DAY;

/** Asserts an error of `Class` with `status`/`code`, sent once (never retried). */
async function expectError(client: Client, call: () => unknown, Class: typeof TollgateError, status: number, code: string) {
  const before = client.calls.length;
  const e = await thrown(call);
  expect(e).toBeInstanceOf(Class);
  expect([e.status, e.code]).toEqual([status, code]);
  expect(client.calls.length - before).toBe(1);
  return e;
}

describe("auth.signIn", () => {
  it("asks a nonce, has the wallet sign an EIP-4361 message for the gateway's host, verifies; later wallet calls send the session", async () => {
    const client: Client = gw.client({ networkId: CHAIN, maxRetries: 0 });
    const signed = await signIn(client, ALICE);
    expect(signed).toEqual({
      token: expect.stringMatching(/^sess_[A-Za-z0-9_-]{43}$/),
      address: ALICE.address.toLowerCase(),
      chainId: CHAIN,
      signer: "eoa",
      createdAt: gw.clock.now(),
      expiresAt: gw.clock.now() + DAY,
    });
    expect(client.calls.map((c) => `${c.method} ${new URL(c.url).pathname}`)).toEqual(["POST /api/auth/nonce", "POST /api/auth/verify"]);
    expect(JSON.parse(client.calls[0]!.body!)).toEqual({ address: ALICE.address.toLowerCase(), chainId: CHAIN });
    const { message, signature } = JSON.parse(client.calls[1]!.body!) as { message: string; signature: `0x${string}` };
    expect(parseSiweMessage(message)).toMatchObject({
      domain: host,
      address: ALICE.address, // EIP-55, though the wallet gave it lower-case
      statement: DEFAULT_SIGN_IN_STATEMENT,
      uri: new URL(gw.url).origin,
      version: "1",
      chainId: CHAIN,
      issuedAt: new Date(gw.clock.now()),
    });
    expect(signature).toBe(await ALICE.signMessage({ message }));

    const key = await client.keys.create({ budgetLimit: 10n, expiresAt: future(), purpose: "api" });
    expect(client.calls.at(-1)!.headers.authorization).toBe(`Bearer ${signed.token}`);
    expect((await client.keys.list()).keys.map((k) => k.keyId)).toContain(key.keyId);
    expect(await client.auth.session()).toEqual({
      address: ALICE.address.toLowerCase(),
      chainId: CHAIN,
      signer: "eoa",
      createdAt: gw.clock.now(),
      expiresAt: signed.expiresAt,
    });
  });

  it("nonce + verify by hand: an HttpOnly cookie that proves the wallet alone; the nonce is single use; refusals are 401 wallet_unverified, garbage 400", async () => {
    const client: Client = gw.client({ maxRetries: 2 });
    const address = BOB.address.toLowerCase();
    const issued = await client.auth.nonce({ address, chainId: CHAIN });
    expect(issued).toEqual({ nonce: expect.stringMatching(/^[A-Za-z0-9]{8,}$/), expiresAt: gw.clock.now() + 10 * 60_000 });
    const fields = { domain: host, address, uri: gw.url, chainId: CHAIN, issuedAt: new Date(gw.clock.now()) };
    const message = buildSiweMessage({ ...fields, nonce: issued.nonce });
    const signature = await BOB.signMessage({ message });
    const { data, meta } = await client.auth.verify({ message, signature }).withResponse();
    expect(data).toMatchObject({ token: expect.stringMatching(/^sess_/), address, chainId: CHAIN });
    const cookie = meta.headers.get("set-cookie")!;
    expect(cookie.split("; ")[0]).toBe(`tollgate_session=${data.token}`);
    expect(cookie.split("; ").slice(1)).toEqual(expect.arrayContaining(["HttpOnly", "Path=/", "SameSite=Lax", `Max-Age=${DAY / 1000}`]));

    // A browser sends only the cookie: it proves the wallet on its own.
    const browser: Client = gw.client({ headers: { cookie: `tollgate_session=${data.token}` } });
    expect((await browser.auth.session()).address).toBe(address);
    expect(await browser.keys.list()).toEqual({ keys: [], next_cursor: null });

    // The same signed message again: its nonce is spent. Not retried (verify never is).
    const replay = await expectError(client, () => client.auth.verify({ message, signature }), AuthenticationError, 401, "wallet_unverified");
    expect(replay.message).toMatch(/nonce/i);
    const other = await client.auth.nonce({ address, chainId: CHAIN });
    const forEvil = buildSiweMessage({ ...fields, domain: "evil.example.com", nonce: other.nonce });
    await expectError(client, () => client.auth.verify({ message: forEvil, signature: "0x" }), BadRequestError, 400, "invalid_request");
    await expectError(
      client,
      async () => client.auth.verify({ message: forEvil, signature: await BOB.signMessage({ message: forEvil }) }),
      AuthenticationError,
      401,
      "wallet_unverified",
    );
    const ownNonce = buildSiweMessage({ ...fields, nonce: other.nonce });
    await expectError(
      client,
      async () => client.auth.verify({ message: ownNonce, signature: await ALICE.signMessage({ message: ownNonce }) }),
      AuthenticationError,
      401,
      "wallet_unverified",
    );
    const bad = await expectError(client, () => client.auth.verify({ message: "not a SIWE message", signature }), BadRequestError, 400, "invalid_request");
    expect(bad.param).toBe("message");

    const late = await client.auth.nonce({ address, chainId: CHAIN });
    gw.clock.advance(10 * 60_000 + 1);
    const expired = buildSiweMessage({ ...fields, issuedAt: new Date(gw.clock.now()), nonce: late.nonce });
    await expectError(
      client,
      async () => client.auth.verify({ message: expired, signature: await BOB.signMessage({ message: expired }) }),
      AuthenticationError,
      401,
      "wallet_unverified",
    );
  });

  it("a wallet that refuses to sign rejects with its own error, and nothing is verified", async () => {
    const client: Client = gw.client();
    const refusal = Object.assign(new Error("User rejected the request."), { code: 4001 });
    const e = await thrown(() => client.auth.signIn({ address: ALICE.address, chainId: CHAIN, signMessage: () => Promise.reject(refusal) }));
    expect(e).toBe(refusal);
    expect(client.calls.map((c) => new URL(c.url).pathname)).toEqual(["/api/auth/nonce"]);
  });
});

describe("wallet proofs", () => {
  it("session for everything; a key of the wallet for reads but not to create keys; the internal secret with the header; nothing is 401", async () => {
    const alice: Client = gw.client({ networkId: CHAIN });
    await signIn(alice, ALICE);
    const key = await alice.keys.create({ budgetLimit: 100n, expiresAt: future(), purpose: "session" });
    const byKey: Client = gw.client({ apiKey: key.token, networkId: CHAIN });
    expect((await byKey.keys.list()).keys.map((k) => k.keyId)).toContain(key.keyId);
    expect((await byKey.payments.list()).intents).toEqual([]);
    expect(await byKey.settlement.status()).toMatchObject({ hasActiveBudget: true, budget: { keyId: key.keyId } });
    const mint = await expectError(
      byKey,
      () => byKey.keys.create({ budgetLimit: 1n, expiresAt: future(), purpose: "api" }),
      PermissionDeniedError,
      403,
      "forbidden",
    );
    expect(mint.type).toBe("permission_error");

    // The header may name the proven wallet (any case), never another one.
    expect(await alice.keys.list({ limit: 1 }, { sessionAddress: ALICE.address })).toMatchObject({ keys: [{ keyId: key.keyId }] });
    await expectError(alice, () => alice.keys.list({}, { sessionAddress: BOB.address }), PermissionDeniedError, 403, "forbidden");
    const claim: Client = gw.client({ sessionAddress: ALICE.address, networkId: CHAIN });
    await expectError(claim, () => claim.keys.list(), AuthenticationError, 401, "wallet_unverified");
    await expectError(claim, () => claim.keys.list({}, { sessionAddress: null }), AuthenticationError, 401, "authentication_required");

    // A server-side host app acts for the wallet it names with the internal secret.
    const host: Client = gw.client({ internalSecret: SECRET, sessionAddress: BOB.address, networkId: CHAIN });
    const forBob = await host.keys.create({ budgetLimit: 5n, expiresAt: future(), purpose: "api", name: "made by the host app" });
    expect((await host.keys.list()).keys.map((k) => k.keyId)).toEqual([forBob.keyId]);
    await expectError(host, () => host.keys.list({}, { internalSecret: "wrong-secret-of-16+" }), AuthenticationError, 401, "unauthorized");
    await expectError(host, () => host.keys.list({}, { sessionAddress: null }), AuthenticationError, 401, "authentication_required");
  });

  it("wallet routes send the session token, billed routes the api key; a call's own apiKey or a null sessionToken switch it", async () => {
    const alice: Client = gw.client({ networkId: CHAIN });
    const { token: session } = await signIn(alice, ALICE);
    const key = await alice.keys.create({ budgetLimit: 1000n, expiresAt: future(), purpose: "api" });
    const both: Client = gw.client({ apiKey: key.token, sessionToken: session, networkId: CHAIN });
    const bearerOf = async (call: () => PromiseLike<unknown>) => {
      await call();
      return both.calls.at(-1)!.headers.authorization;
    };
    expect(await bearerOf(() => both.keys.list())).toBe(`Bearer ${session}`);
    expect(await bearerOf(() => both.payments.list())).toBe(`Bearer ${session}`);
    expect(await bearerOf(() => both.settlement.status())).toBe(`Bearer ${session}`);
    expect(await bearerOf(() => both.auth.session())).toBe(`Bearer ${session}`);
    expect(await bearerOf(() => both.payments.prepare(PREPARE))).toBe(`Bearer ${key.token}`);
    expect(await bearerOf(() => both.keys.get(key.keyId))).toBe(`Bearer ${key.token}`);
    expect(await bearerOf(() => both.keys.list({}, { apiKey: key.token }))).toBe(`Bearer ${key.token}`);
    expect(await bearerOf(() => both.keys.list({}, { sessionToken: null }))).toBe(`Bearer ${key.token}`);
    expect(await bearerOf(() => both.models.list({ limit: 1 }))).toBe(`Bearer ${key.token}`);
    // Feedback takes the key first, the session when there is no key.
    const target = { targetType: "model", targetId: "gpt-4o-mini" };
    expect(await bearerOf(() => both.feedback.create({ ...target, rating: 4 }))).toBe(`Bearer ${key.token}`);
    expect(await bearerOf(() => both.feedback.create({ ...target, rating: 4 }, { apiKey: null }))).toBe(`Bearer ${session}`);
    expect(both.calls.every((c) => c.headers["x-session-user-address"] === undefined)).toBe(true);
  });
});

describe("auth.signOut", () => {
  it("ends the session and clears the cookie; the client forgets the token; the old token is refused; signing out again is harmless", async () => {
    const client: Client = gw.client({ networkId: CHAIN, maxRetries: 0 });
    const { token } = await signIn(client, ALICE);
    const { data, meta } = await client.auth.signOut().withResponse();
    expect(data).toMatchObject({ success: true });
    expect(client.calls.at(-1)!.headers.authorization).toBe(`Bearer ${token}`);
    const cleared = meta.headers.get("set-cookie")!;
    expect(cleared).toMatch(/^tollgate_session=;/);
    expect(cleared).toContain("Max-Age=0");
    await expectError(client, () => client.keys.list(), AuthenticationError, 401, "authentication_required");
    expect(client.calls.at(-1)!.headers.authorization).toBeUndefined();
    const stale: Client = gw.client({ sessionToken: token, maxRetries: 0 });
    await expectError(stale, () => stale.keys.list(), AuthenticationError, 401, "wallet_unverified");
    await expectError(stale, () => stale.auth.session(), AuthenticationError, 401, "wallet_unverified");
    expect(await stale.auth.signOut()).toMatchObject({ success: true });
  });

  it("useToken: false leaves the client as it was (a page that relies on the cookie); signing out another token keeps the client's; sessions expire", async () => {
    const client: Client = gw.client({ networkId: CHAIN, maxRetries: 0 });
    const { token } = await signIn(client, BOB, { useToken: false });
    await expectError(client, () => client.keys.list(), AuthenticationError, 401, "authentication_required");
    expect((await client.auth.session({ sessionToken: token })).address).toBe(BOB.address.toLowerCase());

    const { token: own } = await signIn(client, ALICE);
    expect(await client.auth.signOut({ sessionToken: token })).toMatchObject({ success: true });
    expect(client.calls.at(-1)!.headers.authorization).toBe(`Bearer ${token}`);
    expect((await client.auth.session()).address).toBe(ALICE.address.toLowerCase());
    expect(client.calls.at(-1)!.headers.authorization).toBe(`Bearer ${own}`);

    gw.clock.advance(DAY);
    await expectError(client, () => client.auth.session(), AuthenticationError, 401, "wallet_unverified");
  });
});

describe("rate limits and content type", () => {
  it("a key's rateLimit is in its view; over it a RateLimitError carries the x-ratelimit-* numbers and Retry-After", async () => {
    const alice: Client = gw.client({ networkId: CHAIN });
    await signIn(alice, ALICE);
    const key = await alice.keys.create({ budgetLimit: 1000n, expiresAt: future(), purpose: "api", rateLimit: { requestsPerMinute: 2 } });
    expect(key.rateLimit).toEqual({ requestsPerMinute: 2 });
    expect(JSON.parse(alice.calls.at(-1)!.body!)).toMatchObject({ rateLimit: { requestsPerMinute: 2 } });
    expect((await alice.keys.list()).keys.find((k) => k.keyId === key.keyId)?.rateLimit).toEqual({ requestsPerMinute: 2 });

    const payer: Client = gw.client({ apiKey: key.token, networkId: CHAIN, maxRetries: 0 });
    const first = await payer.payments.prepare(PREPARE).withResponse();
    expect(first.meta.rateLimit).toEqual({ limit: 2, remaining: 1, resetSeconds: 60 });
    await payer.payments.prepare(PREPARE);
    const e = await expectError(payer, () => payer.payments.prepare(PREPARE), RateLimitError, 429, "rate_limited");
    expect(e.rateLimit).toEqual({ limit: 2, remaining: 0, resetSeconds: 60 });
    expect(e.headers.get("retry-after")).toBe("60");
    gw.clock.advance(60_000);
    expect((await payer.payments.prepare(PREPARE)).status).toBe("authorized");
  });

  it("a JSON body sent as another type is a 415 UnsupportedMediaTypeError (the client's own calls always say application/json)", async () => {
    const client: Client = gw.client();
    const e = await expectError(
      client,
      () =>
        client.request(
          { method: "POST", path: "/api/auth/nonce", body: { address: ALICE.address, chainId: CHAIN } },
          { headers: { "content-type": "text/plain" } },
        ),
      UnsupportedMediaTypeError,
      415,
      "unsupported_media_type",
    );
    expect(e.type).toBe("invalid_request_error");
    expect(client.calls[0]!.headers["content-type"]).toBe("text/plain");
  });
});
