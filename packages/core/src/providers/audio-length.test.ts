import { describe, expect, it } from "vitest";
import { audioLength, audioSecondsBound, MIN_AUDIO_BITS_PER_SECOND } from "./audio-length.js";
import { audioFixture, thrice } from "./audio-test-fixtures.js";
import { encodeWav, ESTIMATE_BITS_PER_SECOND } from "./wav.js";

describe("audioLength", () => {
  it.each(["tone-10s-16k.mp3", "tone-10s.ogg", "tone-10s.m4a", "tone-10s.flac", "tone-10s.webm"])("reads the length %s declares", async (name) => {
    const length = await audioLength(audioFixture(name));
    expect(length.source).toBe("declared");
    expect(length.seconds).toBeGreaterThanOrEqual(10);
    expect(length.seconds).toBeLessThan(10.1);
  });

  it("is exact for a PCM WAV, whatever follows its data chunk", async () => {
    const wav = encodeWav(new Int16Array(24_000 * 3), 24_000, 1);
    expect(await audioLength(wav)).toEqual({ seconds: 3, source: "wav" });
    expect(await audioLength(thrice(wav))).toEqual({ seconds: 3, source: "wav" });
    expect(audioSecondsBound(thrice(wav), await audioLength(thrice(wav)))).toBe(3);
  });

  it("estimates at 128 kbit/s a file that declares no length (a WebM written as a stream) or is no audio at all", async () => {
    for (const bytes of [audioFixture("tone-10s-stream.webm"), new Uint8Array(4096).fill(7), new Uint8Array(0)]) {
      expect(await audioLength(bytes)).toEqual({ seconds: (bytes.length * 8) / ESTIMATE_BITS_PER_SECOND, source: "estimated" });
    }
  });

  it("believes a header that understates its file (three files behind one), and the bound covers what plays", async () => {
    for (const name of ["tone-10s-16k.mp3", "tone-10s.ogg", "tone-10s.flac"]) {
      const joined = thrice(audioFixture(name));
      const length = await audioLength(joined);
      expect(length.seconds, name).toBeLessThan(10.1);
      const bound = audioSecondsBound(joined, length);
      expect(bound, name).toBe((joined.length * 8) / MIN_AUDIO_BITS_PER_SECOND);
      expect(bound, name).toBeGreaterThan(30);
    }
  });

  it("never bounds below the declared length", async () => {
    const ogg = audioFixture("tone-10s.ogg"); // 8 kbit/s, near the floor: 8,728 bytes at 6 kbit/s is 11.6 s
    const length = await audioLength(ogg);
    expect(audioSecondsBound(ogg, length)).toBeGreaterThanOrEqual(length.seconds);
    expect(audioSecondsBound(ogg, { seconds: 99, source: "declared" })).toBe(99);
  });
});
