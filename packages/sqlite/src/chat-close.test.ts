/**
 * Closing the gateway while a stream whose client left is still being billed: `close()` waits for
 * that billing before it closes the store, so the key pays the upstream's usage (a reasoning model
 * is read on to its usage after its client leaves). A real SQLite file, reopened after the close.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway, priceChat } from "@tollgate/core";
import { startChatStub, STUB_USAGE, TRICKLE_USAGE, type ChatStub } from "@tollgate/testing";
import { createSqliteStore } from "./store.js";

const SECRET = "chat-close-s3cret-s3cret";
const OWNER = "0x00000000000000000000000000000000000000a1";
const dir = mkdtempSync(join(tmpdir(), "tollgate-chat-close-"));
let stub: ChatStub;

beforeAll(async () => void (stub = await startChatStub()));
afterAll(async () => {
  await stub?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A gateway on a new SQLite file `name` whose chat upstream is the stub in `mode`, with a funded key. */
async function open(name: string, mode: string) {
  const filename = join(dir, name);
  const gateway = createGateway({
    store: createSqliteStore({ filename }),
    sweepIntervalMs: 0,
    internalSecret: SECRET,
    media: { providers: { openai: { type: "openai-compatible", baseUrl: `${stub.url}/${mode}` } } },
  });
  const call = (path: string, headers: Record<string, string>, body: unknown) =>
    gateway.fetch(
      new Request(`http://gw.test${path}`, {
        method: "POST",
        headers: Object.assign({ "content-type": "application/json" }, headers),
        body: JSON.stringify(body),
      }),
    );
  const created = await call(
    "/api/keys",
    { "x-session-user-address": OWNER, "x-internal-secret": SECRET },
    { budgetLimit: "100000000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" },
  );
  const key = (await created.json()) as { keyId: string; token: string };
  const o4mini = (usage: { prompt_tokens: number; completion_tokens: number }) =>
    priceChat(
      gateway.services.catalog.get("o4-mini"),
      { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens },
      gateway.services.feeBps,
    ).finalAmount;
  /** The key as stored, read from the file reopened after the gateway closed. */
  const storedKey = async () => {
    const reopened = createSqliteStore({ filename, checkpointIntervalMs: 0 });
    try {
      const stored = await reopened.getKeyById(key.keyId);
      return { used: stored?.budgetUsed, reserved: stored?.budgetReserved };
    } finally {
      await reopened.close();
    }
  };
  return { gateway, call, key, o4mini, storedKey };
}

it("close() waits for a stream's billing after its client left, then closes the store: the key pays the upstream's usage", async () => {
  const { gateway, call, key, o4mini, storedKey } = await open("gw.db", "trickle-50");
  const res = await call(
    "/v1/chat/completions",
    { authorization: `Bearer ${key.token}` },
    { model: "o4-mini", messages: [{ role: "user", content: "think" }], stream: true },
  );
  const reader = res.body!.getReader();
  await reader.read();
  await reader.read();
  // The client leaves (without waiting for what that starts) and the process shuts down at once.
  void reader.cancel().catch(() => undefined);
  await gateway.close();
  expect(await storedKey()).toEqual({ used: o4mini(TRICKLE_USAGE), reserved: 0n });
});

it("close() waits for a reasoning model's call still waiting on its upstream (not streamed): billed its usage before the store closes", async () => {
  const { gateway, call, key, o4mini, storedKey } = await open("gw2.db", "slow-400");
  const seen = stub.bodies.length;
  const answer = call("/v1/chat/completions", { authorization: `Bearer ${key.token}` }, { model: "o4-mini", messages: [{ role: "user", content: "think" }] });
  while (stub.bodies.length === seen) await new Promise((r) => setTimeout(r, 10));
  // Shut down while the upstream is still thinking.
  await gateway.close();
  await answer;
  expect(await storedKey()).toEqual({ used: o4mini(STUB_USAGE), reserved: 0n });
});
