/** The Sign-In with Ethereum routes: nonce, verify (opens a session), session lookup, sign-out. */
import { serialize } from "cookie";
import { z } from "zod";
import type { GatewayContext } from "../context.js";
import { GatewayError } from "../errors.js";
import { json } from "../http/respond.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { addressSchema, chainIdInput } from "../http/schemas.js";
import type { GatewayRequest } from "../http/types.js";
import { liveSession, secureSessionCookie, sessionCookieName, sessionTokenOf } from "../http/wallet-proof.js";
import { signInDomains } from "./domains.js";
import { requestHost } from "../http/headers.js";
import type { SessionRecord } from "../store/auth-types.js";


/** The `Set-Cookie` value of a session token (an empty token with max age 0 clears the cookie). */
function sessionCookie(gateway: GatewayContext, request: GatewayRequest, token: string, maxAgeSeconds: number): string {
  // Path=/ and no Domain, as the __Host- prefix of a Secure cookie requires.
  return serialize(sessionCookieName(request, gateway), token, {
    httpOnly: true,
    path: "/",
    sameSite: gateway.sessionCookie.sameSite,
    // Browsers drop SameSite=None cookies that are not Secure (and treat http://localhost as secure).
    secure: secureSessionCookie(request, gateway),
    maxAge: maxAgeSeconds,
  });
}

const sessionView = (s: SessionRecord) => ({ address: s.address, chainId: s.chainId, signer: s.signer, createdAt: s.createdAt, expiresAt: s.expiresAt });

/** Builds the wallet-session route table. */
export function authRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/api/auth/nonce",
      tag: "auth",
      summary: "Ask for a single-use Sign-In with Ethereum nonce for a wallet (valid 10 minutes).",
      body: z.object({ address: addressSchema, chainId: chainIdInput }),
      rateLimit: { ip: "auth" },
      handle: async ({ body, gateway }) => json(await gateway.services.auth.issueNonce(body)),
    }),
    defineRoute({
      method: "POST",
      path: "/api/auth/verify",
      tag: "auth",
      summary: "Trade a signed SIWE message for a wallet session: a sess_ token (also set as an HttpOnly cookie) that proves the wallet.",
      body: z.object({ message: z.string().min(1).max(8192), signature: z.string().min(1).max(20_000) }),
      rateLimit: { ip: "auth" },
      handle: async ({ request, body, gateway }) => {
        const host = requestHost(request, gateway.rateLimits.trustedProxies);
        const domains = signInDomains(gateway.signIn, host);
        const { token, session } = await gateway.services.auth.verify(Object.assign({}, body, { domains }));
        const maxAge = Math.floor((session.expiresAt - gateway.clock.now()) / 1000);
        return json(
          { token, ...sessionView(session) },
          { headers: { "set-cookie": sessionCookie(gateway, request, token, maxAge), "cache-control": "no-store" } },
        );
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/auth/session",
      tag: "auth",
      summary: "The wallet session of the request (Bearer sess_ or the session cookie).",
      security: { accepts: ["walletSession"] },
      handle: async ({ request, gateway }) => {
        const token = sessionTokenOf(request, sessionCookieName(request, gateway));
        if (token === undefined) throw new GatewayError("authentication_required", "Send a wallet session as Authorization: Bearer sess_… or its cookie.");
        const session = await liveSession(request, gateway, token);
        return json(sessionView(session), { headers: { "cache-control": "no-store" } });
      },
    }),
    defineRoute({
      method: "DELETE",
      path: "/api/auth/session",
      tag: "auth",
      summary: "Sign out: the session stops proving its wallet and the cookie is cleared (idempotent).",
      security: { accepts: ["walletSession"], optional: true },
      handle: async ({ request, gateway }) => {
        const token = sessionTokenOf(request, sessionCookieName(request, gateway));
        const signedOut = token === undefined ? false : await gateway.services.auth.signOut(token);
        return json({ success: true, signedOut }, { headers: { "set-cookie": sessionCookie(gateway, request, "", 0) } });
      },
    }),
  ];
}
