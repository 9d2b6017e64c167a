/**
 * Wallet sessions: Sign-In with Ethereum (EIP-4361) on viem's `viem/siwe`. A wallet asks for a
 * nonce, signs a SIWE message carrying it, and trades message and signature for a `sess_…`
 * token that proves the wallet until it expires or is signed out: on every chain when the
 * address's own key signed, only on the message's chain when a smart wallet's contract accepted
 * the signature. Tokens are stored as SHA-256 hashes only, like service keys.
 */
import { getAddress, isHex, type Hex } from "viem";
import { generateSiweNonce, parseSiweMessage, validateSiweMessage } from "viem/siwe";
import type { CapabilityDeps } from "../capability.js";
import type { SignatureVerifier } from "../chain/signatures.js";
import { bytesToBase64Url } from "../encoding.js";
import { GatewayError, invalidRequest } from "../errors.js";
import { randomBytes } from "../ids.js";
import { hashToken } from "../keys/token.js";
import type { SessionRecord } from "../store/auth-types.js";

/** Clock skew tolerated on a message's `issuedAt`. */
const SKEW_MS = 5 * 60_000;
const SESSION_TOKEN = /^sess_[A-Za-z0-9_-]{43}$/;

/** What a successful sign-in returns: the token (shown once) and its session. */
export interface SignIn {
  readonly token: string;
  readonly session: SessionRecord;
}

/** The wallet-session service. Refusals throw `GatewayError` with an error code of docs/api.md "Errors". */
export interface AuthService {
  /** Lifetime of a session in ms. */
  readonly sessionTtlMs: number;
  /** Issues a single-use nonce for `address` (lower-cased) that expires after the nonce TTL. */
  issueNonce(input: { address: string; chainId: number }): Promise<{ nonce: string; expiresAt: number }>;
  /**
   * Verifies a signed SIWE message and opens a session. The message's `domain` must be one of
   * `domains`; its time bounds must hold; its nonce is consumed atomically, which succeeds only if
   * it was issued to that address for the message's chain and is unexpired; only then is the
   * signature checked (EOA offline, smart wallets through the chain's RPC), so a caller without an
   * issued nonce never makes the gateway call the chain. A refused signature spends its nonce. The
   * session ends at the message's `Expiration Time` when that comes before the session lifetime.
   * Throws 400 `invalid_request` for a message or signature that does not parse, 401
   * `wallet_unverified` for every other refusal.
   */
  verify(input: { message: string; signature: string; domains: readonly string[] }): Promise<SignIn>;
  /** The live session of a token: null when the token is malformed, unknown, expired or signed out. */
  sessionFor(token: string): Promise<SessionRecord | null>;
  /** Signs a session out (idempotent); false when the token names no session. */
  signOut(token: string): Promise<boolean>;
  /** Deletes expired nonces and sessions; returns how many. */
  prune(): Promise<number>;
}

/** Whether a bearer token has the shape of a wallet session token. */
export const isSessionToken = (token: string): boolean => token.startsWith("sess_");

const unverified = (message: string) => new GatewayError("wallet_unverified", message);

/**
 * The whole text of an EIP-4361 message, line by line: an optional scheme and the domain, the
 * address, an optional one-line statement (the blank lines around it as EIP-4361 or viem's
 * `createSiweMessage` write them), then the fields in their order, optional resources, and at most
 * one final line feed.
 */
const SIWE_SHAPE = new RegExp(
  "^(?:[a-zA-Z][a-zA-Z0-9+\\-.]*://)?[a-zA-Z0-9+\\-.]*(?::[0-9]{1,5})? wants you to sign in with your Ethereum account:\\n0x[a-fA-F0-9]{40}\\n\\n" +
    "(?:(?:[^\\n]+\\n)?\\n)?URI: [^\\n]+\\nVersion: 1\\nChain ID: [0-9]+\\nNonce: [a-zA-Z0-9]+\\nIssued At: [^\\n]+" +
    "(?:\\nExpiration Time: [^\\n]+)?(?:\\nNot Before: [^\\n]+)?(?:\\nRequest ID: [^\\n]*)?(?:\\nResources:(?:\\n- [^\\n]+)+)?\\n?$",
);

