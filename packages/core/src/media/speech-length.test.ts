import { describe, expect, it } from "vitest";
import { measuredSpeechSeconds, quotedSpeechSeconds } from "./speech-length.js";

describe("quotedSpeechSeconds bounds the audio by what each character can take to say", () => {
  it("Latin text at ~0.08 s a character; slower speed longer; faster speed no shorter", () => {
    expect(quotedSpeechSeconds("a".repeat(200))).toBe(16);
    expect(quotedSpeechSeconds("a".repeat(200), 0.5)).toBe(32);
    expect(quotedSpeechSeconds("a".repeat(200), 4)).toBe(16);
    expect(quotedSpeechSeconds("")).toBe(1);
  });

  it("digits, symbols read out, CJK and other scripts count for more", () => {
    // "987654321 " × 20: 180 digits at 0.8 s and 20 spaces at 0.08 s: 145.6 s. Spoken, each ~5.6 s: 112 s.
    expect(quotedSpeechSeconds("987654321 ".repeat(20))).toBe(146);
    expect(quotedSpeechSeconds("$%&@#+=/*<>~^|\\_")).toBe(10);
    // Any Unicode symbol or number, not only ASCII: math, currency, fractions, superscripts, Roman numerals, degrees.
    expect(quotedSpeechSeconds("≤≥≠±∞∑√€£¥°©")).toBe(8); // 12 × 0.6 s = 7.2 s
    expect(quotedSpeechSeconds("½¾²³Ⅻↈ")).toBe(5); // 6 × 0.8 s = 4.8 s
    expect(quotedSpeechSeconds("中文测试")).toBe(2); // 4 × 0.3 s
    expect(quotedSpeechSeconds("Привет мир".repeat(10))).toBe(12); // 90 Cyrillic letters at 0.12 s, 10 spaces at 0.08 s
  });
});

describe("measuredSpeechSeconds reads only bytes that open as audio, and no more than a billable answer holds", () => {
  it("4 MB of bytes that are not audio are not parsed (billed the quote); parsing them took ~23 s here", async () => {
    expect(await measuredSpeechSeconds(new Uint8Array(4 << 20).fill(0xff), "audio/mpeg", "mp3", 60)).toBeUndefined();
  });

  it("raw PCM is measured by its size only when it says so or was asked for and is no other format", async () => {
    expect(await measuredSpeechSeconds(new Uint8Array(48_000 * 3), "audio/pcm", undefined, 10)).toBe(3);
    expect(await measuredSpeechSeconds(new Uint8Array(48_000 * 3), "application/octet-stream", "pcm", 10)).toBe(3);
    expect(await measuredSpeechSeconds(new Uint8Array(48_000 * 3), "application/octet-stream", "mp3", 10)).toBeUndefined();
  });
});
