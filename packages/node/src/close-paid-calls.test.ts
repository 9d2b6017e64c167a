/**
 * Closing a gateway while a paid call waits on its upstream: the call finishes and settles before
 * the store closes, so nothing is left reserved and the charge is recorded. A real SQLite file, a
 * node:http stub standing in for OpenAI embeddings that answers after a second.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { startSlowEmbeddingsUpstream, type SlowEmbeddingsUpstream } from "./testing/slow-embeddings-upstream.js";

const SECRET = "close-paid-calls-internal-secret";
const OWNER = "0x00000000000000000000000000000000000000c1";
let upstream: SlowEmbeddingsUpstream;

beforeAll(async () => {
  upstream = await startSlowEmbeddingsUpstream(1_000);
});
afterAll(() => upstream?.close());

it("close() while an embeddings call waits on its upstream: the call is answered and charged, and nothing stays reserved", async () => {
  const filename = join(mkdtempSync(join(tmpdir(), "tollgate-close-")), "gw.db");
  const gateway = createGateway({
    store: createSqliteStore({ filename }),
    sweepIntervalMs: 0,
    internalSecret: SECRET,
    media: {
      providers: { openai: { type: "openai-compatible", baseUrl: upstream.baseUrl, apiKey: "sk-test" } },
    },
  });
  const created = await gateway.fetch(
    new Request("http://gw.test/api/keys", {
      method: "POST",
      headers: { "content-type": "application/json", "x-session-user-address": OWNER, "x-internal-secret": SECRET },
      body: JSON.stringify({ budgetLimit: "100000000", expiresAt: Date.now() + 3_600_000, networkId: 8453, purpose: "api" }),
    }),
  );
  const key = (await created.json()) as { keyId: string; token: string };
  const atUpstream = upstream.nextArrival();
  const call = gateway.fetch(
    new Request("http://gw.test/v1/embeddings", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key.token}` },
      body: JSON.stringify({ model: "text-embedding-3-small", input: "hello" }),
    }),
  );
  await atUpstream;
  const closed = gateway.close();
  const res = await call;
  expect(res.status).toBe(200);
  const charged = BigInt(((await res.json()) as { receipt: { finalAmountWei: string } }).receipt.finalAmountWei);
  await closed;

  const store = createSqliteStore({ filename });
  try {
    const after = await store.getKeyById(key.keyId);
    expect([after?.budgetUsed, after?.budgetReserved]).toEqual([charged, 0n]);
  } finally {
    await store.close();
  }
});