/** Creates the wallet-session service. */
export function createAuthService(deps: Pick<CapabilityDeps, "store" | "clock" | "ids" | "options">, verifySignature: SignatureVerifier): AuthService {
  const { store, clock, ids } = deps;
  const sessionTtlMs = deps.options.auth?.sessionTtlMs ?? 24 * 3_600_000;
  const nonceTtlMs = deps.options.auth?.nonceTtlMs ?? 10 * 60_000;

  return {
    sessionTtlMs,
    async issueNonce({ address, chainId }) {
      const now = clock.now();
      const nonce = generateSiweNonce();
      const expiresAt = now + nonceTtlMs;
      await store.insertAuthNonce({ nonce, address: address.toLowerCase(), chainId, issuedAt: now, expiresAt });
      return { nonce, expiresAt };
    },

    async verify({ message, signature, domains }) {
      if (!isHex(signature) || signature.length < 132) throw invalidRequest("signature must be a 0x-prefixed hex signature", "signature");
      // viem's parser anchors the message's first lines only: text around its fields must not pass (what a wallet shows and what is checked must agree).
      if (!SIWE_SHAPE.test(message)) throw invalidRequest("message must be exactly an EIP-4361 (SIWE) message: nothing before, between or after its fields", "message");
      const fields = parseSiweMessage(message);
      if (!fields.address || !fields.nonce || !fields.domain || fields.version !== "1" || fields.chainId === undefined || !fields.uri || !fields.issuedAt)
        throw invalidRequest("message must be an EIP-4361 (SIWE) message with domain, address, uri, version 1, chainId, nonce and issuedAt", "message");
      let address: `0x${string}`;
      try {
        // EIP-4361 requires the checksummed form; getAddress also refuses a wrong checksum.
        address = getAddress(fields.address);
        if (address !== fields.address) throw new Error("not checksummed");
      } catch {
        throw invalidRequest("the message's address must be an EIP-55 checksummed address", "message");
      }
      for (const [name, at] of [["Expiration Time", fields.expirationTime], ["Not Before", fields.notBefore]] as const)
        if (at !== undefined && Number.isNaN(at.getTime())) throw invalidRequest(`the message's ${name} must be an ISO 8601 date-time`, "message");
      const now = clock.now();
      if (!domains.includes(fields.domain)) throw unverified(`The message signs in to ${fields.domain}, not to this gateway (${domains.join(", ")}).`);
      if (!validateSiweMessage({ message: fields, time: new Date(now) })) throw unverified("The message is expired or not yet valid.");
      if (Number.isNaN(fields.issuedAt.getTime()) || fields.issuedAt.getTime() > now + SKEW_MS) throw unverified("The message's issuedAt is invalid or in the future.");
      const nonce = await store.consumeAuthNonce({ nonce: fields.nonce, address: address.toLowerCase(), now: clock.now() });
      if (!nonce) throw unverified("The nonce is unknown, used, expired or was issued to another wallet; ask for a new one.");
      if (nonce.chainId !== fields.chainId) throw unverified(`The nonce was issued for chain ${nonce.chainId}; the message names chain ${fields.chainId}.`);
      const signer = await verifySignature({ address, message, signature: signature as Hex, chainId: fields.chainId });
      if (!signer) throw unverified("The signature is not the wallet's signature of this message; ask for a new nonce and sign again.");
      const token = `sess_${bytesToBase64Url(randomBytes(32))}`;
      const createdAt = clock.now();
      const session: SessionRecord = {
        sessionId: ids.next("ses"),
        tokenHash: hashToken(token),
        address: address.toLowerCase(),
        chainId: fields.chainId,
        signer,
        domain: fields.domain,
        createdAt,
        // Never past the Expiration Time the wallet showed its user.
        expiresAt: Math.min(createdAt + sessionTtlMs, fields.expirationTime?.getTime() ?? Infinity),
      };
      await store.insertSession(session);
      return { token, session };
    },

    async sessionFor(token) {
      if (!SESSION_TOKEN.test(token)) return null;
      const session = await store.getSessionByTokenHash(hashToken(token));
      if (!session || session.revokedAt !== undefined || session.expiresAt <= clock.now()) return null;
      return session;
    },

    async signOut(token) {
      if (!SESSION_TOKEN.test(token)) return false;
      return (await store.revokeSession(hashToken(token), clock.now())) !== null;
    },

    prune: () => store.pruneAuth(clock.now()),
  };
}
