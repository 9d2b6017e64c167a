/**
 * Seeds wallets through the gateway's public HTTP API only, the way a real client would: each
 * wallet signs in with Sign-In with Ethereum (`@tollgate/client`'s `auth.signIn`, signed by a
 * viem local account) and creates its keys with that session (POST /api/keys); intents with
 * prepare / settle / abort, a revocation with DELETE, paid by the keys.
 */
import { createTollgateClient } from "@tollgate/client";
import type { PrivateKeyAccount } from "viem/accounts";

/** What was created, for the assertions. */
export interface Seeded {
  keys: { research: string; chat: string; old: string; trial: string };
  /** The research key's token as created (for the rotation check). */
  researchToken: string;
  /** Expiry of the short-lived key (ms); the page is read only after it passed. */
  trialExpiresAt: number;
  research: { settled: string; aborted: string; authorized: string };
  /** The chat key's intents, each prepared for 0.02 and settled for 0.015 USDC. */
  chatSettled: string[];
}

/** Expiry of the long-lived seeded keys: 2031-01-15 12:00 UTC. */
export const SEED_EXPIRES_AT = Date.UTC(2031, 0, 15, 12, 0);

/** How many intents the chat key settles (one more page than the dashboard's 20). */
export const CHAT_INTENTS = 20;

async function call<T>(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<T> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`seed: ${method} ${path} → ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Signs `account` in on the app at `base` (SIWE for its host) and returns the session token. */
export async function signIn(base: string, account: PrivateKeyAccount, chainId = 8453): Promise<string> {
  const client = createTollgateClient({ baseUrl: base, maxRetries: 0 });
  const session = await client.auth.signIn({ address: account.address, chainId, signMessage: (message) => account.signMessage({ message }) });
  return session.token;
}

/** Creates the seed data of the browser test for the wallet of `account` on the app at `base`. */
export async function seedWallet(base: string, account: PrivateKeyAccount): Promise<Seeded> {
  const owner = { authorization: `Bearer ${await signIn(base, account)}` };
  const createKey = (body: Record<string, unknown>) => call<{ keyId: string; token: string }>(base, "POST", "/api/keys", owner, body);
  const bearer = (token: string, chainId: number) => ({ authorization: `Bearer ${token}`, "x-network-id": String(chainId) });
  const prepare = async (token: string, chainId: number, maxAmountWei: string, action: string) => {
    const body = { service: "inference", action, resource: "/v1/chat/completions", method: "POST", maxAmountWei };
    return (await call<{ paymentIntentId: string }>(base, "POST", "/api/payments/prepare", bearer(token, chainId), body)).paymentIntentId;
  };
  const settle = (id: string, finalAmountWei: string) => call(base, "POST", "/api/payments/settle", {}, { paymentIntentId: id, finalAmountWei });

  const research = await createKey({ name: "Research agent", purpose: "api", networkId: 8453, budgetLimit: "25000000", expiresAt: SEED_EXPIRES_AT });
  const settled = await prepare(research.token, 8453, "2000000", "chat.completions");
  await settle(settled, "1250000");
  const aborted = await prepare(research.token, 8453, "750000", "images.generate");
  await call(base, "POST", "/api/payments/abort", {}, { paymentIntentId: aborted, reason: "client cancelled" });
  const authorized = await prepare(research.token, 8453, "500000", "embeddings");
  // A later timestamp than the research intents, so the first page holds chat intents only.
  await new Promise((r) => setTimeout(r, 20));

  const chat = await createKey({ name: "Chat session", purpose: "session", chainId: 84532, budgetLimit: "5000000", expiresAt: SEED_EXPIRES_AT });
  const chatSettled: string[] = [];
  for (let i = 0; i < CHAT_INTENTS; i++) {
    const id = await prepare(chat.token, 84532, "20000", "chat.completions");
    await settle(id, "15000");
    chatSettled.push(id);
  }

  const old = await createKey({ name: "Old key", purpose: "api", networkId: 8453, budgetLimit: "1000000", expiresAt: SEED_EXPIRES_AT });
  await call(base, "DELETE", `/api/keys/${old.keyId}`, { authorization: `Bearer ${old.token}` });

  const trialExpiresAt = Date.now() + 1500;
  const trial = await createKey({ name: "Short trial", purpose: "api", networkId: 8453, budgetLimit: "3000000", expiresAt: trialExpiresAt });

  return {
    keys: { research: research.keyId, chat: chat.keyId, old: old.keyId, trial: trial.keyId },
    researchToken: research.token,
    trialExpiresAt,
    research: { settled, aborted, authorized },
    chatSettled,
  };
}

/** Another wallet's key with one settled intent: the dashboard of the seeded wallet must not show it. */
export async function seedOtherWallet(base: string, account: PrivateKeyAccount): Promise<{ keyId: string; intentId: string }> {
  const owner = { authorization: `Bearer ${await signIn(base, account)}` };
  const key = await call<{ keyId: string; token: string }>(base, "POST", "/api/keys", owner, {
    name: "Other wallet key",
    purpose: "api",
    networkId: 8453,
    budgetLimit: "9000000",
    expiresAt: SEED_EXPIRES_AT,
  });
  const body = { service: "inference", action: "other.wallet", resource: "/v1/chat/completions", method: "POST", maxAmountWei: "100000" };
  const headers = { authorization: `Bearer ${key.token}`, "x-network-id": "8453" };
  const { paymentIntentId } = await call<{ paymentIntentId: string }>(base, "POST", "/api/payments/prepare", headers, body);
  await call(base, "POST", "/api/payments/settle", {}, { paymentIntentId, finalAmountWei: "50000" });
  return { keyId: key.keyId, intentId: paymentIntentId };
}
