/**
 * A transcription prompt on a model that bills it as text tokens (GPT-4o transcribe): the call is
 * billed the prompt's tokens beside the audio, so a long prompt on a short file is paid for; on
 * `whisper-1`, which bills minutes only, the prompt costs nothing. A local HTTP stub stands in for
 * the upstream; the key is a real one of the gateway's store.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { bytesToBase64 } from "../encoding.js";
import { NATIVE_CATALOG } from "../catalog/generated/native-catalog.js";
import { tokenCounter } from "../metering/tokens.js";
import { priceUsage } from "../metering/usage.js";
import { audioFixture } from "../providers/audio-test-fixtures.js";
import { startTranscriptionGateway, type TranscriptionGateway } from "./transcription-test-fixtures.js";

const OWNER = "0x00000000000000000000000000000000000000c9";
const MP3 = audioFixture("tone-10s-16k.mp3");
const PROMPT = "語".repeat(4000);
let gw: TranscriptionGateway;

beforeAll(async () => {
  gw = await startTranscriptionGateway(() => ({ text: "a tone", duration: 10, segments: [{ start: 0, end: 10, text: "a tone" }] }));
});
afterAll(async () => {
  await gw?.close();
});

const spent = async (model: string, prompt?: string) =>
  (await gw.spent(OWNER, Object.assign({ model, file: `data:audio/mpeg;base64,${bytesToBase64(MP3)}` }, prompt === undefined ? {} : { prompt }))).used;

/** The prompt field of the stub's last multipart request, as UTF-8. */
const lastPrompt = () => {
  const prompt = /name="prompt"\r\n\r\n([^\r]*)/.exec(gw.bodies.at(-1) ?? "")?.[1];
  return prompt === undefined ? "" : Buffer.from(prompt, "latin1").toString("utf8");
};

it("gpt-4o-transcribe bills the prompt's tokens beside the audio; whisper-1 bills the audio alone", async () => {
  const card = NATIVE_CATALOG.find((c) => c.provider === "openai" && c.modelId === "gpt-4o-transcribe")!;
  const { feeBps } = gw.gateway.services;
  const tokens = (await tokenCounter()).count(PROMPT);
  expect(tokens).toBeGreaterThan(1000);
  const audio = await spent("gpt-4o-transcribe");
  const withPrompt = await spent("gpt-4o-transcribe", PROMPT);
  expect(lastPrompt()).toBe(PROMPT);
  expect(withPrompt).toBe(priceUsage(card, { promptTokens: tokens }, { seconds: 10 }, feeBps).finalAmount);
  expect(withPrompt - audio).toBeGreaterThanOrEqual(priceUsage(card, { promptTokens: tokens }, undefined, feeBps).finalAmount - 1n);
  expect(await spent("whisper-1", PROMPT)).toBe(await spent("whisper-1"));
});
