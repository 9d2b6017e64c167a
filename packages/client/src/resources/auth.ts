/**
 * `client.auth`: Sign-In with Ethereum (EIP-4361) wallet sessions (docs/security.md "Signing in with the wallet").
 * A session proves the wallet on the wallet routes (key create and list, intents list, settlement
 * status); browsers also get it as the HttpOnly cookie `tollgate_session` (`__Host-tollgate_session` over https).
 */
import { APIPromise } from "../api-promise.js";
import type { Caller } from "../http/caller.js";
import type { RequestOptions } from "../options.js";
import { buildSiweMessage } from "../siwe.js";

/** A sign-in nonce: single use, for the address it was asked for. */
export interface AuthNonce {
  /** Alphanumeric; goes into the SIWE message. */
  nonce: string;
  /** Unix ms after which it is refused. */
  expiresAt: number;
}

/** What `auth.verify` (and `auth.signIn`) answer: the new session and its token. */
export interface SignedIn {
  /** `sess_…`: the bearer of the session (`sessionToken`). Shown once; the gateway keeps only its hash. */
  token: string;
  /** The wallet (as the gateway writes it). */
  address: string;
  /** The chain id of the signed message. */
  chainId: number;
  /**
   * What proved the wallet (sent by gateways that show it): `"eoa"`, the address's own key (the
   * session acts on every chain), or `"contract"`, a smart wallet's contract on `chainId` (the
   * session acts on that chain only).
   */
  signer?: "eoa" | "contract";
  /** Unix ms (sent by gateways that show it). */
  createdAt?: number;
  /** Unix ms. */
  expiresAt: number;
}

/** A live wallet session, as `auth.session` shows it (no token). */
export interface WalletSession {
  address: string;
  chainId: number;
  /** As in {@link SignedIn}: a `"contract"` session acts on `chainId` only. */
  signer?: "eoa" | "contract";
  /** Unix ms. */
  createdAt: number;
  /** Unix ms. */
  expiresAt: number;
}

/** The answer of `auth.signOut` (also when there was no live session: signing out is idempotent). */
export interface SignedOut {
  success: true;
  /** Whether the request named a session that this call ended (false: none, or already ended). */
  signedOut?: boolean;
}

/** The wallet's signer: EIP-191 `personal_sign` of the message text, e.g. viem's `account.signMessage({ message })`. */
export type SignMessage = (message: string) => Promise<`0x${string}`>;

/** The parameters of `auth.signIn`. */
export interface SignInParams {
  /** The wallet, any case (the message carries it EIP-55 checksummed). */
  address: string;
  /** The wallet's chain id. */
  chainId: number;
  /** Signs the SIWE message text with the wallet (see {@link SignMessage}). */
  signMessage: SignMessage;
  /**
   * The SIWE `domain`: the site the user signs in at, one the gateway accepts (its `auth.domains`; without them, its CORS origins' hosts or a loopback Host).
   * @default the host of the client's baseUrl (for a page on the gateway's origin: `window.location.host`)
   */
  domain?: string | undefined;
  /** The SIWE `uri`. @default the origin of the client's baseUrl */
  uri?: string | undefined;
  /** The line the wallet shows (no line break; `""` for none). @default "Sign in to the Tollgate gateway." */
  statement?: string | undefined;
  /** @default now */
  issuedAt?: Date | undefined;
  /** When the signed message stops being valid (the session's own lifetime is the gateway's). */
  expirationTime?: Date | undefined;
  /**
   * Whether later calls of this client send the new session token (`sessionToken`). `false` for
   * a browser page that relies on the HttpOnly cookie instead. @default true
   */
  useToken?: boolean | undefined;
}

/** The `client.auth` group. */
export interface AuthResource {
  /** Asks a sign-in nonce for `address` on `chainId` (single use, about 10 minutes). */
  nonce(params: { address: string; chainId: number }, options?: RequestOptions): APIPromise<AuthNonce>;
  /**
   * Trades a signed SIWE message for a session (and, in a browser, the `tollgate_session` cookie,
   * `__Host-tollgate_session` over https). 401 `wallet_unverified` for a bad signature, a used or unknown nonce, another domain
   * or an expired message; 400 when the message does not parse. Never retried (the nonce is spent).
   */
  verify(params: { message: string; signature: string }, options?: RequestOptions): APIPromise<SignedIn>;
  /**
   * The whole sign-in: a nonce, the EIP-4361 message, the wallet's signature, verify. Later calls
   * of this client then send the token (unless `useToken: false`). A wallet that refuses to
   * sign rejects with the wallet's own error.
   */
  signIn(params: SignInParams, options?: RequestOptions): Promise<SignedIn>;
  /** The session of the client's `sessionToken` (or, in a browser, of the cookie); 401 when none is live. */
  session(options?: RequestOptions): APIPromise<WalletSession>;
  /** Ends the session (token and cookie); the client forgets its token when it was this one. */
  signOut(options?: RequestOptions): APIPromise<SignedOut>;
}

/** The statement of `auth.signIn` when none is given. */
export const DEFAULT_SIGN_IN_STATEMENT = "Sign in to the Tollgate gateway.";

/** Builds `client.auth`. */
export function authResource(caller: Caller): AuthResource {
  const nonce: AuthResource["nonce"] = (params, options) =>
    caller.call({ method: "POST", path: "/api/auth/nonce", body: { address: params.address, chainId: params.chainId }, idempotent: true }, options);
  const verify: AuthResource["verify"] = (params, options) =>
    caller.call({ method: "POST", path: "/api/auth/verify", body: { message: params.message, signature: params.signature }, idempotent: false }, options);
  return {
    nonce,
    verify,
    async signIn(params, options) {
      const issued = await nonce({ address: params.address, chainId: params.chainId }, options);
      const base = new URL(caller.baseUrl);
      const message = buildSiweMessage({
        domain: params.domain ?? base.host,
        address: params.address,
        statement: params.statement ?? DEFAULT_SIGN_IN_STATEMENT,
        uri: params.uri ?? base.origin,
        chainId: params.chainId,
        nonce: issued.nonce,
        issuedAt: params.issuedAt,
        expirationTime: params.expirationTime,
      });
      const signature = await params.signMessage(message);
      const session = await verify({ message, signature }, options);
      if (params.useToken !== false) caller.setSessionToken(session.token);
      return session;
    },
    session: (options) => caller.call({ method: "GET", path: "/api/auth/session", idempotent: true, bearer: "wallet" }, options),
    signOut: (options) => {
      const own = caller.sessionToken();
      const used = options?.sessionToken === undefined ? own : (options.sessionToken ?? undefined);
      const call = caller.call<SignedOut>({ method: "DELETE", path: "/api/auth/session", idempotent: true, bearer: "wallet" }, options);
      // Forget the client's token once the gateway ended it (a failed sign-out keeps it).
      return APIPromise.map(call.withResponse(), (body) => {
        if (own !== undefined && used === own && caller.sessionToken() === own) caller.setSessionToken(undefined);
        return body;
      });
    },
  };
}
