/** The Sign-In with Ethereum part of the attack suite: every forged, stale or replayed sign-in is refused. */
import { describe, expect, type it } from "vitest";
import type { GatewayOptions } from "@tollgate/core";
import { attacker, bearer, CHAIN, DAY, HOST, refused, victim, type AttackHarness } from "./attack-harness.js";

type Test = (title: string, fn: (h: AttackHarness) => Promise<void>, extra?: Partial<GatewayOptions>) => ReturnType<typeof it>;

const verify = (h: AttackHarness, message: string, signature: string) => h.call("POST", "/api/auth/verify", { json: { message, signature } });

/** Registers the sign-in attacks inside the attack suite's describe block. */
export function runSignInAttacks(test: Test): void {
  describe("sign-in attacks", () => {
    test("a replayed SIWE message and signature → 401 wallet_unverified (the nonce is single use)", async (h) => {
      const message = await h.siweMessage(victim);
      const signature = await victim.account.signMessage({ message });
      expect((await verify(h, message, signature)).status).toBe(200);
      refused(await verify(h, message, signature), 401, "wallet_unverified");
    });

    test("a nonce reused in a second, freshly signed message → 401 wallet_unverified", async (h) => {
      const first = await h.siweMessage(victim);
      expect((await verify(h, first, await victim.account.signMessage({ message: first }))).status).toBe(200);
      const nonce = /Nonce: (\w+)/.exec(first)![1]!;
      h.clock.advance(1000);
      const second = first.replace(/Issued At: .*/, `Issued At: ${new Date(h.clock.now()).toISOString()}`);
      expect(second).toContain(`Nonce: ${nonce}`);
      refused(await verify(h, second, await victim.account.signMessage({ message: second })), 401, "wallet_unverified");
    });

    test("a nonce issued to the victim, signed by the attacker for himself → 401, and the victim can still use it", async (h) => {
      const forVictim = await h.siweMessage(victim);
      const stolen = forVictim.replace(victim.account.address, attacker.account.address);
      refused(await verify(h, stolen, await attacker.account.signMessage({ message: stolen })), 401, "wallet_unverified");
      expect((await verify(h, forVictim, await victim.account.signMessage({ message: forVictim }))).status).toBe(200);
    });

    test("a nonce asked for one chain, signed into a message for another → 401 wallet_unverified", async (h) => {
      const message = await h.siweMessage(victim, { chainId: CHAIN + 1 });
      const r = await verify(h, message, await victim.account.signMessage({ message }));
      refused(r, 401, "wallet_unverified");
      expect(r.body.error.message).toContain(`issued for chain ${CHAIN}`);
    });

    test("a message claiming the victim's address signed by the attacker → 401 wallet_unverified", async (h) => {
      const message = await h.siweMessage(victim);
      refused(await verify(h, message, await attacker.account.signMessage({ message })), 401, "wallet_unverified");
    });

    test("a signature for another domain (a phishing site's message) → 401 wallet_unverified", async (h) => {
      const message = await h.siweMessage(victim, { domain: "evil.example", uri: "https://evil.example/" });
      refused(await verify(h, message, await victim.account.signMessage({ message })), 401, "wallet_unverified");
    });

    test("an expired message and an expired nonce → 401 wallet_unverified", async (h) => {
      const message = await h.siweMessage(victim, { expirationTime: new Date(h.clock.now() + 60_000) });
      const signature = await victim.account.signMessage({ message });
      h.clock.advance(61_000);
      refused(await verify(h, message, signature), 401, "wallet_unverified");
      const stale = await h.siweMessage(victim);
      h.clock.advance(10 * 60_000 + 1);
      refused(await verify(h, stale, await victim.account.signMessage({ message: stale })), 401, "wallet_unverified");
    });

    test("an expired session and a signed-out session prove nothing", async (h) => {
      const { token } = await h.signIn(victim);
      expect((await h.call("GET", "/api/keys", { headers: bearer(token) })).status).toBe(200);
      h.clock.advance(DAY);
      refused(await h.call("GET", "/api/keys", { headers: bearer(token) }), 401, "wallet_unverified");
      const again = (await h.signIn(victim)).token;
      const out = await h.call("DELETE", "/api/auth/session", { headers: bearer(again) });
      expect(out.status).toBe(200);
      expect(out.headers.get("set-cookie")).toMatch(/^tollgate_session=; Max-Age=0;/);
      refused(await h.call("GET", "/api/keys", { headers: bearer(again) }), 401, "wallet_unverified");
      refused(await h.call("GET", "/api/auth/session", { headers: bearer(again) }), 401, "wallet_unverified");
    });

    test(
      "a Secure session cookie is __Host- prefixed: a same-named cookie planted by a sibling subdomain proves nothing",
      async (h) => {
        const { token, reply } = await h.signIn(victim);
        expect(reply.headers.get("set-cookie")).toMatch(/^__Host-tollgate_session=sess_[A-Za-z0-9_-]{43}; Max-Age=86400; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
        expect((await h.call("GET", "/api/auth/session", { headers: { cookie: `__Host-tollgate_session=${token}` } })).status).toBe(200);
        // A page on evil.gateway.test can set `tollgate_session` for the parent domain, never a __Host- cookie.
        const attackerSession = (await h.signIn(attacker)).token;
        refused(await h.call("GET", "/api/auth/session", { headers: { cookie: `tollgate_session=${attackerSession}` } }), 401, "authentication_required");
        const out = await h.call("DELETE", "/api/auth/session", { headers: { cookie: `__Host-tollgate_session=${token}` } });
        expect(out.headers.get("set-cookie")).toMatch(/^__Host-tollgate_session=; Max-Age=0; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
      },
      { auth: { domains: [HOST], cookie: { secure: true } } },
    );

    test("a forged or malformed session token, a garbage message or signature → 401 / 400", async (h) => {
      refused(await h.call("GET", "/api/keys", { headers: bearer(`sess_${"A".repeat(43)}`) }), 401, "wallet_unverified");
      refused(await h.call("GET", "/api/keys", { headers: { cookie: `tollgate_session=sess_${"B".repeat(43)}` } }), 401, "wallet_unverified");
      refused(await verify(h, "hello", `0x${"11".repeat(65)}`), 400, "invalid_request");
      const message = await h.siweMessage(victim);
      refused(await verify(h, message, "0xnothex"), 400, "invalid_request");
      refused(await verify(h, message, `0x${"11".repeat(65)}`), 401, "wallet_unverified");
      refused(await h.call("POST", "/api/auth/nonce", { json: { address: "0x123", chainId: CHAIN } }), 400, "invalid_request");
    });

    test("a SIWE message with text after or between its fields (what a wallet shows is not what is checked) → 400, and no session", async (h) => {
      const message = await h.siweMessage(victim);
      const padded = [
        `${message}\n\nBy signing you also approve the transfer of all your USDC.`,
        message.replace("\nURI: ", "\nThis line is not part of EIP-4361\nURI: "),
        `${message}\nURI: https://evil.example/\nVersion: 1`,
      ];
      for (const text of padded) refused(await verify(h, text, await victim.account.signMessage({ message: text })), 400, "invalid_request");
      // The message itself still signs in (its nonce was never consumed).
      expect((await verify(h, message, await victim.account.signMessage({ message }))).status).toBe(200);
    });

    test(
      "sign-in is rate limited per client IP",
      async (h) => {
        const ip = { "x-forwarded-for": "192.0.2.9" };
        for (let i = 0; i < 2; i++) expect((await h.call("POST", "/api/auth/nonce", { headers: ip, json: { address: victim.address, chainId: CHAIN } })).status).toBe(200);
        const over = await h.call("POST", "/api/auth/nonce", { headers: ip, json: { address: victim.address, chainId: CHAIN } });
        refused(over, 429, "rate_limited");
        expect(Number(over.headers.get("retry-after"))).toBe(60);
        h.clock.advance(60_000);
        expect((await h.call("POST", "/api/auth/nonce", { headers: ip, json: { address: victim.address, chainId: CHAIN } })).status).toBe(200);
      },
      { trustedProxies: 1, rateLimits: { perIp: { auth: 2 } } },
    );
  });
}
