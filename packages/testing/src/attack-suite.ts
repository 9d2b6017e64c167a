/**
 * The attack suite: what an attacker who can reach the gateway tries against somebody else's
 * wallet, each refused with its error code (docs/api.md "Errors"), and the legitimate path of every proof kind.
 * A failing attack is a failing test. Runs through every store and through the real Node server:
 *
 * ```ts
 * runAttackSuite("sqlite", { createStore: () => createSqliteStore({ filename: tmpFile() }), connect: connectDirect });
 * ```
 */
import { describe, expect, it } from "vitest";
import type { GatewayOptions } from "@tollgate/core";
import { attacker, bearer, CHAIN, DAY, refused, SECRET, victim, withAttackGateway, type AttackHarness, type AttackSuiteOptions } from "./attack-harness.js";
import { runSignInAttacks } from "./attack-suite-siwe.js";

/** The address with the case of its first hex letter flipped: same bytes, wrong EIP-55 checksum. */
function breakChecksum(address: string): string {
  const i = address.slice(2).search(/[a-fA-F]/) + 2;
  const c = address[i]!;
  return address.slice(0, i) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + address.slice(i + 1);
}

const header = (address: string) => ({ "x-session-user-address": address });
const KEY = { budgetLimit: "1000000", networkId: CHAIN, purpose: "api" };

