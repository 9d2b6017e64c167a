/**
 * A transcription upstream that reports no length (OpenAI's GPT-4o transcribe models answer `json`
 * only: text and token usage) is billed the length the file's headers declare when that is longer
 * than the byte-length estimate at 128 kbit/s: a 16 kbit/s MP3 of 10 s is billed 10 s, not the
 * 1.3 s its bytes read as. A local HTTP stub stands in for the upstream; the key is a real one of
 * the gateway's store.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { bytesToBase64 } from "../encoding.js";
import { NATIVE_CATALOG } from "../catalog/generated/native-catalog.js";
import { priceUsage } from "../metering/usage.js";
import { declaredAudioSeconds } from "../providers/audio-headers.js";
import { audioFixture } from "../providers/audio-test-fixtures.js";
import { ESTIMATE_BITS_PER_SECOND } from "../providers/wav.js";
import { startTranscriptionGateway, type TranscriptionGateway } from "./transcription-test-fixtures.js";

const OWNER = "0x00000000000000000000000000000000000000ca";
const MP3 = audioFixture("tone-10s-16k.mp3");
const USAGE = { type: "tokens", input_tokens: 130, input_token_details: { text_tokens: 0, audio_tokens: 130 }, output_tokens: 4, total_tokens: 134 };
let gw: TranscriptionGateway;

beforeAll(async () => {
  gw = await startTranscriptionGateway(() => ({ text: "a tone", usage: USAGE }));
});
afterAll(async () => {
  await gw?.close();
});

/** What a fresh key spent transcribing `file` on gpt-4o-transcribe. */
async function spent(file: Uint8Array): Promise<bigint> {
  const { text, used } = await gw.spent(OWNER, { model: "gpt-4o-transcribe", file: `data:audio/mpeg;base64,${bytesToBase64(file)}` });
  expect(text).toBe("a tone");
  return used;
}

const card = NATIVE_CATALOG.find((c) => c.provider === "openai" && c.modelId === "gpt-4o-transcribe")!;
const price = (seconds: number) => priceUsage(card, undefined, { seconds: Math.ceil(seconds * 1e6) / 1e6 }, gw.gateway.services.feeBps).finalAmount;

it("a 16 kbit/s MP3 of 10 s is billed the 10.08 s its Info tag declares, not the 1.3 s its bytes read as at 128 kbit/s", async () => {
  const declared = declaredAudioSeconds(MP3)!;
  expect(declared).toBeCloseTo(10.08, 2);
  const estimate = (MP3.length * 8) / ESTIMATE_BITS_PER_SECOND;
  expect(price(declared)).toBeGreaterThan(5n * price(estimate));
  expect(await spent(MP3)).toBe(price(declared));
  expect(gw.bodies).toHaveLength(1);
});

it("a file whose headers the gateway does not find (a byte before them) is billed the byte-length estimate, as before", async () => {
  const hidden = new Uint8Array(Buffer.concat([Buffer.of(0), MP3]));
  expect(await spent(hidden)).toBe(price((hidden.length * 8) / ESTIMATE_BITS_PER_SECOND));
});
