/** A minimal HTTP client for tests that talk to real gateway processes. */

/** A response with its JSON body parsed. */
export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
}

/** Sends one JSON request to the gateway at `base`. */
export async function call(base: string, method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}): Promise<CallResult> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...init.headers },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
}

/**
 * Creates an `api` key of `owner` on `chainId` with `budgetLimit` atoms through the gateway at
 * `base`, proving the wallet with the gateway's `internalSecret` (as a host app does); resolves
 * with its id and token.
 */
export async function createKey(base: string, owner: string, chainId: number, budgetLimit: bigint, internalSecret: string): Promise<{ keyId: string; token: string }> {
  const res = await call(base, "POST", "/api/keys", {
    headers: { "x-session-user-address": owner, "x-internal-secret": internalSecret },
    body: { budgetLimit: budgetLimit.toString(), expiresAt: Date.now() + 86_400_000, networkId: String(chainId), purpose: "api" },
  });
  if (res.status !== 201) throw new Error(`key creation answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { keyId: res.body.keyId, token: res.body.token };
}
