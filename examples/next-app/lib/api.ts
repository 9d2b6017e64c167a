/**
 * Browser-side calls to the gateway's own HTTP API (same origin), authenticated as a wallet with
 * the `x-session-user-address` header. Wire shapes follow CONTRACT.md; amounts stay strings.
 */

/** A key as `GET /api/keys` lists it (no token material). */
export interface KeyView {
  keyId: string;
  name?: string;
  purpose: "session" | "api";
  chainId: number;
  budgetLimit: string;
  budgetUsed: string;
  budgetReserved: string;
  budgetRemaining: string;
  status: "active" | "revoked" | "expired" | "exhausted";
  createdAt: number;
  expiresAt: number;
  revokedAt?: number;
  lastUsedAt?: number;
}

/** A payment intent as `GET /api/payments/intents` lists it. */
export interface IntentView {
  paymentIntentId: string;
  keyId: string;
  chainId: number;
  status: "authorized" | "settled" | "aborted" | "expired";
  service: string | null;
  action: string | null;
  resource: string | null;
  maxAmountWei: string;
  finalAmountWei: string | null;
  releasedWei: string | null;
  createdAt: number;
  expiresAt: number;
  finishedAt: number | null;
  reason: string | null;
}

/** One page of intents; `next_cursor` is null on the last page. */
export interface IntentPage {
  intents: IntentView[];
  next_cursor: string | null;
}

/** A non-2xx answer of the gateway, carrying its error envelope's message and code. */
export class GatewayCallError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  constructor(message: string, status: number, code: string | undefined) {
    super(message);
    this.name = "GatewayCallError";
    this.status = status;
    this.code = code;
  }
}

/** Intents shown per page of the dashboard. */
export const INTENT_PAGE_SIZE = 20;
const KEY_PAGE_SIZE = 200;
// A wallet with more than 10,000 keys is not a dashboard case; the cap only stops a cursor loop.
const MAX_KEY_PAGES = 50;

async function getJson<T>(path: string, address: string, signal: AbortSignal): Promise<T> {
  const response = await fetch(path, { headers: { "x-session-user-address": address, accept: "application/json" }, signal, cache: "no-store" });
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    const error = (body as { error?: { message?: unknown; code?: unknown } } | undefined)?.error;
    const message = typeof error?.message === "string" ? error.message : `The gateway answered HTTP ${response.status}.`;
    throw new GatewayCallError(message, response.status, typeof error?.code === "string" ? error.code : undefined);
  }
  if (body === undefined) throw new GatewayCallError("The gateway sent a response that is not JSON.", response.status, undefined);
  return body as T;
}

/**
 * Every key of the wallet, newest first, following `next_cursor` to the end so that totals cover
 * all keys. Rejects with {@link GatewayCallError} (e.g. 400 for an invalid address).
 */
export async function fetchAllKeys(address: string, signal: AbortSignal): Promise<KeyView[]> {
  const keys: KeyView[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_KEY_PAGES; page++) {
    const query = new URLSearchParams({ limit: String(KEY_PAGE_SIZE) });
    if (cursor) query.set("cursor", cursor);
    const body: { keys: KeyView[]; next_cursor: string | null } = await getJson(`/api/keys?${query}`, address, signal);
    keys.push(...body.keys);
    cursor = body.next_cursor;
    if (!cursor) break;
  }
  return keys;
}

/** One page of the wallet's intents, newest first, starting after `cursor` when given. */
export function fetchIntents(address: string, cursor: string | null, signal: AbortSignal): Promise<IntentPage> {
  const query = new URLSearchParams({ limit: String(INTENT_PAGE_SIZE) });
  if (cursor) query.set("cursor", cursor);
  return getJson(`/api/payments/intents?${query}`, address, signal);
}

/** A user-facing sentence for any failure of the calls above. */
export function describeError(error: unknown): string {
  if (error instanceof GatewayCallError) return error.message;
  return `Could not reach the gateway: ${error instanceof Error ? error.message : String(error)}`;
}
