/** Tests of paid routes through the OpenAI SDK: a gateway on a real port with one funded key. */
import http from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { createGateway, type Gateway, type Store } from "@tollgate/core";
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

/**
 * A gateway on `store` whose `openai` provider is a local node:http stub answering with `stub`,
 * served with one key as {@link serveWithKey} makes it. `close()` stops the gateway, then the stub.
 */
export async function serveOnStub(
  stub: http.RequestListener,
  options: { store: Store; secret: string; owner: string },
): Promise<ServedKey & { close(): Promise<void> }> {
  const upstream = http.createServer(stub);
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const gateway = createGateway({
    store: options.store,
    sweepIntervalMs: 0,
    internalSecret: options.secret,
    media: {
      providers: { openai: { type: "openai-compatible", baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, apiKey: "sk-upstream" } },
    },
  });
  const served = await serveWithKey(gateway, options.secret, options.owner);
  const close = async () => {
    await served.running.close({ graceMs: 100 });
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
  };
  return Object.assign(served, { close });
}

/**
 * The gateway's own price of a model's usage or media evidence: `POST /api/payments/meter/model`
 * at `baseUrl` with `{modelId, provider, modality, ...evidence}` (`usage` or `media`). Resolves to
 * its `finalAmountWei`.
 */
export async function meteredPrice(
  baseUrl: string,
  model: { modelId: string; provider: string; modality: string },
  evidence: { usage?: object; media?: object },
): Promise<bigint> {
  const res = await fetch(`${baseUrl}/api/payments/meter/model`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(Object.assign({}, model, evidence)),
  });
  if (res.status !== 200) throw new Error(`meteredPrice: ${res.status}: ${await res.text()}`);
  return BigInt(((await res.json()) as { finalAmountWei: string }).finalAmountWei);
}

/**
 * Reads a request's body as JSON, then calls `answer` with it: the body of an upstream stub's
 * `http.createServer` handler.
 */
export function withJsonBody(answer: (req: http.IncomingMessage, res: http.ServerResponse, body: Record<string, any>) => void): http.RequestListener {
  return (req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (text += c));
    req.on("end", () => answer(req, res, JSON.parse(text) as Record<string, any>));
  };
}
