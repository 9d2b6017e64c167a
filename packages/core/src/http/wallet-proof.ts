/**
 * The one wallet-proof step: who may act for the wallet named by `x-session-user-address`.
 * Every route that acts for a wallet (key create and list, intent list, settlement status, usage,
 * feedback attribution) resolves its wallet here; services receive the proven address, never a
 * raw header.
 *
 * Proofs, tried in this order:
 * 1. a wallet session sent as `Authorization: Bearer sess_…`;
 * 2. the internal secret (`x-internal-secret`): the host app acts for the wallet it names (before
 *    a session cookie, which a host app's server may forward with it);
 * 3. the session cookie, when no `Authorization` is sent (browsers);
 * 4. the host app's `authenticateWallet(request)` hook, when it returns an address;
 * 5. a live service key of the wallet (`Authorization: Bearer svc-…`), where the route allows it;
 * 6. the header alone, only with `walletAuth: "trusted-header"`.
 * A header naming another wallet than the proven one is 403 `forbidden`.
 *
 * Some proofs hold on one chain only ({@link ProvenWallet.chainId}): a session a smart wallet's
 * contract signed in (the same address on another chain may be another contract with other
 * owners), and a service key (least privilege: a key acts for its wallet on its own chain). Routes
 * that act on a chain ask {@link chainOfProof}.
 */
import { parse as parseCookie } from "cookie";
import type { GatewayContext } from "../context.js";
import { GatewayError } from "../errors.js";
import { servesSessionDomain } from "../auth/domains.js";
import { isSessionToken } from "../auth/service.js";
import { assertKeyChain } from "../keys/service.js";
import { bearerToken } from "../keys/token.js";
import { secretsEqual } from "../secrets.js";
import type { KeyRecord } from "../store/types.js";
import type { SessionRecord } from "../store/auth-types.js";
import { parseAddress, requestHost } from "./headers.js";
import type { RouteSecurity } from "./route.js";
import type { GatewayRequest } from "./types.js";

/** How a wallet was proven. */
export type WalletProofKind = "session" | "internal_secret" | "host_app" | "service_key" | "trusted_header";

/** A wallet the request may act for. */
export interface ProvenWallet {
  /** Lower-case address. */
  readonly address: string;
  readonly via: WalletProofKind;
  /** The bearer key, when a service key proved the wallet. */
  readonly key?: KeyRecord;
  /** The session, when a wallet session proved it. */
  readonly session?: SessionRecord;
  /** The only chain the proof holds on; undefined when it holds on every chain. */
  readonly chainId?: number;
}

/**
 * The chain a request may act on for `wallet`: `requested` when the proof holds there; when none
 * is requested, the proof's own chain (undefined for a proof that holds on every chain, which the
 * caller reads as "all chains" or its default).
 * @throws GatewayError 403 `forbidden` when `requested` is not the proof's chain, naming `param`.
 */
export function chainOfProof(wallet: ProvenWallet, requested: number | undefined, param = "chainId"): number | undefined {
  if (wallet.chainId === undefined || requested === undefined) return requested ?? wallet.chainId;
  if (wallet.key) assertKeyChain(wallet.key, requested, "the request", param);
  else if (requested !== wallet.chainId)
    throw new GatewayError(
      "forbidden",
      `This session was signed in by a smart wallet on chain ${wallet.chainId}, which proves the wallet on that chain only; sign in on chain ${requested} to act there.`,
      { param },
    );
  return requested;
}

/** Options of {@link proveWallet}. */
export interface ProveWalletOptions {
  /**
   * Whether a service key of the wallet proves it. False on key creation: a key that could mint
   * keys could raise its own budget to the wallet's whole allowance. @default true
   */
  readonly serviceKey?: boolean;
}

/** The credentials a wallet-proof route accepts, for the API reference. */
export const WALLET_PROOF: RouteSecurity = { accepts: ["walletSession", "serviceKey", ["internalSecret", "session"]] };
/** The same for key creation, where a service key does not prove the wallet. */
export const WALLET_PROOF_NO_KEY: RouteSecurity = { accepts: ["walletSession", ["internalSecret", "session"]] };

