/**
 * What the dashboard needs on top of `@tollgate/client`: a client of the gateway on this origin,
 * the wallet session (Sign-In with Ethereum, carried by the gateway's HttpOnly cookie), every key
 * of the signed-in wallet (all pages), a page of its intents, its usage, and one sentence per failure.
 */
import {
  AuthenticationError,
  createTollgateClient,
  TollgateError,
  type IntentList,
  type TollgateClient,
  type WalletSession,
  type WalletUsage,
} from "@tollgate/client";
import type { GovernedKey } from "./key-admin";
import { connectWallet, isUserRejection, personalSign, type Eip1193Provider } from "./wallet";

/** Intents shown per page of the dashboard. */
export const INTENT_PAGE_SIZE = 20;
const KEY_PAGE_SIZE = 200;
// A wallet with more than 10,000 keys is not a dashboard case; the cap only stops a cursor loop.
const MAX_KEY_PAGES = 50;

/**
 * A client of the gateway served beside this page. It holds no credential: the browser sends
 * the `tollgate_session` cookie (`__Host-tollgate_session` over https; HttpOnly, same origin) that proves the signed-in wallet, so the
 * session token never sits in page memory. Browser only (reads `window.location`). One retry
 * for a transient failure of the GETs.
 */
export function gatewayClient(): TollgateClient {
  return createTollgateClient({
    baseUrl: window.location.origin,
    maxRetries: 1,
    // The answers vary by the session cookie: never reuse a cached one.
    fetch: (input, init) => fetch(input, { ...init, cache: "no-store", credentials: "same-origin" }),
  });
}

/** The wallet session of this browser (its cookie), or null when it has none or it ended. */
export async function currentSession(client: TollgateClient, signal?: AbortSignal): Promise<WalletSession | null> {
  try {
    return await client.auth.session({ signal });
  } catch (error) {
    if (error instanceof AuthenticationError) return null;
    throw error;
  }
}

/**
 * Signs in with the browser wallet: its account and chain, a nonce, the SIWE message for this
 * host signed with `personal_sign`, then verify — whose answer sets the session cookie. Resolves
 * to the session; rejects with the wallet's error when the user declines.
 */
export async function signInWithWallet(client: TollgateClient, provider: Eip1193Provider): Promise<WalletSession> {
  const { address, chainId } = await connectWallet(provider);
  await client.auth.signIn({ address, chainId, signMessage: personalSign(provider, address), useToken: false });
  // The cookie now proves the wallet: read the session back as every later call will see it.
  const session = await currentSession(client);
  if (!session) throw new Error("Signed in, but the browser did not keep the session cookie.");
  return session;
}

/**
 * Every key of the signed-in wallet, newest first, following `next_cursor` to the end so that
 * totals cover all keys. Rejects with the client's errors (`AuthenticationError` once the session
 * ended, `UserAbortError` once `signal` aborts). The gateway's key view carries the governance
 * fields (period, models, caps) whether or not the client's `ServiceKey` declares them.
 */
export async function fetchAllKeys(client: TollgateClient, signal: AbortSignal): Promise<GovernedKey[]> {
  const keys: GovernedKey[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_KEY_PAGES; page++) {
    const body = await client.keys.list({ limit: KEY_PAGE_SIZE, cursor }, { signal });
    keys.push(...body.keys);
    cursor = body.next_cursor ?? undefined;
    if (!cursor) break;
  }
  return keys;
}

/** One page of {@link INTENT_PAGE_SIZE} intents of the signed-in wallet, newest first, after `cursor` when given. */
export function fetchIntents(client: TollgateClient, cursor: string | null, signal: AbortSignal): Promise<IntentList> {
  return client.payments.list({ limit: INTENT_PAGE_SIZE, cursor: cursor ?? undefined }, { signal });
}

/**
 * The signed-in wallet's usage over `range` (UTC days, both included; `client.usage.get`): spend
 * by day (every day, ascending) and by model (most spent first), and what its open reservations
 * hold now.
 */
export function fetchUsage(client: TollgateClient, range: { from: string; to: string }, signal: AbortSignal): Promise<WalletUsage> {
  return client.usage.get(range, { signal });
}

/**
 * A user-facing sentence for any failure of the calls above: the wallet's refusal, the
 * gateway's own message for an error answer (its envelope `error.message`), else why the gateway
 * or the wallet could not be reached.
 */
export function describeError(error: unknown): string {
  if (isUserRejection(error)) return "The wallet declined the request.";
  if (error instanceof TollgateError && error.status !== undefined) {
    const envelope = (error.body as { error?: { message?: unknown } } | null | undefined)?.error;
    return typeof envelope?.message === "string" ? envelope.message : error.message;
  }
  if (error instanceof TollgateError) return `Could not reach the gateway: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * {@link describeError} for an action of the signed-in page (saving, rotating, reading history):
 * when the gateway no longer accepts the session it calls `onSessionEnded` (the page returns to
 * "Sign in") and returns undefined; otherwise the sentence to show.
 */
export function actionError(error: unknown, onSessionEnded: () => void): string | undefined {
  if (error instanceof AuthenticationError) {
    onSessionEnded();
    return undefined;
  }
  return describeError(error);
}
