/**
 * Stopping the real CLI while a paid call waits on its upstream: a Ctrl-C relayed twice at once
 * (as npm and tsx pass it on) is one graceful stop, and the call is answered and charged before the
 * process exits 0 with nothing left reserved. A node:http stub standing in for OpenAI answers after
 * a second; the SQLite file is read back after the exit.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSqliteStore } from "@tollgate/sqlite";
import { startCli } from "./testing/cli-process.js";
import { startSlowEmbeddingsUpstream, type SlowEmbeddingsUpstream } from "./testing/slow-embeddings-upstream.js";

const SECRET = "cli-shutdown-internal-secret-01";
let upstream: SlowEmbeddingsUpstream;

beforeAll(async () => {
  upstream = await startSlowEmbeddingsUpstream(1_000);
});
afterAll(() => upstream?.close());

it("SIGINT twice in a moment during a paid call: one graceful stop; the call is answered and charged, exit 0, nothing reserved", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-cli-stop-"));
  const db = join(dir, "t.db");
  const config = join(dir, "config.json");
  writeFileSync(
    config,
    JSON.stringify({
      media: {
        providers: { openai: { type: "openai-compatible", baseUrl: upstream.baseUrl, apiKey: "sk-test" } },
      },
    }),
  );
  const run = startCli(["serve", "--port", "0", "--db", db, "--config", config], { TOLLGATE_INTERNAL_SECRET: SECRET, TOLLGATE_DEV_CHAIN: "off" });
  try {
    const url = await run.url();
    const created = await fetch(`${url}/api/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-session-user-address": "0x00000000000000000000000000000000000000c1", "x-internal-secret": SECRET },
      body: JSON.stringify({ budgetLimit: "100000000", expiresAt: Date.now() + 3_600_000, networkId: 8453, purpose: "api" }),
    });
    const key = (await created.json()) as { keyId: string; token: string };
    const atUpstream = upstream.nextArrival();
    const call = fetch(`${url}/v1/embeddings`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key.token}` },
      body: JSON.stringify({ model: "text-embedding-3-small", input: "hello" }),
    });
    await atUpstream;
    // The second after the first was handled (two pending signals of one kind would merge into one).
    run.child.kill("SIGINT");
    await new Promise((r) => setTimeout(r, 200));
    run.child.kill("SIGINT");
    const res = await call;
    expect(res.status).toBe(200);
    const charged = BigInt(((await res.json()) as { receipt: { finalAmountWei: string } }).receipt.finalAmountWei);
    expect(await run.exited).toBe(0);
    const store = createSqliteStore({ filename: db });
    try {
      const after = await store.getKeyById(key.keyId);
      expect([after?.budgetUsed, after?.budgetReserved]).toEqual([charged, 0n]);
    } finally {
      await store.close();
    }
  } finally {
    if (run.child.exitCode === null) run.child.kill("SIGKILL");
  }
}, 60_000);
