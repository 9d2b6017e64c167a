import { describe, expect, it } from "vitest";
import { declaredAudioSeconds } from "./audio-headers.js";
import { audioFixture, thrice } from "./audio-test-fixtures.js";
import { audioSeconds, ESTIMATE_BITS_PER_SECOND, MIN_AUDIO_BITS_PER_SECOND } from "./wav.js";

const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
const u32be = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);

/** A FLAC's marker and STREAMINFO block (then `padding` zero bytes of frames). */
function flac(rate: number, samples: number, padding = 0): Uint8Array {
  const info = new Uint8Array(34);
  info[10] = rate >> 12;
  info[11] = (rate >> 4) & 0xff;
  info[12] = ((rate & 0x0f) << 4) | (0 << 1) | 0; // mono, depth bits left 0
  info[13] = Math.floor(samples / 2 ** 32) & 0x0f;
  info.set(u32be(samples % 2 ** 32), 14);
  return concat(Buffer.from("fLaC"), Buffer.from([0x80, 0, 0, 34]), info, new Uint8Array(padding));
}

/** An Ogg page header with one segment of `packet` (the checksum is not checked by the reader). */
function oggPage(granule: bigint, packet: Uint8Array): Uint8Array {
  const head = Buffer.alloc(27);
  head.write("OggS", 0, "latin1");
  head.writeBigInt64LE(granule, 6);
  head[26] = 1;
  return concat(head, Buffer.from([packet.length]), packet);
}

const opusHead = (preSkip: number) => {
  const p = Buffer.alloc(19);
  p.write("OpusHead", 0, "latin1");
  p[8] = 1;
  p[9] = 1;
  p.writeUInt16LE(preSkip, 10);
  p.writeUInt32LE(16_000, 12);
  return p;
};
const vorbisHead = (rate: number) => {
  const p = Buffer.alloc(30);
  p.write("\x01vorbis", 0, "latin1");
  p[11] = 1;
  p.writeUInt32LE(rate, 12);
  return p;
};

/** An M4A: `ftyp`, the media data, then `moov` → `mvhd` (version 0 or 1). */
function m4a(version: 0 | 1, timescale: number, duration: number, mediaBytes: number): Uint8Array {
  const ftyp = concat(u32be(16), Buffer.from("ftypM4A "), u32be(0));
  const mdat = concat(u32be(8 + mediaBytes), Buffer.from("mdat"), new Uint8Array(mediaBytes));
  const body = Buffer.alloc(version === 1 ? 112 : 100);
  body[0] = version;
  if (version === 1) {
    body.writeUInt32BE(timescale, 20);
    body.writeBigUInt64BE(BigInt(duration), 24);
  } else {
    body.writeUInt32BE(timescale, 12);
    body.writeUInt32BE(duration, 16);
  }
  const mvhd = concat(u32be(8 + body.length), Buffer.from("mvhd"), body);
  const moov = concat(u32be(8 + mvhd.length), Buffer.from("moov"), mvhd);
  return concat(ftyp, mdat, moov);
}

/** `frames` MPEG-1 layer III frames (44.1 kHz, stereo) at `kbps` (bitrate index `index`), headers only. */
function mp3Frames(index: number, kbps: number, frames: number): Uint8Array {
  const length = Math.floor((144 * kbps * 1000) / 44_100);
  const out = new Uint8Array(length * frames);
  for (let i = 0; i < frames; i++) out.set([0xff, 0xfb, index << 4, 0x04], i * length);
  return out;
}

