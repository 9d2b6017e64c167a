/**
 * What the dashboard needs on top of `@tollgate/client`: a client for one wallet on this origin,
 * every key of the wallet (all pages), a page of its intents, and one sentence per failure.
 */
import { createTollgateClient, TollgateError, type IntentList, type ServiceKey, type TollgateClient } from "@tollgate/client";

/** Intents shown per page of the dashboard. */
export const INTENT_PAGE_SIZE = 20;
const KEY_PAGE_SIZE = 200;
// A wallet with more than 10,000 keys is not a dashboard case; the cap only stops a cursor loop.
const MAX_KEY_PAGES = 50;

/**
 * A client of the gateway served beside this page, acting as `address` (`x-session-user-address`).
 * Browser only (reads `window.location`). One retry for a transient failure of these GETs.
 */
export function walletClient(address: string): TollgateClient {
  return createTollgateClient({
    baseUrl: window.location.origin,
    sessionAddress: address,
    maxRetries: 1,
    // The answers vary by the address header but do not say so (no Vary): never reuse a cached one.
    fetch: (input, init) => fetch(input, { ...init, cache: "no-store" }),
  });
}

/**
 * Every key of the client's wallet, newest first, following `next_cursor` to the end so that
 * totals cover all keys. Rejects with the client's errors (e.g. `BadRequestError` for an invalid
 * address, `UserAbortError` once `signal` aborts).
 */
export async function fetchAllKeys(client: TollgateClient, signal: AbortSignal): Promise<ServiceKey[]> {
  const keys: ServiceKey[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_KEY_PAGES; page++) {
    const body = await client.keys.list({ limit: KEY_PAGE_SIZE, cursor }, { signal });
    keys.push(...body.keys);
    cursor = body.next_cursor ?? undefined;
    if (!cursor) break;
  }
  return keys;
}

/** One page of {@link INTENT_PAGE_SIZE} intents of the client's wallet, newest first, after `cursor` when given. */
export function fetchIntents(client: TollgateClient, cursor: string | null, signal: AbortSignal): Promise<IntentList> {
  return client.payments.list({ limit: INTENT_PAGE_SIZE, cursor: cursor ?? undefined }, { signal });
}

/**
 * A user-facing sentence for any failure of the calls above: the gateway's own message for an
 * error answer (its envelope `error.message`, e.g. the 400 for an invalid address), else why the
 * gateway could not be reached.
 */
export function describeError(error: unknown): string {
  if (error instanceof TollgateError && error.status !== undefined) {
    const envelope = (error.body as { error?: { message?: unknown } } | null | undefined)?.error;
    return typeof envelope?.message === "string" ? envelope.message : error.message;
  }
  return `Could not reach the gateway: ${error instanceof Error ? error.message : String(error)}`;
}
