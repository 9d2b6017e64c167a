import { describe, expect, it } from "vitest";
import { quotedSpeechSeconds } from "./speech-length.js";

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
    expect(quotedSpeechSeconds("中文测试")).toBe(2); // 4 × 0.3 s
    expect(quotedSpeechSeconds("Привет мир".repeat(10))).toBe(12); // 90 Cyrillic letters at 0.12 s, 10 spaces at 0.08 s
  });
});