describe("declaredAudioSeconds reads the length a compressed file's headers declare", () => {
  it("the MP3 fixture made by FFmpeg: its Info tag's frame count (10 s of audio, 16 kbit/s)", () => {
    const mp3 = audioFixture("tone-10s-16k.mp3");
    expect(declaredAudioSeconds(mp3)).toBeCloseTo(10.08, 2);
    // Joined copies play 30 s; only the first header is read.
    expect(declaredAudioSeconds(thrice(mp3))).toBeCloseTo(10.08, 2);
  });

  it("MP3 without a tag: its frames counted header to header; with a Xing or VBRI tag, the frames it counts", () => {
    const seconds = (frames: number) => (frames * 1152) / 44_100;
    expect(declaredAudioSeconds(mp3Frames(1, 32, 500))).toBeCloseTo(seconds(500), 6);
    // A variable bitrate without a tag (a quiet first frame at 32 kbit/s, then 128): each frame counts once, not the bytes at the first bitrate.
    expect(declaredAudioSeconds(concat(mp3Frames(1, 32, 1), mp3Frames(9, 128, 999)))).toBeCloseTo(seconds(1000), 6);
    // Past 65,536 frames the rest counts at the walked frames' mean length.
    expect(declaredAudioSeconds(mp3Frames(1, 32, 70_000))).toBeCloseTo(seconds(70_000), 6);
    // Bytes after the last frame (an APEv2 tag with cover art, junk) are not audio.
    expect(declaredAudioSeconds(concat(mp3Frames(1, 32, 100), new Uint8Array(200_000)))).toBeCloseTo(seconds(100), 6);
    const xing = mp3Frames(9, 128, 3);
    xing.set(Buffer.from("Xing"), 36);
    xing.set(u32be(1), 40);
    xing.set(u32be(10_000), 44);
    expect(declaredAudioSeconds(xing)).toBeCloseTo((10_000 * 1152) / 44_100, 6);
    const vbri = mp3Frames(9, 128, 3);
    vbri.set(Buffer.from("VBRI"), 36);
    vbri.set(u32be(20_000), 50);
    expect(declaredAudioSeconds(vbri)).toBeCloseTo((20_000 * 1152) / 44_100, 6);
    // With a CRC the tag is still right after the side information (LAME writes it there; FFmpeg and mpg123 read it there).
    const crc = mp3Frames(9, 128, 3);
    crc.set([0xff, 0xfa], 0);
    crc.set(Buffer.from("Xing"), 36);
    crc.set(u32be(1), 40);
    crc.set(u32be(10_000), 44);
    expect(declaredAudioSeconds(crc)).toBeCloseTo((10_000 * 1152) / 44_100, 6);
    // An ID3v2 tag before the first frame is skipped by its size.
    const id3 = concat(Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 20]), new Uint8Array(20));
    expect(declaredAudioSeconds(concat(id3, mp3Frames(1, 32, 500)))).toBeCloseTo(seconds(500), 6);
  });

  it("FLAC: STREAMINFO's samples at its rate; Ogg Opus and Vorbis: the last page's granule position, less where the stream starts", () => {
    expect(declaredAudioSeconds(flac(16_000, 16_000 * 90))).toBe(90);
    const packets = new Uint8Array(200);
    const opus = concat(
      oggPage(0n, opusHead(312)),
      oggPage(960n + 312n, packets),
      oggPage(48_000n * 30n, packets),
      oggPage(48_000n * 60n + 312n, new Uint8Array(10)),
    );
    expect(declaredAudioSeconds(opus)).toBe(60);
    const vorbis = concat(oggPage(0n, vorbisHead(22_050)), oggPage(2048n, packets), oggPage(22_050n * 45n, new Uint8Array(10)));
    expect(declaredAudioSeconds(vorbis)).toBe(45);
    // RFC 7845: a stream cut from a live one starts at a granule above 0 (here 10 h in); it is its own 60 s, less at most its first page.
    const start = 48_000n * 36_000n;
    const live = concat(oggPage(0n, opusHead(312)), oggPage(start + 960n, packets), oggPage(start + 48_000n * 60n, new Uint8Array(10)));
    expect(declaredAudioSeconds(live)).toBeCloseTo(60 - (960 + 312) / 48_000, 9);
  });

  it("MP4 / M4A: the movie header's duration in its timescale, version 0 and 1, the header after the media", () => {
    expect(declaredAudioSeconds(m4a(0, 44_100, 44_100 * 120, 2000))).toBe(120);
    expect(declaredAudioSeconds(m4a(1, 1000, 75_500, 2000))).toBe(75.5);
  });

  it("reads nothing from junk, cut files, or headers that declare nothing, and never throws", () => {
    const cases: Uint8Array[] = [
      new Uint8Array(0),
      new Uint8Array(4 << 20).fill(0xff), // sync bits, but bitrate index 15
      Buffer.from("RIFF"),
      Buffer.from("fLaC"),
      flac(0, 100),
      flac(16_000, 0),
      Buffer.from("OggS"),
      concat(oggPage(0n, opusHead(0)), oggPage(960n, new Uint8Array(1)), oggPage(-1n, new Uint8Array(1))), // granule -1: no packet ends there
      concat(oggPage(0n, opusHead(0)), oggPage(960n, new Uint8Array(1)), oggPage(-(2n ** 62n), new Uint8Array(1))), // another negative granule
      concat(oggPage(0n, opusHead(0)), new Uint8Array(50), oggPage(48_000n, new Uint8Array(1))), // no audio page where the pages lead
      concat(oggPage(0n, opusHead(0)), new Uint8Array(32 << 20)), // the end page is looked for in the last 64 KiB only
      concat(oggPage(0n, opusHead(0)), new Uint8Array(70_000)), // no end page within the last 64 KiB
      oggPage(0n, Buffer.from("OpusTags")),
      m4a(0, 0, 100, 10),
      m4a(1, 1000, 5, 10).fill(0xff, 50 + 24, 50 + 32), // a 64-bit duration of all ones (at 24 in the mvhd body, which starts at 50): unknown
      concat(Buffer.from("fLaC"), Buffer.from([0x80, 0, 0, 33]), new Uint8Array(40)), // STREAMINFO is 34 bytes
      m4a(0, 1000, 100, 10).subarray(0, 40), // cut inside the media box
      concat(u32be(16), Buffer.from("ftypM4A "), u32be(0), u32be(0xffffff), Buffer.from("moov")), // a box longer than the file
      Buffer.from([0xff, 0xfb, 0x00, 0x04]), // free-format bitrate
      Buffer.from([0xff, 0xfb, 0x9c, 0x04]), // reserved sample rate
      Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f]), // an ID3 tag longer than the file
      concat(Buffer.of(0), audioFixture("tone-10s-16k.mp3")), // a byte before the tags: nothing is looked for
    ];
    for (const [i, bytes] of cases.entries()) expect(declaredAudioSeconds(bytes), `case ${i}`).toBeUndefined();
  });
});

