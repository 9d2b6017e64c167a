/** Tests of paid routes through the OpenAI SDK: a gateway on a real port with one funded key. */
import OpenAI from "openai";
import type { Gateway } from "@tollgate/core";
import { serve, type RunningServer } from "../server.js";

/** A key's spend as `GET /api/keys/{id}` shows it (decimal strings). */
export interface KeySpend {
  budgetUsed: string;
  budgetReserved: string;
}

/** What {@link serveWithKey} gives a test. */
export interface ServedKey {
  readonly running: RunningServer;
  readonly key: { keyId: string; token: string };
  /** The OpenAI SDK on the gateway's `/v1`, with the key, no retries. */
  readonly openai: OpenAI;
  /** The key's spend now. */
  spend(): Promise<KeySpend>;
}

/**
 * Serves `gateway` on an ephemeral port and creates an `api` key of `owner` (budget 100 USDC, a day)
 * with the gateway's internal `secret`. Throws when the key is refused.
 */
export async function serveWithKey(gateway: Gateway, secret: string, owner: string): Promise<ServedKey> {
  const running = await serve(gateway, { port: 0 });
  const res = await fetch(`${running.url}/api/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-session-user-address": owner, "x-internal-secret": secret },
    body: JSON.stringify({ budgetLimit: "100000000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" }),
  });
  if (res.status !== 201) throw new Error(`serveWithKey: the key was refused (${res.status}: ${await res.text()})`);
  const key = (await res.json()) as { keyId: string; token: string };
  const spend = async () =>
    (await (await fetch(`${running.url}/api/keys/${key.keyId}`, { headers: { authorization: `Bearer ${key.token}` } })).json()) as KeySpend;
  return { running, key, openai: new OpenAI({ apiKey: key.token, baseURL: `${running.url}/v1`, maxRetries: 0 }), spend };
}