/** Whether the session cookie of `request` is `Secure`: `auth.cookie.secure`, else SameSite=None or a request over https. */
export function secureSessionCookie(request: GatewayRequest, gateway: Pick<GatewayContext, "sessionCookie">): boolean {
  const { sameSite, secure } = gateway.sessionCookie;
  return secure ?? (sameSite === "none" || request.origin?.startsWith("https:") === true);
}

/**
 * The name of the session cookie on `request`: `__Host-<name>` when the cookie is `Secure`, so a
 * sibling subdomain (or a plain-http page of the same host) cannot plant its own session in the
 * browser for the gateway to read (cookie tossing: the victim would act as the attacker's wallet);
 * the plain name on plain http, where browsers refuse the prefix.
 */
export function sessionCookieName(request: GatewayRequest, gateway: Pick<GatewayContext, "sessionCookie" | "wallets">): string {
  const name = gateway.wallets.cookieName;
  return secureSessionCookie(request, gateway) && !name.startsWith("__Host-") ? `__Host-${name}` : name;
}

/** The session token of a request: a `sess_…` bearer, else the session cookie (only when no Authorization is sent). */
export function sessionTokenOf(request: GatewayRequest, cookieName: string): string | undefined {
  const bearer = bearerToken(request.headers.authorization);
  if (bearer !== undefined) return isSessionToken(bearer) ? bearer : undefined;
  const header = request.headers.cookie;
  if (!header) return undefined;
  const value = parseCookie(header)[cookieName];
  return value && isSessionToken(value) ? value : undefined;
}

/**
 * The live session of `token` for a request to this gateway. Throws 401 `wallet_unverified` when it
 * is unknown, expired or signed out, or was opened for a domain this gateway does not sign in to.
 */
export async function liveSession(request: GatewayRequest, gateway: GatewayContext, token: string): Promise<SessionRecord> {
  const session = await gateway.services.auth.sessionFor(token);
  if (!session) throw new GatewayError("wallet_unverified", "The wallet session is unknown, expired or signed out; sign in again.");
  if (!servesSessionDomain(gateway.signIn, session.domain, requestHost(request, gateway.rateLimits.trustedProxies)))
    throw new GatewayError("wallet_unverified", `The wallet session was opened for ${session.domain}, which this gateway does not sign in to; sign in here.`);
  return session;
}

/**
 * Resolves the wallet a request proves. Throws 400 `invalid_request` (malformed or mis-checksummed
 * header), 401 `wallet_unverified` (header without proof, or a dead session), 401
 * `authentication_required` (neither), 401 `unauthorized` (wrong internal secret), the 401s of a
 * dead service key, and 403 `forbidden` (the header names another wallet, or a service key where
 * the route does not take one).
 */
export async function proveWallet(request: GatewayRequest, gateway: GatewayContext, options: ProveWalletOptions = {}): Promise<ProvenWallet> {
  const raw = request.headers["x-session-user-address"];
  const claimed = raw ? parseAddress(raw, "x-session-user-address") : undefined;
  const proven = await resolveProof(request, gateway, claimed, options);
  if (claimed !== undefined && claimed !== proven.address)
    throw new GatewayError("forbidden", `x-session-user-address names ${claimed}, but the request proves ${proven.address}.`, { param: "x-session-user-address" });
  return proven;
}

/**
 * {@link proveWallet} for routes where a wallet is optional (feedback attribution): null when the
 * request proves no wallet or its proof fails, so the caller falls back to anonymous. A malformed
 * header is still a 400.
 */
