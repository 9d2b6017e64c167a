/**
 * Closing a gateway while a paid call waits on its upstream: the call finishes and settles before
 * the store closes, so nothing is left reserved and the charge is recorded. A real SQLite file, a
 * node:http stub standing in for OpenAI embeddings that answers after a second.
 */
import http from "node:http";
import { mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";

const SECRET = "close-paid-calls-internal-secret";
const OWNER = "0x00000000000000000000000000000000000000c1";
let upstream: http.Server;
let arrived: () => void = () => {};

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      arrived();
      setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            object: "list",
            data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }],
            model: "text-embedding-3-small",
            usage: { prompt_tokens: 3, total_tokens: 3 },
          }),
        );
      }, 1_000);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
});
afterAll(async () => {
  upstream?.closeAllConnections();
  await new Promise((r) => upstream?.close(r));
});

it("close() while an embeddings call waits on its upstream: the call is answered and charged, and nothing stays reserved", async () => {
  const filename = join(mkdtempSync(join(tmpdir(), "tollgate-close-")), "gw.db");
  const gateway = createGateway({
    store: createSqliteStore({ filename }),
    sweepIntervalMs: 0,
    internalSecret: SECRET,
    media: {
      providers: { openai: { type: "openai-compatible", baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, apiKey: "sk-test" } },
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
  const atUpstream = new Promise<void>((r) => (arrived = r));
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
