/**
 * The service-key route suite (docs/payments.md "Service keys"): every test drives a real store through
 * `gateway.fetch`. A store's test file runs it in one line:
 *
 * ```ts
 * runKeyRouteSuite("sqlite", { createStore: () => createSqliteStore({ filename: tmpFile() }) });
 * ```
 */
import { describe, expect, it } from "vitest";
import {
  asWallet,
  bearer,
  budgetOf,
  CHAIN,
  DAY,
  expectBudget,
  expectError,
  OTHER,
  OWNER,
  OWNER_MIXED,
  UNKNOWN_TOKEN,
  withGateway,
  type GatewaySuiteOptions,
  type Harness,
} from "./gateway-suite-fixtures.js";

const TOKEN = /^svc-[A-Za-z0-9_-]{43}$/;
/** Names and proves the owner wallet (the internal secret, as a host app does). */
const owner = (address = OWNER) => asWallet(address);
/** The owner-wallet header alone, which proves nothing. */
const headerOnly = (address = OWNER) => ({ "x-session-user-address": address });

/** Registers the key route suite for the store `name` in the current vitest file. */
export function runKeyRouteSuite(name: string, options: GatewaySuiteOptions): void {
  const test = (title: string, fn: (h: Harness) => Promise<void>, extra = {}) => it(title, () => withGateway(options, fn, extra));

  describe(`key routes: ${name}`, () => {
    describe("create", () => {
      test("201 with a svc- token shown once; list and inspect carry no token", async (h) => {
        const now = h.clock.now();
        const r = await h.call("POST", "/api/keys", {
          headers: { ...owner(OWNER_MIXED), "x-request-id": "trace.42:a-b" },
          body: { budgetLimit: 5000, expiresAt: String(now + DAY), networkId: String(CHAIN), purpose: "session", name: "  my agent " },
        });
        expect(r.status).toBe(201);
        expect(r.headers.get("x-request-id")).toBe("trace.42:a-b");
        expect(r.body).toEqual({
          keyId: expect.stringMatching(/^key_/),
          token: expect.stringMatching(TOKEN),
          name: "my agent",
          purpose: "session",
          chainId: CHAIN,
          budgetLimit: "5000",
          budgetUsed: "0",
          budgetReserved: "0",
          budgetRemaining: "5000",
          status: "active",
          createdAt: now,
          expiresAt: now + DAY,
        });
        expect(budgetOf(r)).toEqual({ limit: "5000", used: "0", reserved: "0", remaining: "5000" });
        const { token, keyId } = r.body;
        // Listed under the lower-case owner; no token material anywhere after creation.
        const list = await h.call("GET", "/api/keys", { headers: owner(OWNER) });
        expect(list.status).toBe(200);
        const { token: _t, ...view } = r.body;
        expect(list.body).toEqual({ keys: [view], next_cursor: null });
        // A live key of the wallet proves it for the list too.
        expect((await h.call("GET", "/api/keys", { headers: bearer(token) })).body).toEqual(list.body);
        const inspected = await h.inspect(token, keyId);
        expect(inspected).toEqual(view);
        for (const text of [JSON.stringify(list.body), JSON.stringify(inspected)]) {
          expect(text).not.toContain(token.slice(4));
          expect(text).not.toMatch(/token/i);
        }
        // A second key gets a different token.
        expect((await h.createKey()).token).not.toBe(token);
      });

      test('compat "compose" mints compose- tokens that authenticate', async (h) => {
        const key = await h.createKey();
        expect(key.token).toMatch(/^compose-[A-Za-z0-9_-]{43}$/);
        expect((await h.inspect(key.token, key.keyId)).keyId).toBe(key.keyId);
        expect((await h.prepare(key.token)).status).toBe(200);
      }, { compat: "compose" });

      test('compat "compose": no error message tells the client to send svc- tokens', async (h) => {
        const key = await h.createKey();
        for (const r of [
          await h.call("POST", "/api/keys/settle", { body: { amount: "1" } }),
          await h.call("POST", "/api/payments/prepare", { headers: { "x-network-id": String(CHAIN) }, body: { maxAmountWei: "1" } }),
          await h.call("GET", `/api/keys/${key.keyId}`),
        ]) {
          expectError(r, 401, "authentication_required");
          expect(r.body.error.message).not.toContain("svc-");
        }
        expect((await h.call("POST", "/api/keys/settle", { body: { amount: "1" } })).body.error.message).toContain("compose-");
      }, { compat: "compose" });

      test("owner header: missing → 401 authentication_required, unproven → 401 wallet_unverified, invalid → 400", async (h) => {
        const body = { budgetLimit: "10", expiresAt: h.clock.now() + DAY, networkId: CHAIN, purpose: "api" };
        expectError(await h.call("POST", "/api/keys", { body }), 401, "authentication_required");
        expectError(await h.call("POST", "/api/keys", { headers: headerOnly(), body }), 401, "wallet_unverified", "x-session-user-address");
        for (const bad of ["0x123", "not-an-address", "0xzz000000000000000000000000000000000000a1"])
          expectError(await h.call("POST", "/api/keys", { headers: owner(bad), body }), 400, "invalid_request", "x-session-user-address");
        expectError(await h.call("GET", "/api/keys"), 401, "authentication_required");
        expectError(await h.call("GET", "/api/keys", { headers: headerOnly() }), 401, "wallet_unverified", "x-session-user-address");
        expectError(await h.call("GET", "/api/keys", { headers: owner("0x1") }), 400, "invalid_request", "x-session-user-address");
        expect((await h.call("GET", "/api/keys", { headers: owner() })).body.keys).toEqual([]);
      });

      test("body errors → 400 naming the param; nothing is created", async (h) => {
        const now = h.clock.now();
        const valid = { budgetLimit: "1000", expiresAt: now + DAY, networkId: CHAIN, purpose: "api" };
        const cases: Array<[string, Record<string, unknown>]> = [
          ["budgetLimit", { budgetLimit: undefined }],
          ["budgetLimit", { budgetLimit: 0 }],
          ["budgetLimit", { budgetLimit: "0" }],
          ["budgetLimit", { budgetLimit: -5 }],
          ["budgetLimit", { budgetLimit: "-5" }],
          ["budgetLimit", { budgetLimit: "12a" }],
          ["budgetLimit", { budgetLimit: 1.5 }],
          ["budgetLimit", { budgetLimit: "1.5" }],
          ["budgetLimit", { budgetLimit: "" }],
          ["budgetLimit", { budgetLimit: null }],
          ["budgetLimit", { budgetLimit: 9007199254740993 }], // a JSON number above 2^53 is ambiguous
          ["expiresAt", { expiresAt: now - 1 }],
          ["expiresAt", { expiresAt: now }],
          ["expiresAt", { expiresAt: undefined }],
          ["expiresAt", { expiresAt: "tomorrow" }],
          ["networkId", { networkId: undefined }],
          ["networkId", { networkId: "abc" }],
          ["networkId", { networkId: 0 }],
          ["networkId", { networkId: -1 }],
          ["purpose", { purpose: "other" }],
          ["purpose", { purpose: undefined }],
          ["name", { name: "x".repeat(101) }],
        ];
        for (const [param, patch] of cases) {
          const body = JSON.parse(JSON.stringify({ ...valid, ...patch }));
          const r = await h.call("POST", "/api/keys", { headers: owner(), body });
          expect({ patch, status: r.status, param: r.body.error?.param }).toEqual({ patch, status: 400, param });
          expectError(r, 400, "invalid_request", param);
        }
        expectError(await h.call("POST", "/api/keys", { headers: owner(), raw: '{"budgetLimit": "1000",' }), 400, "invalid_request", null);
        expectError(await h.call("POST", "/api/keys", { headers: owner(), raw: "[1,2]" }), 400, "invalid_request");
        expectError(await h.call("POST", "/api/keys", { headers: owner() }), 400, "invalid_request");
        expect((await h.call("GET", "/api/keys", { headers: owner() })).body.keys).toEqual([]);
      });

      test("chainId is an alias of networkId; a digits string works too", async (h) => {
        expect((await h.createKey({ networkId: undefined, chainId: 10 })).chainId).toBe(10);
        expect((await h.createKey({ networkId: "137" })).chainId).toBe(137);
        expect((await h.createKey({ networkId: 5, chainId: 5 })).chainId).toBe(5);
      });

      test("amounts above 2^53 as digit strings are exact; a safe-integer JSON number works", async (h) => {
        const big = await h.createKey({ budgetLimit: "9007199254740993" });
        expect(big.budgetLimit).toBe("9007199254740993");
        expect(big.budgetRemaining).toBe("9007199254740993");
        expectBudget(await h.inspect(big.token, big.keyId), { limit: "9007199254740993", used: "0", reserved: "0" });
        const charged = await h.call("POST", "/api/keys/settle", { headers: bearer(big.token), body: { amount: "9007199254740992" } });
        expect(charged.status).toBe(200);
        expect(charged.body.budgetRemaining).toBe("1");
        expectBudget(await h.inspect(big.token, big.keyId), { limit: "9007199254740993", used: "9007199254740992", reserved: "0" });
        const safe = await h.createKey({ budgetLimit: Number.MAX_SAFE_INTEGER });
        expect(safe.budgetLimit).toBe(String(Number.MAX_SAFE_INTEGER));
      });
    });

    describe("list", () => {
      test("newest first, paged by limit and cursor; limit clamps to 1..200; a bad cursor is a 400", async (h) => {
        const ids: string[] = [];
        for (let i = 0; i < 201; i++) {
          ids.push((await h.createKey({ name: `k${i}` })).keyId);
          h.clock.advance(1);
        }
        await h.createKey({}, OTHER); // another owner's key is never listed
        const newestFirst = [...ids].reverse();
        const page = async (q: string) => {
          const r = await h.call("GET", `/api/keys${q}`, { headers: owner() });
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          return r.body as { keys: any[]; next_cursor: string | null };
        };
        const first = await page("");
        expect(first.keys.map((k) => k.keyId)).toEqual(newestFirst.slice(0, 50));
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const p: { keys: any[]; next_cursor: string | null } = await page(`?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
          expect(p.keys.length).toBeLessThanOrEqual(7);
          seen.push(...p.keys.map((k) => k.keyId));
          cursor = p.next_cursor;
        } while (cursor);
        expect(seen).toEqual(newestFirst);
        expect((await page("?limit=0")).keys.map((k) => k.keyId)).toEqual(newestFirst.slice(0, 1));
        const clamped = await page("?limit=10000");
        expect(clamped.keys).toHaveLength(200);
        expect(clamped.next_cursor).toEqual(expect.any(String));
        const rest = await page(`?limit=200&cursor=${encodeURIComponent(clamped.next_cursor!)}`);
        expect(rest).toEqual({ keys: [expect.objectContaining({ keyId: ids[0] })], next_cursor: null });
        // A time that is not a whole millisecond (PostgreSQL would refuse it as a bigint) is no cursor either.
        const fraction = Buffer.from(JSON.stringify([1.5, ""])).toString("base64url");
        for (const bad of ["?cursor=not-a-cursor", "?cursor=e30", `?cursor=${fraction}`]) expectError(await h.call("GET", `/api/keys${bad}`, { headers: owner() }), 400, "invalid_request", "cursor");
        // A limit that is not a number falls back to the default page size (50), as the clamp rules do.
        expect((await page("?limit=abc")).keys.map((k) => k.keyId)).toEqual(newestFirst.slice(0, 50));
      });

      test("derived status: active, revoked, expired, exhausted (expired keys stay listed)", async (h) => {
        const active = await h.createKey({ name: "active" });
        const revoked = await h.createKey({ name: "revoked" });
        const expired = await h.createKey({ name: "expired", expiresAt: h.clock.now() + 1000 });
        const spent = await h.createKey({ name: "spent", budgetLimit: "50" });
        const reserved = await h.createKey({ name: "reserved", budgetLimit: "300" });
        expect((await h.call("DELETE", `/api/keys/${revoked.keyId}`, { headers: bearer(revoked.token) })).status).toBe(200);
        expect((await h.call("POST", "/api/keys/settle", { headers: bearer(spent.token), body: { amount: "50" } })).status).toBe(200);
        expect((await h.prepare(reserved.token)).status).toBe(200);
        h.clock.advance(1000);
        const list = (await h.call("GET", "/api/keys", { headers: owner() })).body.keys as any[];
        const status = Object.fromEntries(list.map((k) => [k.name, k.status]));
        expect(status).toEqual({ active: "active", revoked: "revoked", expired: "expired", spent: "exhausted", reserved: "exhausted" });
        // An expired key is inspected through a live sibling (as a bearer it is 401 key_expired).
        expect((await h.inspect(active.token, expired.keyId)).status).toBe("expired");
        expect((await h.inspect(active.token, active.keyId)).status).toBe("active");
      });
    });

    describe("inspect and revoke", () => {
      test("with the key's own token while it is live; once revoked or expired its own token is 401 (the key status table of docs/api.md)", async (h) => {
        const key = await h.createKey();
        const sibling = await h.createKey({ name: "sibling" });
        expect((await h.inspect(key.token, key.keyId)).status).toBe("active");
        const r = await h.call("DELETE", `/api/keys/${key.keyId}`, { headers: bearer(key.token) });
        expect(r.status).toBe(200);
        expect(r.body).toEqual({ success: true, keyId: key.keyId, revokedAt: h.clock.now() });
        const revokedAt = h.clock.now();
        h.clock.advance(5000);
        // Inspect and revoke (again) with the revoked key itself: 401 key_revoked, nothing changes.
        expectError(await h.call("GET", `/api/keys/${key.keyId}`, { headers: bearer(key.token) }), 401, "key_revoked");
        expectError(await h.call("DELETE", `/api/keys/${key.keyId}`, { headers: bearer(key.token) }), 401, "key_revoked");
        // A live sibling sees it revoked, and revoking again through it answers the first revocation.
        expect(await h.inspect(sibling.token, key.keyId)).toMatchObject({ keyId: key.keyId, status: "revoked", revokedAt });
        expect((await h.call("DELETE", `/api/keys/${key.keyId}`, { headers: bearer(sibling.token) })).body).toEqual(r.body);
        // An expired key cannot inspect or revoke itself either.
        const brief = await h.createKey({ expiresAt: h.clock.now() + 10 });
        h.clock.advance(10);
        expectError(await h.call("GET", `/api/keys/${brief.keyId}`, { headers: bearer(brief.token) }), 401, "key_expired");
        expectError(await h.call("DELETE", `/api/keys/${brief.keyId}`, { headers: bearer(brief.token) }), 401, "key_expired");
        expect(await h.inspect(sibling.token, brief.keyId)).toMatchObject({ status: "expired" });
        expect((await h.inspect(sibling.token, brief.keyId)).revokedAt).toBeUndefined();
      });

      test("an expired intent is released on read: inspect and list show it unreserved before any later prepare", async (h) => {
        const key = await h.createKey({ budgetLimit: "1000" });
        const sibling = await h.createKey({ name: "sibling" });
        const prepared = await h.prepare(key.token);
        expect(prepared.status).toBe(200);
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "300" });
        h.clock.advance(60_000 - 1);
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "0", reserved: "300" });
        h.clock.advance(1);
        // Listing first: the list itself releases the overdue intent.
        const listed = (await h.call("GET", "/api/keys", { headers: owner() })).body.keys.find((k: any) => k.keyId === key.keyId);
        expectBudget(listed, { limit: "1000", used: "0", reserved: "0" });
        const inspected = await h.call("GET", `/api/keys/${key.keyId}`, { headers: bearer(sibling.token) });
        expectBudget(inspected.body, { limit: "1000", used: "0", reserved: "0" });
        expect(budgetOf(inspected)).toEqual({ limit: "1000", used: "0", reserved: "0", remaining: "1000" });
        // Inspect alone releases too (a second key, never listed after its intent expired).
        const other = await h.createKey({ budgetLimit: "500" });
        expect((await h.prepare(other.token)).status).toBe(200);
        h.clock.advance(60_000);
        expectBudget(await h.inspect(other.token, other.keyId), { limit: "500", used: "0", reserved: "0" });
      }, { intentTtlMs: 60_000 });

      test("with a sibling active key of the same owner; revoking twice returns the same revokedAt", async (h) => {
        const target = await h.createKey({ name: "target" });
        const sibling = await h.createKey({ name: "sibling" });
        expect((await h.inspect(sibling.token, target.keyId)).name).toBe("target");
        const revokedAt = h.clock.now();
        const first = await h.call("DELETE", `/api/keys/${target.keyId}`, { headers: bearer(sibling.token) });
        expect(first.body).toEqual({ success: true, keyId: target.keyId, revokedAt });
        h.clock.advance(60_000);
        const second = await h.call("DELETE", `/api/keys/${target.keyId}`, { headers: bearer(sibling.token) });
        expect(second.status).toBe(200);
        expect(second.body).toEqual(first.body);
        expect(await h.inspect(sibling.token, target.keyId)).toMatchObject({ status: "revoked", revokedAt });
        // The sibling itself is untouched; a revoked or expired key cannot act for its siblings.
        expect((await h.inspect(sibling.token, sibling.keyId)).status).toBe("active");
        expectError(await h.call("GET", `/api/keys/${sibling.keyId}`, { headers: bearer(target.token) }), 401, "key_revoked");
        const shortLived = await h.createKey({ expiresAt: h.clock.now() + 10 });
        h.clock.advance(10);
        expectError(await h.call("DELETE", `/api/keys/${sibling.keyId}`, { headers: bearer(shortLived.token) }), 401, "key_expired");
        expect((await h.inspect(sibling.token, sibling.keyId)).status).toBe("active");
      });

      test("another owner's key → 403; unknown key → 404; bad or missing token → 401; a bare token works", async (h) => {
        const mine = await h.createKey();
        const theirs = await h.createKey({}, OTHER);
        for (const method of ["GET", "DELETE"]) {
          expectError(await h.call(method, `/api/keys/${theirs.keyId}`, { headers: bearer(mine.token) }), 403, "forbidden");
          expectError(await h.call(method, "/api/keys/key_doesnotexist", { headers: bearer(mine.token) }), 404, "key_not_found");
          expectError(await h.call(method, `/api/keys/${mine.keyId}`, { headers: bearer(UNKNOWN_TOKEN) }), 401, "invalid_key");
          expectError(await h.call(method, `/api/keys/${mine.keyId}`, { headers: bearer("svc-short") }), 401, "invalid_key");
          expectError(await h.call(method, `/api/keys/${mine.keyId}`), 401, "authentication_required");
        }
        expect(await h.inspect(theirs.token, theirs.keyId)).toMatchObject({ status: "active" });
        const bare = await h.call("GET", `/api/keys/${mine.keyId}`, { headers: { authorization: mine.token } });
        expect(bare.status).toBe(200);
        expect(bare.body.keyId).toBe(mine.keyId);
        expect(budgetOf(bare)).toEqual({ limit: "1000", used: "0", reserved: "0", remaining: "1000" });
        const lower = await h.call("GET", `/api/keys/${mine.keyId}`, { headers: { authorization: `bearer ${mine.token}` } });
        expect(lower.status).toBe(200);
        expectError(await h.call("PUT", `/api/keys/${mine.keyId}`, { headers: bearer(mine.token) }), 405, "method_not_allowed");
      });

      test("the owner's wallet proof revokes without a key; another wallet's proof is 403 and changes nothing", async (h) => {
        const key = await h.createKey({ name: "by wallet" });
        const theirs = await h.createKey({}, OTHER);
        expectError(await h.call("DELETE", `/api/keys/${theirs.keyId}`, { headers: owner() }), 403, "forbidden");
        expect(await h.inspect(theirs.token, theirs.keyId)).toMatchObject({ status: "active" });
        expectError(await h.call("DELETE", "/api/keys/key_doesnotexist", { headers: owner() }), 404, "key_not_found");
        // The header alone (no session, no secret) proves nothing.
        expectError(await h.call("DELETE", `/api/keys/${key.keyId}`, { headers: { "x-session-user-address": OWNER } }), 401, "wallet_unverified");
        expect(await h.inspect(key.token, key.keyId)).toMatchObject({ status: "active" });
        const revokedAt = h.clock.now();
        const r = await h.call("DELETE", `/api/keys/${key.keyId}`, { headers: owner() });
        expect(r.status).toBe(200);
        expect(r.body).toEqual({ success: true, keyId: key.keyId, revokedAt });
        h.clock.advance(1000);
        expect((await h.call("DELETE", `/api/keys/${key.keyId}`, { headers: owner() })).body).toEqual(r.body);
        expectError(await h.prepare(key.token), 401, "key_revoked");
      });

      test("a revoked key is refused for prepare (key_revoked), an expired one too (key_expired)", async (h) => {
        const revoked = await h.createKey();
        const expiring = await h.createKey({ expiresAt: h.clock.now() + 30_000 });
        await h.call("DELETE", `/api/keys/${revoked.keyId}`, { headers: bearer(revoked.token) });
        expectError(await h.prepare(revoked.token), 401, "key_revoked");
        expectError(await h.call("POST", "/api/keys/settle", { headers: bearer(revoked.token), body: { amount: "1" } }), 401, "key_revoked");
        expect((await h.prepare(expiring.token)).status).toBe(200);
        h.clock.advance(30_000);
        expectError(await h.prepare(expiring.token), 401, "key_expired");
        expectError(await h.call("POST", "/api/keys/settle", { headers: bearer(expiring.token), body: { amount: "1" } }), 401, "key_expired");
        expectError(await h.call("GET", `/api/keys/${revoked.keyId}`, { headers: bearer(revoked.token) }), 401, "key_revoked");
        const sibling = await h.createKey();
        expectBudget(await h.inspect(sibling.token, revoked.keyId), { limit: "1000", used: "0", reserved: "0" });
      });

      test("a new session key supersedes the active session key of the same wallet and chain only", async (h) => {
        const old = await h.createKey({ purpose: "session", name: "old" });
        const api = await h.createKey({ purpose: "api", name: "api" });
        const otherChain = await h.createKey({ purpose: "session", name: "other-chain", networkId: 10 });
        const otherOwner = await h.createKey({ purpose: "session", name: "other-owner" }, OTHER);
        h.clock.advance(1000);
        const fresh = await h.createKey({ purpose: "session", name: "new" });
        const list = (await h.call("GET", "/api/keys", { headers: owner() })).body.keys as any[];
        expect(Object.fromEntries(list.map((k) => [k.name, k.status]))).toEqual({ old: "revoked", api: "active", "other-chain": "active", new: "active" });
        expect(list.find((k) => k.name === "old").revokedAt).toBe(h.clock.now());
        expectError(await h.prepare(old.token), 401, "key_revoked");
        for (const k of [api, otherChain, fresh]) expect((await h.inspect(k.token, k.keyId)).status).toBe("active");
        expect((await h.inspect(otherOwner.token, otherOwner.keyId)).status).toBe("active");
      });
    });

    describe("legacy POST /api/keys/settle", () => {
      test("charges at once; too much → 402 budget_exhausted; 0 → 400", async (h) => {
        const key = await h.createKey();
        const r = await h.call("POST", "/api/keys/settle", { headers: bearer(key.token), body: { amount: "250" } });
        expect(r.status).toBe(200);
        expect(r.body).toEqual({ success: true, keyId: key.keyId, amount: "250", budgetRemaining: "750" });
        expect(budgetOf(r)).toEqual({ limit: "1000", used: "250", reserved: "0", remaining: "750" });
        expect(await h.inspect(key.token, key.keyId)).toMatchObject({ budgetUsed: "250", lastUsedAt: h.clock.now() });
        const e = expectError(await h.call("POST", "/api/keys/settle", { headers: bearer(key.token), body: { amount: 751 } }), 402, "budget_exhausted");
        expect(e.type).toBe("insufficient_quota");
        for (const amount of [0, "0", "", "abc", -1, undefined])
          expectError(await h.call("POST", "/api/keys/settle", { headers: bearer(key.token), body: { amount } }), 400, "invalid_request", "amount");
        expectError(await h.call("POST", "/api/keys/settle", { body: { amount: "1" } }), 401, "authentication_required");
        expectError(await h.call("POST", "/api/keys/settle", { headers: bearer(UNKNOWN_TOKEN), body: { amount: "1" } }), 401, "invalid_key");
        expectBudget(await h.inspect(key.token, key.keyId), { limit: "1000", used: "250", reserved: "0" });
        const rest = await h.call("POST", "/api/keys/settle", { headers: { authorization: key.token }, body: { amount: 750 } });
        expect(rest.body).toMatchObject({ success: true, budgetRemaining: "0" });
        expect((await h.inspect(key.token, key.keyId)).status).toBe("exhausted");
      });
    });
  });
}
