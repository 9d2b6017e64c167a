/**
 * A transcription prompt on a model that bills it as text tokens (GPT-4o transcribe): the call is
 * billed the prompt's tokens beside the audio, so a long prompt on a short file is paid for; on
 * `whisper-1`, which bills minutes only, the prompt costs nothing. A local HTTP stub stands in for
 * the upstream; the key is a real one of the gateway's store.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bytesToBase64 } from "../encoding.js";
import { createGateway } from "../gateway.js";
import type { Gateway } from "../gateway-types.js";
import { NATIVE_CATALOG } from "../catalog/generated/native-catalog.js";
import { tokenCounter } from "../metering/tokens.js";
import { priceUsage } from "../metering/usage.js";
import { audioFixture } from "../providers/audio-test-fixtures.js";
import type { GatewayServices } from "../services.js";
import { createMemoryStore } from "../store/memory.js";

const SECRET = "transcription-prompt-secret-0123456789";
const OWNER = "0x00000000000000000000000000000000000000c9";
const MP3 = audioFixture("tone-10s-16k.mp3");
const PROMPT = "語".repeat(4000);
let upstream: Server;
let gateway: Gateway<GatewayServices>;
const prompts: string[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("latin1");
      const prompt = /name="prompt"\r\n\r\n([^\r]*)/.exec(body)?.[1];
      prompts.push(prompt === undefined ? "" : Buffer.from(prompt, "latin1").toString("utf8"));
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ text: "a tone", duration: 10, segments: [{ start: 0, end: 10, text: "a tone" }] }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  gateway = createGateway({
    store: createMemoryStore(),
    sweepIntervalMs: 0,
    internalSecret: SECRET,
    media: { providers: { openai: { type: "openai-compatible", baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1` } } },
  });
});
afterAll(async () => {
  await gateway?.close();
  await new Promise<void>((r) => upstream?.close(() => r()));
});

async function spent(model: string, prompt?: string): Promise<bigint> {
  const created = await gateway.fetch(
    new Request("http://gw.test/api/keys", {
      method: "POST",
      headers: { "x-session-user-address": OWNER, "x-internal-secret": SECRET, "content-type": "application/json" },
      body: JSON.stringify({ budgetLimit: "100000000", expiresAt: Date.now() + 3_600_000, networkId: 8453, purpose: "api" }),
    }),
  );
  const key = (await created.json()) as { token: string; keyId: string };
  const body = Object.assign({ model, file: `data:audio/mpeg;base64,${bytesToBase64(MP3)}` }, prompt === undefined ? {} : { prompt });
  const res = await gateway.fetch(
    new Request("http://gw.test/v1/audio/transcriptions", {
      method: "POST",
      headers: { authorization: `Bearer ${key.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  expect(res.status, await res.clone().text()).toBe(200);
  const view = await gateway.fetch(new Request(`http://gw.test/api/keys/${key.keyId}`, { headers: { authorization: `Bearer ${key.token}` } }));
  return BigInt(((await view.json()) as { budgetUsed: string }).budgetUsed);
}

it("gpt-4o-transcribe bills the prompt's tokens beside the audio; whisper-1 bills the audio alone", async () => {
  const card = NATIVE_CATALOG.find((c) => c.provider === "openai" && c.modelId === "gpt-4o-transcribe")!;
  const tokens = (await tokenCounter()).count(PROMPT);
  expect(tokens).toBeGreaterThan(1000);
  const audio = await spent("gpt-4o-transcribe");
  const withPrompt = await spent("gpt-4o-transcribe", PROMPT);
  expect(prompts.at(-1)).toBe(PROMPT);
  expect(withPrompt).toBe(priceUsage(card, { promptTokens: tokens }, { seconds: 10 }, gateway.services.feeBps).finalAmount);
  expect(withPrompt - audio).toBeGreaterThanOrEqual(priceUsage(card, { promptTokens: tokens }, undefined, gateway.services.feeBps).finalAmount - 1n);
  expect(await spent("whisper-1", PROMPT)).toBe(await spent("whisper-1"));
});