export async function tryProveWallet(request: GatewayRequest, gateway: GatewayContext): Promise<ProvenWallet | null> {
  const raw = request.headers["x-session-user-address"];
  if (raw) parseAddress(raw, "x-session-user-address");
  try {
    return await proveWallet(request, gateway);
  } catch (error) {
    if (error instanceof GatewayError && error.status !== 400) return null;
    throw error;
  }
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Refuses a request that changes something on the strength of the session cookie alone when a
 * browser sent it from another site (cross-site request forgery): with `cors.credentials` the
 * cookie is `SameSite=None`, and `Lax` still rides along from sibling subdomains. Allowed: the
 * browser's `Sec-Fetch-Site: same-origin` (or `none`), an `Origin` whose host is one users sign in
 * at (`auth.domains`) or an explicit CORS origin, and, from a browser that sends no
 * `Sec-Fetch-Site`, an `Origin` naming the request's own host. A request without `Origin` and
 * `Sec-Fetch-Site` is no browser's cross-site request, and passes.
 * @throws GatewayError 403 `forbidden`.
 */
function assertSameSiteCookie(request: GatewayRequest, gateway: GatewayContext): void {
  if (SAFE_METHODS.has(request.method)) return;
  const site = request.headers["sec-fetch-site"];
  if (site === "same-origin" || site === "none") return;
  const origin = request.headers.origin;
  if (origin === undefined && site === undefined) return;
  let host: string | undefined;
  try {
    host = origin === undefined || origin === "null" ? undefined : new URL(origin).host;
  } catch {
    host = undefined;
  }
  const trusted = gateway.signIn.configured ?? [];
  if (host !== undefined && (trusted.includes(host) || gateway.signIn.corsHosts.includes(host))) return;
  if (host !== undefined && site === undefined && host === requestHost(request, gateway.rateLimits.trustedProxies)) return;
  throw new GatewayError(
    "forbidden",
    `The session cookie does not prove a wallet on a request from ${origin ?? "another site"}: only the gateway's own pages, auth.domains and cors.origins may use it. Send the session as Authorization: Bearer instead.`,
  );
}

async function resolveProof(request: GatewayRequest, gateway: GatewayContext, claimed: string | undefined, options: ProveWalletOptions): Promise<ProvenWallet> {
  const policy = gateway.wallets;
  const sessionToken = sessionTokenOf(request, sessionCookieName(request, gateway));
  const secret = request.headers["x-internal-secret"];
  // The host app's secret first: a server acting for its user may forward the user's cookie too.
  if (secret !== undefined && policy.internalSecret !== undefined && (sessionToken === undefined || bearerToken(request.headers.authorization) === undefined)) {
    if (!secretsEqual(secret, policy.internalSecret)) throw new GatewayError("unauthorized", "The x-internal-secret header is wrong.", { param: "x-internal-secret" });
    if (claimed === undefined)
      throw new GatewayError("authentication_required", "With x-internal-secret, name the wallet in x-session-user-address.", { param: "x-session-user-address" });
    return { address: claimed, via: "internal_secret" };
  }
  if (sessionToken !== undefined) {
    if (bearerToken(request.headers.authorization) === undefined) assertSameSiteCookie(request, gateway);
    const session = await liveSession(request, gateway, sessionToken);
    return session.signer === "eoa" ? { address: session.address, via: "session", session } : { address: session.address, via: "session", session, chainId: session.chainId };
  }
  if (policy.authenticate) {
    const address = await policy.authenticate(request);
    if (address) return { address: parseAddress(address, "authenticateWallet"), via: "host_app" };
  }
  if (request.headers.authorization) {
    const key = await gateway.services.keys.authenticate(request.headers.authorization);
    if (options.serviceKey === false)
      throw new GatewayError("forbidden", "A service key cannot act for its wallet here: sign in with the wallet (POST /api/auth/verify) to create keys.");
    return { address: key.owner, via: "service_key", key, chainId: key.chainId };
  }
  if (claimed !== undefined && policy.mode === "trusted-header") return { address: claimed, via: "trusted_header" };
  if (claimed !== undefined)
    throw new GatewayError("wallet_unverified", "x-session-user-address is not proven: sign in with the wallet (POST /api/auth/nonce, then /api/auth/verify) and send the session token, or a key of that wallet.", {
      param: "x-session-user-address",
    });
  throw new GatewayError("authentication_required", "Sign in with the wallet (POST /api/auth/verify) and send the session as Authorization: Bearer sess_…", { param: "x-session-user-address" });
}