/** Registers the attack suite for `name` in the current vitest file. */
export function runAttackSuite(name: string, options: AttackSuiteOptions): void {
  const test = (title: string, fn: (h: AttackHarness) => Promise<void>, extra: Partial<GatewayOptions> = {}) =>
    it(title, () => withAttackGateway(options, fn, extra));

  describe(`attack suite: ${name}`, () => {
    describe("the owner-wallet header alone proves nothing", () => {
      test("a key for the victim's wallet from the header alone → 401 wallet_unverified, and no key exists", async (h) => {
        const r = await h.call("POST", "/api/keys", { headers: header(victim.address), json: { ...KEY, expiresAt: h.clock.now() + DAY } });
        refused(r, 401, "wallet_unverified");
        const { token } = await h.signIn(victim);
        const list = await h.call("GET", "/api/keys", { headers: bearer(token) });
        expect(list.status).toBe(200);
        expect(list.body.keys).toEqual([]);
      });

      test("the victim's keys, intents and settlement status are not readable with the header alone", async (h) => {
        const { token } = await h.signIn(victim);
        const key = await h.createKey(token);
        const prepared = await h.call("POST", "/api/payments/prepare", {
          headers: { ...bearer(key.token), "x-network-id": String(CHAIN) },
          json: { service: "inference", action: "chat", resource: "/v1/chat", method: "POST", maxAmountWei: "500" },
        });
        expect(prepared.status).toBe(200);
        for (const path of ["/api/keys", "/api/payments/intents", `/api/settlement/status?chainId=${CHAIN}`])
          refused(await h.call("GET", path, { headers: header(victim.address) }), 401, "wallet_unverified");
        // The victim still sees (and alone can settle) the open intent.
        const mine = await h.call("GET", "/api/payments/intents", { headers: bearer(token) });
        expect(mine.body.intents.map((i: any) => i.paymentIntentId)).toEqual([prepared.body.paymentIntentId]);
      });

      test("a session key for the victim's wallet from the header alone cannot supersede the victim's session key", async (h) => {
        const { token } = await h.signIn(victim);
        const own = await h.createKey(token, { purpose: "session" });
        refused(
          await h.call("POST", "/api/keys", { headers: header(victim.address), json: { ...KEY, purpose: "session", expiresAt: h.clock.now() + DAY } }),
          401,
          "wallet_unverified",
        );
        const inspect = await h.call("GET", `/api/keys/${own.keyId}`, { headers: bearer(own.token) });
        expect(inspect.body.status).toBe("active");
      });

      test("no header and no proof → 401 authentication_required", async (h) => {
        refused(await h.call("GET", "/api/keys"), 401, "authentication_required");
        refused(await h.call("POST", "/api/keys", { json: { ...KEY, expiresAt: h.clock.now() + DAY } }), 401, "authentication_required");
      });
    });

    describe("a proof of one wallet never acts for another", () => {
      test("the attacker's session with the victim's header → 403 forbidden on create, list, intents and status", async (h) => {
        const { token } = await h.signIn(attacker);
        const headers = { ...bearer(token), ...header(victim.address) };
        refused(await h.call("POST", "/api/keys", { headers, json: { ...KEY, expiresAt: h.clock.now() + DAY } }), 403, "forbidden");
        for (const path of ["/api/keys", "/api/payments/intents", `/api/settlement/status?chainId=${CHAIN}`])
          refused(await h.call("GET", path, { headers }), 403, "forbidden");
      });

      test("the attacker's service key with the victim's header → 403 forbidden", async (h) => {
        const { token } = await h.signIn(attacker);
        const key = await h.createKey(token);
        refused(await h.call("GET", "/api/keys", { headers: { ...bearer(key.token), ...header(victim.address) } }), 403, "forbidden");
        refused(await h.call("GET", "/api/payments/intents", { headers: { ...bearer(key.token), ...header(victim.address) } }), 403, "forbidden");
      });

      test("a service key cannot mint keys for its own wallet (no budget escalation) → 403 forbidden", async (h) => {
        const { token } = await h.signIn(victim);
        const key = await h.createKey(token, { budgetLimit: "10" });
        refused(
          await h.call("POST", "/api/keys", {
            headers: { ...bearer(key.token), ...header(victim.address) },
            json: { ...KEY, budgetLimit: "999999999", expiresAt: h.clock.now() + DAY },
          }),
          403,
          "forbidden",
        );
      });

      test(
        "expired keys revived by PATCH count against the live-key cap (409 too_many_keys); an expired session key is not revived (400)",
        async (h) => {
          const { token } = await h.signIn(attacker);
          const soon = () => ({ expiresAt: h.clock.now() + 1000 });
          const [session, one] = [await h.createKey(token, { ...soon(), purpose: "session" }), await h.createKey(token, soon())];
          h.clock.advance(2000);
          const two = await h.createKey(token, soon());
          h.clock.advance(2000);
          await h.createKey(token);
          const revive = (keyId: string) => h.call("PATCH", `/api/keys/${keyId}`, { headers: bearer(token), json: { expiresAt: h.clock.now() + DAY } });
          refused(await revive(session!.keyId), 400, "invalid_request");
          expect((await revive(one!.keyId)).status).toBe(200); // 2 live: the cap
          refused(await revive(two.keyId), 409, "too_many_keys");
          const list = await h.call("GET", "/api/keys", { headers: bearer(token) });
          expect(list.body.keys.filter((k: { status: string }) => k.status === "active")).toHaveLength(2);
        },
        { limits: { liveKeysPerWallet: 2 } },
      );

      test("the attacker's key cannot settle the victim's intent (403), and the victim's settle then succeeds", async (h) => {
        const victimKey = await h.createKey((await h.signIn(victim)).token);
        const attackerKey = await h.createKey((await h.signIn(attacker)).token);
        const prepared = await h.call("POST", "/api/payments/prepare", {
          headers: { ...bearer(victimKey.token), "x-network-id": String(CHAIN) },
          json: { service: "inference", action: "chat", resource: "/v1/chat", method: "POST", maxAmountWei: "500" },
        });
        const id = prepared.body.paymentIntentId;
        refused(
          await h.call("POST", "/api/payments/settle", { headers: bearer(attackerKey.token), json: { paymentIntentId: id, finalAmountWei: "500" } }),
          403,
          "forbidden",
        );
        refused(await h.call("POST", "/api/payments/abort", { headers: bearer(attackerKey.token), json: { paymentIntentId: id } }), 403, "forbidden");
        const ok = await h.call("POST", "/api/payments/settle", { headers: bearer(victimKey.token), json: { paymentIntentId: id, finalAmountWei: "120" } });
        expect(ok.status).toBe(200);
        expect(ok.body.finalAmountWei).toBe("120");
      });

      test("a wrong internal secret → 401 unauthorized", async (h) => {
        refused(
          await h.call("POST", "/api/keys", {
            headers: { ...header(victim.address), "x-internal-secret": "not-the-secret-at-all" },
            json: { ...KEY, expiresAt: h.clock.now() + DAY },
          }),
          401,
          "unauthorized",
        );
      });
    });

    runSignInAttacks(test);

    describe("abuse limits", () => {
      test("text/plain bodies (a cross-site simple request) → 415 on the dispenser, feedback, auth and key routes", async (h) => {
        const raw = JSON.stringify({ address: attacker.address, chainId: CHAIN });
        for (const path of ["/api/dispenser/claim", "/v1/feedback", "/api/auth/nonce"])
          refused(await h.call("POST", path, { headers: { "content-type": "text/plain" }, raw }), 415, "unsupported_media_type");
        // Even with the victim's session cookie riding along, a text/plain key creation does nothing.
        const { reply } = await h.signIn(victim);
        const cookie = reply.headers.get("set-cookie")!.split(";")[0]!;
        const body = JSON.stringify({ ...KEY, expiresAt: h.clock.now() + DAY });
        refused(await h.call("POST", "/api/keys", { headers: { cookie, "content-type": "text/plain" }, raw: body }), 415, "unsupported_media_type");
        expect((await h.call("GET", "/api/keys", { headers: { cookie } })).body.keys).toEqual([]);
        refused(
          await h.call("POST", "/v1/feedback", {
            headers: { "content-type": "application/x-www-form-urlencoded" },
            raw: "targetType=model&targetId=x&rating=5",
          }),
          415,
          "unsupported_media_type",
        );
      });

      test("a cross-site request riding the session cookie (a forged rotate, no body) → 403 forbidden and the token keeps working; same-origin and allowed origins pass", async (h) => {
        const { token, reply } = await h.signIn(victim);
        const cookie = reply.headers.get("set-cookie")!.split(";")[0]!;
        const key = await h.createKey(token);
        const rotate = (headers: Record<string, string>) => h.call("POST", `/api/keys/${key.keyId}/rotate`, { headers: { cookie, ...headers } });
        const forged: Record<string, string>[] = [
          { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
          { origin: "https://sub.gateway.test", "sec-fetch-site": "same-site" },
          { origin: "https://evil.example" }, // a browser without Sec-Fetch-Site
          { origin: "null", "sec-fetch-site": "cross-site" }, // a sandboxed frame
          { "sec-fetch-site": "cross-site" },
          { authorization: "", origin: "https://evil.example", "sec-fetch-site": "cross-site" }, // an empty Authorization still sends the cookie
        ];
        for (const headers of forged) refused(await rotate(headers), 403, "forbidden");
        expect((await h.call("GET", `/api/keys/${key.keyId}`, { headers: bearer(key.token) })).status).toBe(200);
        // The gateway's own page, a host users sign in at, and a client that is no browser.
        const allowed: Record<string, string>[] = [
          { "sec-fetch-site": "same-origin", origin: "http://gateway.test" },
          { origin: "http://gateway.test", "sec-fetch-site": "cross-site" },
          {},
        ];
        for (const headers of allowed) expect((await rotate(headers)).status).toBe(200);
        // A bearer session is never refused for its origin: no browser attaches it on its own.
        expect(
          (
            await h.call("POST", `/api/keys/${key.keyId}/rotate`, {
              headers: { ...bearer(token), origin: "https://evil.example", "sec-fetch-site": "cross-site" },
            })
          ).status,
        ).toBe(200);
      });

      test("a mixed-case address with a wrong EIP-55 checksum → 400, a correct one is accepted", async (h) => {
        const good = victim.account.address;
        const bad = breakChecksum(good);
        expect(bad).not.toBe(good);
        expect(bad.toLowerCase()).toBe(good.toLowerCase());
        refused(await h.call("POST", "/api/dispenser/claim", { json: { address: bad, chainId: CHAIN } }), 400, "invalid_request");
        refused(await h.call("POST", "/api/auth/nonce", { json: { address: bad, chainId: CHAIN } }), 400, "invalid_request");
        refused(await h.call("GET", "/api/keys", { headers: { ...header(bad), "x-internal-secret": SECRET } }), 400, "invalid_request");
        expect((await h.call("GET", "/api/keys", { headers: { ...header(good), "x-internal-secret": SECRET } })).status).toBe(200);
        // The dispenser validates first: a good address on an unconfigured dispenser is a 503, a bad one a 400.
        refused(await h.call("POST", "/api/dispenser/claim", { json: { address: good, chainId: CHAIN } }), 503, "not_configured");
      });

      test(
        "key churn: a wallet's key writes (create, update, rotate) are limited per wallet, its keys' renames of themselves in a window of their own; other wallets and the internal secret are not counted against it",
        async (h) => {
          const { token } = await h.signIn(victim);
          const remaining = (r: { headers: Headers }) => r.headers.get("x-ratelimit-remaining");
          const create = () => h.call("POST", "/api/keys", { headers: bearer(token), json: { ...KEY, expiresAt: h.clock.now() + DAY } });
          const first = await create();
          expect([first.status, remaining(first)]).toEqual([201, "3"]);
          const second = await create();
          expect([second.status, remaining(second)]).toEqual([201, "2"]);
          const renamed = await h.call("PATCH", `/api/keys/${first.body.keyId}`, { headers: bearer(token), json: { name: "renamed" } });
          expect([renamed.status, remaining(renamed)]).toEqual([200, "1"]);
          const rotated = await h.call("POST", `/api/keys/${second.body.keyId}/rotate`, { headers: bearer(token), json: {} });
          expect([rotated.status, remaining(rotated)]).toEqual([200, "0"]);
          const over = await create();
          refused(over, 429, "rate_limited");
          expect(over.headers.get("retry-after")).toBe("60");
          refused(await h.call("PATCH", `/api/keys/${first.body.keyId}`, { headers: bearer(token), json: { budgetLimit: "5" } }), 429, "rate_limited");
          refused(await h.call("POST", `/api/keys/${first.body.keyId}/rotate`, { headers: bearer(token), json: {} }), 429, "rate_limited");
          // The refused calls wrote nothing: the same two keys, neither changed, and one change event each.
          const listed = await h.call("GET", "/api/keys", { headers: bearer(token) });
          const views = listed.body.keys.map((k: any) => `${k.keyId} ${k.budgetLimit}`).sort();
          expect(views).toEqual([`${first.body.keyId} 1000000`, `${second.body.keyId} 1000000`].sort());
          for (const key of [first.body, second.body])
            expect((await h.call("GET", `/api/keys/${key.keyId}/events`, { headers: bearer(token) })).body.events).toHaveLength(1);
          // Keys renaming themselves share one window per owner, apart from the owner's: the owner's does not stop them,
          // and together they are held to the same limit (4 renames over two keys, then 429).
          const rename = (key: any, name: string) => h.call("PATCH", `/api/keys/${key.keyId}`, { headers: bearer(key.token), json: { name } });
          const renames = [await rename(first.body, "a"), await rename(second.body, "b"), await rename(first.body, "c"), await rename(second.body, "d")];
          expect(renames.map((r) => [r.status, remaining(r)])).toEqual([
            [200, "3"],
            [200, "2"],
            [200, "1"],
            [200, "0"],
          ]);
          refused(await rename(first.body, "e"), 429, "rate_limited");
          // Another wallet, and the host app's server with the internal secret, are not affected.
          await h.createKey((await h.signIn(attacker)).token);
          const bySecret = await h.call("POST", "/api/keys", {
            headers: { ...header(victim.address), "x-internal-secret": SECRET },
            json: { ...KEY, expiresAt: h.clock.now() + DAY },
          });
          expect([bySecret.status, remaining(bySecret)]).toEqual([201, null]);
          h.clock.advance(60_000);
          expect((await create()).status).toBe(201);
        },
        { rateLimits: { perWallet: { keys: 4 } } },
      );

      test(
        "the dispenser claim is rate limited per client IP: exactly N pass, then 429 with Retry-After",
        async (h) => {
          const ip = { "x-forwarded-for": "203.0.113.7" };
          for (let i = 0; i < 3; i++) {
            const r = await h.call("POST", "/api/dispenser/claim", { headers: ip, json: { address: `0x${String(i + 1).padStart(40, "0")}`, chainId: CHAIN } });
            refused(r, 503, "not_configured");
            expect(r.headers.get("x-ratelimit-remaining")).toBe(String(2 - i));
          }
          const over = await h.call("POST", "/api/dispenser/claim", { headers: ip, json: { address: `0x${"4".padStart(40, "0")}`, chainId: CHAIN } });
          refused(over, 429, "rate_limited");
          expect(over.headers.get("retry-after")).toBe("60");
          // Another client is not affected.
          refused(
            await h.call("POST", "/api/dispenser/claim", {
              headers: { "x-forwarded-for": "198.51.100.1" },
              json: { address: `0x${"5".padStart(40, "0")}`, chainId: CHAIN },
            }),
            503,
            "not_configured",
          );
        },
        { trustedProxies: 1, rateLimits: { perIp: { dispenser: 3 } } },
      );
    });

    test("the intent of a paid call the gateway served is not the caller's to settle or abort (403), with or without its key", async (h) => {
      const key = await h.createKey((await h.signIn(attacker)).token);
      const paid = await h.call("POST", "/v1/embeddings", { headers: bearer(key.token), json: { model: "text-embedding-3-small", input: "hello" } });
      expect(paid.status, JSON.stringify(paid.body)).toBe(200);
      const intentId = paid.headers.get("x-payment-intent-id")!;
      expect(intentId).toMatch(/^pi_[0-9a-f]{44}$/);
      for (const headers of [{}, bearer(key.token)]) {
        refused(await h.call("POST", "/api/payments/abort", { headers, json: { paymentIntentId: intentId } }), 403, "forbidden");
        refused(await h.call("POST", "/api/payments/settle", { headers, json: { paymentIntentId: intentId, finalAmountWei: "0" } }), 403, "forbidden");
      }
      const view = await h.call("GET", `/api/keys/${key.keyId}`, { headers: bearer(key.token) });
      expect([view.body.budgetUsed, view.body.budgetReserved]).toEqual([paid.body.receipt.finalAmountWei, "0"]);
    });

    describe("the legitimate path of every proof kind", () => {
      test("a wallet session (bearer, then cookie) creates and lists its own keys", async (h) => {
        const { token, reply } = await h.signIn(victim);
        expect(reply.body).toMatchObject({ address: victim.address, chainId: CHAIN, expiresAt: h.clock.now() + DAY });
        const cookie = reply.headers.get("set-cookie")!;
        expect(cookie).toMatch(/^tollgate_session=sess_[A-Za-z0-9_-]{43}; Max-Age=86400; Path=\/; HttpOnly; SameSite=Lax$/);
        const key = await h.createKey(token);
        const byCookie = await h.call("GET", "/api/keys", { headers: { cookie: cookie.split(";")[0]!, ...header(victim.account.address) } });
        expect(byCookie.status).toBe(200);
        expect(byCookie.body.keys.map((k: any) => k.keyId)).toEqual([key.keyId]);
        expect((await h.call("GET", "/api/auth/session", { headers: bearer(token) })).body).toMatchObject({ address: victim.address, chainId: CHAIN });
      });

      test("the internal secret acts for the wallet it names", async (h) => {
        const r = await h.call("POST", "/api/keys", {
          headers: { ...header(victim.address), "x-internal-secret": SECRET },
          json: { ...KEY, expiresAt: h.clock.now() + DAY },
        });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
      });

      test("a live key of the wallet reads its keys, intents and settlement status", async (h) => {
        const key = await h.createKey((await h.signIn(victim)).token);
        for (const path of ["/api/keys", "/api/payments/intents", `/api/settlement/status?chainId=${CHAIN}`]) {
          const r = await h.call("GET", path, { headers: { ...bearer(key.token), ...header(victim.address) } });
          expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(200);
        }
      });

      test(
        "the host app's authenticateWallet hook proves its user's wallet",
        async (h) => {
          const r = await h.call("POST", "/api/keys", { headers: { "x-app-user": "alice" }, json: { ...KEY, expiresAt: h.clock.now() + DAY } });
          expect(r.status, JSON.stringify(r.body)).toBe(201);
          refused(
            await h.call("POST", "/api/keys", {
              headers: { "x-app-user": "alice", ...header(attacker.address) },
              json: { ...KEY, expiresAt: h.clock.now() + DAY },
            }),
            403,
            "forbidden",
          );
          refused(await h.call("GET", "/api/keys", { headers: { "x-app-user": "mallory" } }), 401, "authentication_required");
        },
        { authenticateWallet: (request) => (request.headers["x-app-user"] === "alice" ? victim.account.address : null) },
      );

      test(
        "walletAuth trusted-header: the operator's proxy vouches for the header",
        async (h) => {
          const r = await h.call("POST", "/api/keys", { headers: header(victim.address), json: { ...KEY, expiresAt: h.clock.now() + DAY } });
          expect(r.status, JSON.stringify(r.body)).toBe(201);
        },
        { walletAuth: "trusted-header" },
      );
    });
  });
}