describe("audioSeconds: a header raises the byte-length estimate, never lowers it, and is capped by the bytes", () => {
  const estimate = (b: Uint8Array) => (b.length * 8) / ESTIMATE_BITS_PER_SECOND;
  const bound = (b: Uint8Array) => (b.length * 8) / MIN_AUDIO_BITS_PER_SECOND;

  it("a file coded below 128 kbit/s is its declared length", () => {
    const mp3 = audioFixture("tone-10s-16k.mp3");
    expect(estimate(mp3)).toBeLessThan(1.3);
    expect(audioSeconds(mp3)).toEqual({ seconds: declaredAudioSeconds(mp3), estimated: true });
  });

  it("a file coded above 128 kbit/s keeps the byte-length estimate (a forged header could declare it short)", () => {
    const loud = mp3Frames(14, 320, 400);
    expect(declaredAudioSeconds(loud)).toBeLessThan(estimate(loud));
    expect(audioSeconds(loud)).toEqual({ seconds: estimate(loud), estimated: true });
  });

  it("a header declaring more than the bytes can hold at 6 kbit/s is cut to that bound", () => {
    const forged = flac(16_000, 16_000 * 36_000, 1000); // ten hours in 1 KB
    expect(audioSeconds(forged).seconds).toBe(bound(forged));
  });
});
