/**
 * A transcription upstream that reports no length (OpenAI's GPT-4o transcribe models answer `json`
 * only: text and token usage) is billed the length the file's headers declare when that is longer
 * than the byte-length estimate at 128 kbit/s: a 16 kbit/s MP3 of 10 s is billed 10 s, not the
 * 1.3 s its bytes read as. A local HTTP stub stands in for the upstream; the key is a real one of
 * the gateway's store.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bytesToBase64 } from "../encoding.js";
import { createGateway } from "../gateway.js";
import type { Gateway } from "../gateway-types.js";
import { NATIVE_CATALOG } from "../catalog/generated/native-catalog.js";
import { priceUsage } from "../metering/usage.js";
import { declaredAudioSeconds } from "../providers/audio-headers.js";
import { audioFixture } from "../providers/audio-test-fixtures.js";
import { ESTIMATE_BITS_PER_SECOND } from "../providers/wav.js";
import type { GatewayServices } from "../services.js";
import { createMemoryStore } from "../store/memory.js";

const SECRET = "transcription-headers-secret-0123456789";
const OWNER = "0x00000000000000000000000000000000000000ca";
const MP3 = audioFixture("tone-10s-16k.mp3");
let upstream: Server;
let gateway: Gateway<GatewayServices>;
let calls = 0;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      calls++;
      const usage = { type: "tokens", input_tokens: 130, input_token_details: { text_tokens: 0, audio_tokens: 130 }, output_tokens: 4, total_tokens: 134 };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ text: "a tone", usage }));
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

/** What a fresh key of 100 USDC spent transcribing `file` on gpt-4o-transcribe. */
async function spent(file: Uint8Array): Promise<bigint> {
  const created = await gateway.fetch(
    new Request("http://gw.test/api/keys", {
      method: "POST",
      headers: { "x-session-user-address": OWNER, "x-internal-secret": SECRET, "content-type": "application/json" },
      body: JSON.stringify({ budgetLimit: "100000000", expiresAt: Date.now() + 3_600_000, networkId: 8453, purpose: "api" }),
    }),
  );
  const key = (await created.json()) as { token: string; keyId: string };
  const res = await gateway.fetch(
    new Request("http://gw.test/v1/audio/transcriptions", {
      method: "POST",
      headers: { authorization: `Bearer ${key.token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-transcribe", file: `data:audio/mpeg;base64,${bytesToBase64(file)}` }),
    }),
  );
  expect(res.status, await res.clone().text()).toBe(200);
  expect(((await res.json()) as { text: string }).text).toBe("a tone");
  const view = await gateway.fetch(new Request(`http://gw.test/api/keys/${key.keyId}`, { headers: { authorization: `Bearer ${key.token}` } }));
  const budget = (await view.json()) as { budgetUsed: string; budgetReserved: string };
  expect(budget.budgetReserved).toBe("0");
  return BigInt(budget.budgetUsed);
}

const card = NATIVE_CATALOG.find((c) => c.provider === "openai" && c.modelId === "gpt-4o-transcribe")!;
const price = (seconds: number) => priceUsage(card, undefined, { seconds: Math.ceil(seconds * 1e6) / 1e6 }, gateway.services.feeBps).finalAmount;

it("a 16 kbit/s MP3 of 10 s is billed the 10.08 s its Info tag declares, not the 1.3 s its bytes read as at 128 kbit/s", async () => {
  const declared = declaredAudioSeconds(MP3)!;
  expect(declared).toBeCloseTo(10.08, 2);
  const estimate = (MP3.length * 8) / ESTIMATE_BITS_PER_SECOND;
  expect(price(declared)).toBeGreaterThan(5n * price(estimate));
  expect(await spent(MP3)).toBe(price(declared));
  expect(calls).toBe(1);
});

it("a file whose headers the gateway does not find (a byte before them) is billed the byte-length estimate, as before", async () => {
  const hidden = new Uint8Array(Buffer.concat([Buffer.of(0), MP3]));
  expect(await spent(hidden)).toBe(price((hidden.length * 8) / ESTIMATE_BITS_PER_SECOND));
});
