/**
 * Speech on a card priced per audio second (gpt-4o-mini-tts, $0.015 a minute) is billed the length
 * of the audio the upstream returned, in the formats OpenAI returns: through the OpenAI SDK's
 * `audio.speech.create` against the gateway on a real port and a real SQLite file, with a local
 * node:http stub standing in for OpenAI that, like gpt-4o-mini-tts, ignores `speed`. The stub's MP3
 * is built frame by frame (MPEG-1 Layer III, 128 kbit/s, 44.1 kHz: 1,152 samples a frame).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { createSqliteStore } from "@tollgate/sqlite";
import type { RunningServer } from "./server.js";
import { serveOnStub, type KeySpend } from "./testing/served-key.js";

const OWNER = "0x00000000000000000000000000000000000000c7";
const SECRET = "speech-seconds-internal-secret-0123";
/** 200 characters: quoted at 16 s (~0.08 s a character). */
const INPUT = "The quick brown fox jumps over the lazy dog while the gateway meters every second. ".repeat(3).slice(0, 200);

/** `frames` silent MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz, mono, 417 bytes each). */
function mp3(frames: number): Uint8Array {
  const frame = new Uint8Array(417);
  frame.set([0xff, 0xfb, 0x90, 0xc4]);
  const out = new Uint8Array(frame.length * frames);
  for (let i = 0; i < frames; i++) out.set(frame, i * frame.length);
  return out;
}

/** 20 nine-digit numbers: quoted at 146 s (0.8 s a digit); read out, ~5.6 s each. */
const NUMBERS = "987654321 ".repeat(20);

/** What the stub answers per `response_format`: 382 MP3 frames (9.98 s), 7.5 s of 24 kHz PCM, bytes no decoder reads, and (for NUMBERS) 2,870 frames (74.97 s). */
const ANSWERS: Record<string, [contentType: string, body: Uint8Array]> = {
  numbers: ["audio/mpeg", mp3(2_870)],
  mp3: ["audio/mpeg", mp3(382)],
  pcm: ["audio/pcm", new Uint8Array(48_000 * 7.5)],
  opus: ["audio/ogg", new TextEncoder().encode("not an ogg stream at all")],
};

const dir = mkdtempSync(join(tmpdir(), "tollgate-speech-seconds-"));
let running: RunningServer;
let openai: OpenAI;
const speeds: (number | undefined)[] = [];

let keyView: () => Promise<KeySpend>;
let close: () => Promise<void>;

beforeAll(async () => {
  ({
    running,
    openai,
    spend: keyView,
    close,
  } = await serveOnStub(
    (req, res) => {
      let text = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (text += c));
      req.on("end", () => {
        const body = JSON.parse(text) as { input: string; response_format?: string; speed?: number };
        speeds.push(body.speed);
        const [type, audio] = ANSWERS[body.input === NUMBERS ? "numbers" : (body.response_format ?? "mp3")]!;
        res.writeHead(200, { "content-type": type }).end(audio);
      });
    },
    { store: createSqliteStore({ filename: join(dir, "gw.db") }), secret: SECRET, owner: OWNER },
  ));
});

afterAll(async () => {
  await close?.();
  rmSync(dir, { recursive: true, force: true });
});

/** What `POST /api/payments/meter/model` prices `seconds` of gpt-4o-mini-tts at. */
async function priceOf(seconds: number): Promise<string> {
  const res = await fetch(`${running.url}/api/payments/meter/model`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ modelId: "gpt-4o-mini-tts", provider: "openai", modality: "audio", media: { seconds } }),
  });
  return ((await res.json()) as { finalAmountWei: string }).finalAmountWei;
}

/** One speech call; what the key paid for it (its receipt says the same, and nothing stays reserved). */
async function speak(format: "mp3" | "pcm" | "opus", speed?: number, input = INPUT): Promise<string> {
  const before = BigInt((await keyView()).budgetUsed);
  const response = await openai.audio.speech.create({
    model: "gpt-4o-mini-tts",
    voice: "alloy",
    input,
    response_format: format,
    ...(speed ? { speed } : {}),
  });
  expect(Buffer.from(await response.arrayBuffer())).toEqual(Buffer.from(ANSWERS[input === NUMBERS ? "numbers" : format]![1]));
  const after = await keyView();
  expect(after.budgetReserved).toBe("0");
  const receipt = JSON.parse(Buffer.from(response.headers.get("x-receipt") ?? "", "base64url").toString("utf8")) as { finalAmountWei: string };
  const spent = (BigInt(after.budgetUsed) - before).toString();
  expect(receipt.finalAmountWei).toBe(spent);
  return spent;
}

describe("speech on a card priced per audio second is billed the audio's length", () => {
  it("an MP3 answer (the default format) pays its 10 s, not the 16 s quoted", async () => {
    expect(await speak("mp3")).toBe(await priceOf(10));
    expect(await priceOf(10)).not.toBe(await priceOf(16));
  });

  it("speed 4 on a model that ignores it: still the 10 s the audio lasts, not a quarter of the estimate", async () => {
    expect(await speak("mp3", 4)).toBe(await priceOf(10));
    expect(speeds.at(-1)).toBe(4);
  });

  it("raw PCM (24 kHz, 16-bit, mono) pays its length from its size: 7.5 s → 8 s", async () => {
    expect(await speak("pcm")).toBe(await priceOf(8));
  });

  it("numbers read out (each digit a word or more): the quote covers them, and the call pays its 75 s, not the 16 s of 0.08 s a character", async () => {
    expect(await speak("mp3", undefined, NUMBERS)).toBe(await priceOf(75));
  });

  it("an answer no decoder can measure pays the quote's length (16 s)", async () => {
    expect(await speak("opus")).toBe(await priceOf(16));
  });
});
