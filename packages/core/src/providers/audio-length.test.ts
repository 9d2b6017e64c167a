import { describe, expect, it } from "vitest";
import { audioSecondsBound, MIN_AUDIO_BITS_PER_SECOND } from "./audio-length.js";
import { audioFixture, thrice } from "./audio-test-fixtures.js";
import { audioSeconds, encodeWav, ESTIMATE_BITS_PER_SECOND, parseWav, type RiffChunk } from "./wav.js";

/** 2 s of 8 kHz mono 16-bit PCM. */
const pcm = () => encodeWav(new Int16Array(16_000), 8_000, 1);
const estimate = (bytes: Uint8Array) => ({ seconds: (bytes.length * 8) / ESTIMATE_BITS_PER_SECOND, estimated: true });

/** A WAV of `pcm()` whose `fmt ` chunk is replaced by `fmt` (its body). */
function withFmt(fmt: Uint8Array, extra: readonly RiffChunk[] = []): Uint8Array {
  const base = encodeWav(new Int16Array(16_000), 8_000, 1, extra);
  const out = new Uint8Array(base.length - 16 + fmt.length);
  out.set(base.subarray(0, 16));
  new DataView(out.buffer).setUint32(16, fmt.length, true);
  out.set(fmt, 20);
  out.set(base.subarray(36), 20 + fmt.length);
  new DataView(out.buffer).setUint32(4, out.length - 8, true);
  return out;
}

function fmtBody(tag: number, bitsPerSample: number, subFormat?: number): Uint8Array {
  const body = new Uint8Array(subFormat === undefined ? 16 : 40);
  const v = new DataView(body.buffer);
  v.setUint16(0, tag, true);
  v.setUint16(2, 1, true);
  v.setUint32(4, 8_000, true);
  v.setUint32(8, 16_000, true);
  v.setUint16(12, 2, true);
  v.setUint16(14, bitsPerSample, true);
  if (subFormat !== undefined) {
    v.setUint16(16, 22, true);
    v.setUint16(18, bitsPerSample, true);
    v.setUint16(24, subFormat, true);
    body.set([0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xaa, 0, 0x38, 0x9b, 0x71], 26);
  }
  return body;
}

describe("audioSecondsBound", () => {
  it("is a file's byte length at 6 kbit/s, a WAV's too", () => {
    const mp3 = audioFixture("tone-10s-16k.mp3");
    expect(audioSecondsBound(mp3)).toBe((mp3.length * 8) / MIN_AUDIO_BITS_PER_SECOND);
    expect(audioSecondsBound(mp3)).toBeGreaterThan(27); // the ten seconds a 16 kbit/s file holds, with room
    expect(audioSecondsBound(thrice(mp3))).toBeCloseTo(3 * audioSecondsBound(mp3), 9);
    expect(audioSecondsBound(pcm())).toBe((pcm().length * 8) / MIN_AUDIO_BITS_PER_SECOND); // 42.7 s for 2 s of 128 kbit/s PCM
    expect(audioSecondsBound(new Uint8Array(0))).toBe(0);
  });

  it("is never below the 128 kbit/s estimate", () => {
    const noise = new Uint8Array(48_000).fill(0x55);
    expect(audioSecondsBound(noise)).toBe(Math.max(audioSeconds(noise).seconds, (noise.length * 8) / MIN_AUDIO_BITS_PER_SECOND));
    expect(audioSecondsBound(noise)).toBeGreaterThanOrEqual(audioSeconds(noise).seconds);
  });
});

describe("a WAV's exact length is only trusted where decoders agree with it", () => {
  it("reads PCM, float and extensible PCM", () => {
    expect(audioSeconds(pcm())).toEqual({ seconds: 2, estimated: false });
    expect(audioSeconds(withFmt(fmtBody(3, 32)))).toEqual({ seconds: 1, estimated: false });
    expect(audioSeconds(withFmt(fmtBody(0xfffe, 16, 1)))).toEqual({ seconds: 2, estimated: false });
  });

  it("estimates a file with a second data chunk (FFmpeg plays the last)", () => {
    const two = encodeWav(new Int16Array(16_000), 8_000, 1, [{ id: "data", data: new Uint8Array(960_000) }]);
    expect(parseWav(two)!.durationSeconds).toBeNull();
    expect(audioSeconds(two)).toEqual(estimate(two));
  });

  it("estimates A-law or µ-law declaring samples wider than 8 bits, and widths PCM and float do not have", () => {
    for (const [tag, bits] of [
      [6, 64],
      [7, 16],
      [1, 64],
      [1, 7],
      [3, 16],
    ] as const) {
      const file = withFmt(fmtBody(tag, bits));
      expect(parseWav(file)!.durationSeconds, `${tag}/${bits}`).toBeNull();
    }
    expect(audioSeconds(withFmt(fmtBody(6, 8)))).toEqual({ seconds: 4, estimated: false }); // 32,000 one-byte frames at 8 kHz
  });

  it("estimates an extensible header whose valid bits are not its width (FFmpeg sizes samples by them)", () => {
    const valid8 = fmtBody(0xfffe, 32, 1);
    new DataView(valid8.buffer).setUint16(18, 8, true);
    expect(parseWav(withFmt(valid8))!.durationSeconds).toBeNull();
    const valid0 = fmtBody(0xfffe, 16, 1);
    new DataView(valid0.buffer).setUint16(18, 0, true);
    expect(audioSeconds(withFmt(valid0))).toEqual({ seconds: 2, estimated: false });
  });

  it("estimates integer PCM carrying an IEC 61937 (S/PDIF) burst in its first 64 KiB, in either byte order", () => {
    for (const sync of [
      [0x72, 0xf8, 0x1f, 0x4e],
      [0xf8, 0x72, 0x4e, 0x1f],
    ]) {
      const samples = new Int16Array(16_000);
      const bytes = new Uint8Array(samples.buffer);
      bytes.set(sync, 1_000);
      const wav = encodeWav(new Int16Array(samples.buffer), 8_000, 1);
      expect(audioSeconds(wav)).toEqual(estimate(wav));
    }
    // FFmpeg probes 64 KiB from the start of `data` whatever the chunk's size: a short `data` followed by the stream in another chunk.
    const tail = new Uint8Array(8_000);
    tail.set([0x72, 0xf8, 0x1f, 0x4e], 100);
    const hidden = encodeWav(new Int16Array(5), 8_000, 1, [{ id: "JUNK", data: tail }]);
    expect(audioSeconds(hidden)).toEqual(estimate(hidden));
    // Past the first 64 KiB FFmpeg does not look, and neither does the gateway.
    const late = new Int16Array(40_000);
    new Uint8Array(late.buffer).set([0x72, 0xf8, 0x1f, 0x4e], 70_000);
    expect(audioSeconds(encodeWav(late, 8_000, 1))).toEqual({ seconds: 5, estimated: false });
  });

  it("estimates an extensible header whose sub-format is a codec (MP3) or whose GUID is not a KSDATAFORMAT one", () => {
    expect(parseWav(withFmt(fmtBody(0xfffe, 16, 0x55)))!.durationSeconds).toBeNull();
    const foreign = fmtBody(0xfffe, 16, 1);
    foreign[39] = 0;
    expect(parseWav(withFmt(foreign))!.durationSeconds).toBeNull();
    const short = fmtBody(0xfffe, 16, 1).subarray(0, 18);
    expect(parseWav(withFmt(short))!.durationSeconds).toBeNull();
  });
});
