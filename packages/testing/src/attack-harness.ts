/**
 * The harness of the attack suite: a gateway over a real store, reached through a {@link Connect}
 * (directly or through an adapter on a real port), two real wallets (viem local accounts) that
 * sign in with Sign-In with Ethereum, and helpers that speak the wire.
 */
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { expect } from "vitest";
import { createManualClock, type ManualClock } from "@tollgate/core";
import { createGateway } from "@tollgate/core";
import type { GatewayOptions } from "@tollgate/core";
import type { Store } from "@tollgate/core";
import { ANVIL_ACCOUNTS } from "./anvil.js";
import type { Connect } from "./catalog-route-suite.js";

/** Options of the attack suite. */
export interface AttackSuiteOptions {
  /** A fresh, empty store per test; the gateway closes it. */
  createStore: () => Promise<Store> | Store;
  /** How the suite reaches the gateway: directly, or through an adapter on a real port. */
  connect: Connect;
}

export const CHAIN = 8453;
export const DAY = 86_400_000;
export const SECRET = "attack-suite-internal-secret-42";
/** The host every request names; SIWE messages must sign in to it. */
export const HOST = "gateway.test";

/** A wallet that can sign. */
export interface Wallet {
  readonly account: PrivateKeyAccount;
  /** Lower-case address (as the gateway stores it). */
  readonly address: string;
}

export const victim: Wallet = walletOf(1);
export const attacker: Wallet = walletOf(2);

function walletOf(i: number): Wallet {
  const account = privateKeyToAccount(ANVIL_ACCOUNTS[i]!.privateKey);
  return { account, address: account.address.toLowerCase() };
}

/** A reply read once. */
export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

/** One gateway, one clock, and the wire helpers. */
export interface AttackHarness {
  readonly clock: ManualClock;
  /** Sends a request; a `json` body gets Content-Type application/json. Every request names Host {@link HOST}. */
  call(method: string, path: string, init?: { headers?: Record<string, string>; json?: unknown; raw?: string }): Promise<Reply>;
  /** A SIWE message for `wallet` with a fresh nonce from the gateway; `fields` override message fields. */
  siweMessage(wallet: Wallet, fields?: Partial<Parameters<typeof createSiweMessage>[0]>): Promise<string>;
  /** Signs in `wallet` (nonce → message → signature → verify); returns the `sess_…` token and the reply. */
  signIn(wallet: Wallet): Promise<{ token: string; reply: Reply }>;
  /** Creates an api key for `wallet`, proven by its session `token`; returns the created key. */
  createKey(token: string, fields?: Record<string, unknown>): Promise<any>;
}

/** Runs `fn` against a fresh gateway and closes it. */
export async function withAttackGateway(options: AttackSuiteOptions, fn: (h: AttackHarness) => Promise<void>, extra: Partial<GatewayOptions> = {}): Promise<void> {
  const clock = createManualClock(Date.UTC(2026, 5, 1));
  const gateway = createGateway({ store: await options.createStore(), clock, sweepIntervalMs: 0, internalSecret: SECRET, auth: { domains: [HOST] }, ...extra });
  const client = await options.connect(gateway);
  const call: AttackHarness["call"] = async (method, path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    const body = init.raw ?? (init.json === undefined ? undefined : JSON.stringify(init.json));
    if (init.json !== undefined) headers["content-type"] ??= "application/json";
    const res = await client.fetch(path, { method, headers, ...(body === undefined ? {} : { body }) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text === "" ? null : JSON.parse(text) };
  };
  const siweMessage: AttackHarness["siweMessage"] = async (wallet, fields = {}) => {
    const n = await call("POST", "/api/auth/nonce", { json: { address: wallet.address, chainId: CHAIN } });
    expect(n.status, JSON.stringify(n.body)).toBe(200);
    return createSiweMessage({
      domain: HOST,
      address: wallet.account.address,
      uri: `http://${HOST}/`,
      version: "1",
      chainId: CHAIN,
      nonce: n.body.nonce,
      issuedAt: new Date(clock.now()),
      statement: "Sign in to Tollgate.",
      ...fields,
    });
  };
  const h: AttackHarness = {
    clock,
    call,
    siweMessage,
    async signIn(wallet) {
      const message = await siweMessage(wallet);
      const signature = await wallet.account.signMessage({ message });
      const reply = await call("POST", "/api/auth/verify", { json: { message, signature } });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      return { token: reply.body.token, reply };
    },
    async createKey(token, fields = {}) {
      const r = await call("POST", "/api/keys", {
        headers: bearer(token),
        json: { budgetLimit: "1000000", expiresAt: clock.now() + DAY, networkId: CHAIN, purpose: "api", ...fields },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body;
    },
  };
  try {
    await fn(h);
  } finally {
    await client.close();
  }
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** Asserts an error envelope with `status` and `code`. */
export function refused(r: Reply, status: number, code: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body?.error?.code, JSON.stringify(r.body)).toBe(code);
  expect(r.body.error.requestId).toBe(r.headers.get("x-request-id"));
}
