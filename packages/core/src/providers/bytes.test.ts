import { crc32 as nodeCrc32, inflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { base64Portable, bytesToBase64, bytesToBase64Url, toBase64Url, utf8Length } from "../encoding.js";
import { toHex } from "../ids.js";
import { base64ToFloat32, crc32, float32ToBase64, indexOfBytes, kmpTable } from "./bytes.js";
import { zlibStored } from "./png.js";
import { audioSeconds, encodeWav, parseWav } from "./wav.js";

const sample = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 131 + 7) & 0xff);

describe("provider byte codecs", () => {
  it("bytesToBase64 matches Buffer for every tail length", () => {
    for (const encode of [bytesToBase64, base64Portable]) {
      for (let n = 0; n < 20; n++) expect(encode(sample(n))).toBe(Buffer.from(sample(n)).toString("base64"));
      expect(encode(sample(100_003))).toBe(Buffer.from(sample(100_003)).toString("base64"));
    }
  });

  it("utf8Length counts what TextEncoder writes, lone surrogates as U+FFFD", () => {
    const encoder = new TextEncoder();
    const samples = ["", "abc", "é", "€", "😀", "a😀b", "\ud83d", "\ude00", "x\ud83dy", "\ude00\ud83d", "\ud83d\ud83d\ude00", "ß漢字🏳️‍🌈"];
    // Random strings over every code-unit class: ASCII, 2-byte, 3-byte, high and low surrogates.
    for (let i = 0; i < 300; i++)
      samples.push(
        String.fromCharCode(...Array.from({ length: (i * 7) % 23 }, (_, j) => [0x41, 0x3a9, 0x4e2d, 0xd83d, 0xde00, 0xffff][(i * 31 + j * 17) % 6]!)),
      );
    for (const s of samples) expect(utf8Length(s), JSON.stringify(s)).toBe(encoder.encode(s).length);
  });

  it("base64url of bytes and of UTF-8 text match Buffer's, unpadded", () => {
    for (let n = 0; n < 20; n++) expect(bytesToBase64Url(sample(n))).toBe(Buffer.from(sample(n)).toString("base64url"));
    for (const s of ["", "a", "ab", "abc", "é€😀", "\ud83d lone", JSON.stringify({ receipt: "rcpt_1", amount: "2" })])
      expect(toBase64Url(s)).toBe(Buffer.from(new TextEncoder().encode(s)).toString("base64url"));
  });

  it("toHex writes two lower-case digits per byte", () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(toHex(all)).toBe(Buffer.from(all).toString("hex"));
    expect(toHex(new Uint8Array(0))).toBe("");
  });

  it("crc32 matches node:zlib, and zlibStored inflates back across block boundaries", () => {
    for (const n of [0, 1, 65_535, 65_536, 200_000]) {
      const data = sample(n);
      expect(crc32(data)).toBe(nodeCrc32(data));
      expect(Buffer.compare(inflateSync(zlibStored(data)), Buffer.from(data))).toBe(0); // checks Adler-32 too
    }
  });

  it("float32 base64 round-trips and rejects ragged input", () => {
    expect(base64ToFloat32(float32ToBase64([0.5, -2, 1e-3]))!.map((x) => Number(x.toFixed(6)))).toEqual([0.5, -2, 0.001]);
    expect(base64ToFloat32("AAA=")).toBeNull();
  });

  it("indexOfBytes finds needles and reports misses", () => {
    const hay = new TextEncoder().encode("abababcabc");
    expect(indexOfBytes(hay, new TextEncoder().encode("ababc"))).toBe(2);
    expect(indexOfBytes(hay, new TextEncoder().encode("abc"), 5)).toBe(7);
    expect(indexOfBytes(hay, new TextEncoder().encode("abd"))).toBe(-1);
  });

  it("indexOfBytes reads the needle at most twice per haystack byte on adversarial near-matches", () => {
    // A multipart boundary and a body of partial matches that differ only in the last byte: a
    // naive search compares ~70 bytes at each of the ~720 k positions; KMP stays linear.
    const needle = new TextEncoder().encode(`\r\n--${"x".repeat(70)}`);
    const hay = new TextEncoder().encode(`\r\n--${"x".repeat(69)}y`.repeat(10_000) + `\r\n--${"x".repeat(70)}`);
    let reads = 0;
    // Counts every element read of the needle (the failure table is built from it beforehand).
    const counted = new Proxy(needle, {
      get: (target, prop) => {
        if (typeof prop === "string" && /^\d+$/.test(prop)) reads++;
        const value = target[prop as keyof Uint8Array];
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    expect(indexOfBytes(hay, counted, 0, kmpTable(needle))).toBe(hay.length - needle.length);
    expect(reads).toBeGreaterThan(hay.length); // the count is real: every position compares at least once
    expect(reads).toBeLessThanOrEqual(2 * hay.length);
  });

  it("parseWav reads a header, clamps a streamed data size, and audioSeconds estimates other audio", () => {
    const wav = encodeWav(new Int16Array(48_000), 48_000, 2, [{ id: "LIST", data: new Uint8Array(3) }]);
    expect(parseWav(wav)).toMatchObject({ audioFormat: 1, channels: 2, sampleRate: 48_000, bitsPerSample: 16, dataBytes: 96_000, durationSeconds: 0.5 });
    expect(parseWav(wav)!.chunks.get("LIST")!.length).toBe(3);
    const streamed = new Uint8Array(wav.subarray(0, 44 + 1000));
    new DataView(streamed.buffer).setUint32(40, 0xffffffff, true);
    expect(parseWav(streamed)!.dataBytes).toBe(1000);
    expect(parseWav(new Uint8Array(10))).toBeNull();
    expect(audioSeconds(wav)).toEqual({ seconds: 0.5, estimated: false });
    expect(audioSeconds(new Uint8Array(16_000))).toEqual({ seconds: 1, estimated: true });
  });

  it("a WAV's length comes from its frames and sample rate: a header declaring a huge byte rate or block size is billed for its real length", () => {
    // 300 s of 16 kHz mono 16-bit PCM: 32,000 bytes a second.
    const honest = encodeWav(new Int16Array(16_000 * 300), 16_000);
    expect(audioSeconds(honest)).toEqual({ seconds: 300, estimated: false });
    const lying = new Uint8Array(honest);
    const v = new DataView(lying.buffer);
    v.setUint32(28, 9_600_000, true); // byteRate: 300× the real one
    v.setUint16(32, 4096, true); // blockAlign
    expect(audioSeconds(lying)).toEqual({ seconds: 300, estimated: false });
    // A codec other than sample frames (here 0x55, MP3 in WAV): the header gives no length, so the byte-length estimate.
    const coded = new Uint8Array(honest);
    new DataView(coded.buffer).setUint16(20, 0x55, true);
    expect(parseWav(coded)!.durationSeconds).toBeNull();
    expect(audioSeconds(coded)).toEqual({ seconds: (coded.length * 8) / 128_000, estimated: true });
    // A second `fmt ` after the data, declaring an absurd rate, changes nothing: the first one counts.
    const second = new Uint8Array(honest.length + 24);
    second.set(honest);
    const fmt2 = new DataView(second.buffer, honest.length);
    second.set([0x66, 0x6d, 0x74, 0x20], honest.length); // "fmt "
    fmt2.setUint32(4, 16, true);
    fmt2.setUint16(8, 1, true);
    fmt2.setUint16(10, 64, true);
    fmt2.setUint32(12, 0xffffffff, true);
    fmt2.setUint16(22, 16, true);
    new DataView(second.buffer).setUint32(4, second.length - 8, true);
    expect(audioSeconds(second)).toEqual({ seconds: 300, estimated: false });
    // A first header beyond any real recording (4 GHz) gives no exact length: the byte-length estimate.
    const absurd = new Uint8Array(honest);
    new DataView(absurd.buffer).setUint32(24, 0xffffffff, true);
    expect(audioSeconds(absurd)).toEqual({ seconds: (absurd.length * 8) / 128_000, estimated: true });
    // A sample rate of 0 is not a readable WAV.
    const silent = new Uint8Array(honest);
    new DataView(silent.buffer).setUint32(24, 0, true);
    expect(parseWav(silent)).toBeNull();
  });
});
