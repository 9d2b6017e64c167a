/**
 * The length a compressed audio file's headers declare, read without decoding: an MP3's Xing,
 * Info or VBRI frame count (without one, its frames counted header to header), a FLAC's
 * STREAMINFO sample count, an Ogg Opus or Vorbis stream's granule positions (the last page's, found
 * in the last 64 KiB with Buffer's native search, less where the stream starts), an MP4 or M4A's
 * `mvhd` duration. Each is a read of a few places in the file, or for an MP3 without a tag a walk
 * of its first 65,536 frames (the rest counted at their mean length).
 *
 * Why not music-metadata, which the speech route uses on answers it bounds by size: on an upload,
 * a valid MP3 frame header followed by 4 MB of 0xff bytes kept it busy 16–22 s on the event loop
 * (measured), and an unpaid x402 request is quoted from its file.
 *
 * A header is what the file says, not what a decoder will play: a forged one can declare anything.
 * The caller ({@link audioSeconds}) uses it only to raise the byte-length estimate, never to lower
 * it, and caps it at what the bytes can hold.
 */

import { hasAscii } from "./bytes.js";

/** Seconds the headers of `bytes` declare (see the module), or undefined when none is read. */
export function declaredAudioSeconds(bytes: Uint8Array): number | undefined {
  const seconds = flacSeconds(bytes) ?? oggSeconds(bytes) ?? mp4Seconds(bytes) ?? mp3Seconds(bytes);
  return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

/** FLAC: the STREAMINFO block (always first) holds the sample rate and the total samples. */
function flacSeconds(b: Uint8Array): number | undefined {
  if (!hasAscii(b, 0, "fLaC") || b.length < 26 || (b[4]! & 0x7f) !== 0 || b[5] !== 0 || b[6] !== 0 || b[7] !== 34) return undefined;
  const d = 8; // STREAMINFO data: 10 bytes of block and frame sizes, then rate (20 bits), channels, depth, samples (36 bits)
  const rate = (b[d + 10]! << 12) | (b[d + 11]! << 4) | (b[d + 12]! >> 4);
  const samples = (b[d + 13]! & 0x0f) * 2 ** 32 + view(b).getUint32(d + 14);
  return rate > 0 && samples > 0 ? samples / rate : undefined;
}

/** The longest an Ogg page can be (27 + 255 lacing bytes + 255 × 255 of data). */
const MAX_OGG_PAGE = 65_307;

/**
 * Ogg Opus or Vorbis: the granule position of the last page (found in the last 64 KiB) counts
 * samples (Opus at 48 kHz, less its pre-skip). A stream may start at a granule above 0 (RFC 7845:
 * one cut from a live stream): when the first page that ends a packet after the headers holds more
 * samples than one page can, the count starts there (a page's worth short, never long).
 */
function oggSeconds(b: Uint8Array): number | undefined {
  if (!hasAscii(b, 0, "OggS") || b.length < 28) return undefined;
  const packet = 27 + b[26]!;
  let rate: number;
  let skip = 0;
  let pageSamples: number; // the most samples one page can end: 255 packets of the codec's longest
  if (hasAscii(b, packet, "OpusHead") && packet + 12 <= b.length) {
    [rate, skip, pageSamples] = [48_000, view(b).getUint16(packet + 10, true), 255 * 5760];
  } else if (hasAscii(b, packet, "\x01vorbis") && packet + 16 <= b.length) [rate, pageSamples] = [view(b).getUint32(packet + 12, true), 255 * 4096];
  else return undefined;
  const from = Math.max(0, b.length - MAX_OGG_PAGE);
  const last = Buffer.from(b.buffer, b.byteOffset + from, b.byteLength - from).lastIndexOf("OggS", undefined, "latin1");
  const end = last < 0 ? undefined : granule(b, from + last);
  const first = firstGranule(b);
  if (end === undefined || first === undefined) return undefined;
  const samples = end - (first > pageSamples ? first : 0) - skip;
  return rate > 0 && samples > 0 ? samples / rate : undefined;
}

/** The granule position of the page at `at`; undefined past the end, or when negative (-1: no packet ends on the page). */
function granule(b: Uint8Array, at: number): number | undefined {
  if (at + 14 > b.length) return undefined;
  const hi = view(b).getUint32(at + 10, true);
  return hi >= 0x80000000 ? undefined : hi * 2 ** 32 + view(b).getUint32(at + 6, true);
}

/** The granule of the first page (of the first 16) past the header pages that ends a packet; undefined when none is found. */
function firstGranule(b: Uint8Array): number | undefined {
  let at = 0;
  for (let page = 0; page < 16 && hasAscii(b, at, "OggS") && at + 27 <= b.length; page++) {
    const segments = b[at + 26]!;
    if (at + 27 + segments > b.length) return undefined;
    const g = granule(b, at);
    if (g !== undefined && g > 0) return g;
    let body = 0;
    for (let i = 0; i < segments; i++) body += b[at + 27 + i]!;
    at += 27 + segments + body;
  }
  return undefined;
}

/** MP4 / M4A: the movie header (`moov` → `mvhd`) holds a timescale and a duration in it. */
function mp4Seconds(b: Uint8Array): number | undefined {
  if (!hasAscii(b, 4, "ftyp")) return undefined;
  const moov = box(b, 0, b.length, "moov");
  const mvhd = moov && box(b, moov.start, moov.end, "mvhd");
  if (!mvhd || mvhd.end - mvhd.start < 32) return undefined;
  const v = view(b);
  const d = mvhd.start;
  // Version 1 holds a 64-bit duration; all ones in either means "unknown".
  const [scale, high, low] = b[d] === 1 ? [v.getUint32(d + 20), v.getUint32(d + 24), v.getUint32(d + 28)] : [v.getUint32(d + 12), 0, v.getUint32(d + 16)];
  const unknown = low === 0xffffffff && (b[d] !== 1 || high === 0xffffffff);
  const duration = high * 2 ** 32 + low;
  return scale > 0 && duration > 0 && !unknown ? duration / scale : undefined;
}

/** The first box of `type` among those between `from` and `to` (at most 64 looked at): where its data starts and ends. */
function box(b: Uint8Array, from: number, to: number, type: string): { start: number; end: number } | undefined {
  const v = view(b);
  let at = from;
  for (let i = 0; i < 64 && at + 8 <= to; i++) {
    let size = v.getUint32(at);
    let header = 8;
    if (size === 1 && at + 16 <= to) {
      size = v.getUint32(at + 8) * 2 ** 32 + v.getUint32(at + 12);
      header = 16;
    } else if (size === 0) size = to - at;
    if (size < header || at + size > to) return undefined;
    if (hasAscii(b, at + 4, type)) return { start: at + header, end: at + size };
    at += size;
  }
  return undefined;
}

/** kbit/s by bitrate index: MPEG-1 layers I, II, III, then MPEG-2/2.5 layer I, and layers II and III. */
const BITRATES = [
  [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
] as const;
/** Hz by sample-rate index, for MPEG-1, MPEG-2 and MPEG-2.5. */
const RATES = { 3: [44_100, 48_000, 32_000], 2: [22_050, 24_000, 16_000], 0: [11_025, 12_000, 8_000] } as Record<number, readonly number[]>;

/** The most MPEG frames walked one by one (~1–2 ms; at least 8 minutes of audio). */
const MAX_WALKED = 65_536;

/** One MPEG audio frame header at `at`: its version, layer, sample rate, samples and byte length; undefined when none is there. */
export function mpegFrame(b: Uint8Array, at: number) {
  if (at + 4 > b.length || b[at] !== 0xff || (b[at + 1]! & 0xe0) !== 0xe0) return undefined;
  const version = (b[at + 1]! >> 3) & 3; // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
  const layer = 4 - ((b[at + 1]! >> 1) & 3); // 1, 2 or 3 (4: reserved)
  const rate = RATES[version]?.[(b[at + 2]! >> 2) & 3];
  const kbps = BITRATES[version === 3 ? layer - 1 : layer === 1 ? 3 : 4]?.[b[at + 2]! >> 4];
  if (layer > 3 || rate === undefined || !kbps) return undefined;
  const padding = (b[at + 2]! >> 1) & 1;
  const bits = kbps * 1000;
  const length = layer === 1 ? (Math.floor((12 * bits) / rate) + padding) * 4 : Math.floor(((layer === 3 && version !== 3 ? 72 : 144) * bits) / rate) + padding;
  return { version, layer, rate, samples: layer === 1 ? 384 : layer === 3 && version !== 3 ? 576 : 1152, length };
}

/**
 * MP3 (any MPEG audio layer): after any ID3v2 tags, the first frame header must follow at once. A
 * layer III file's Xing/Info (or VBRI) tag counts its frames; without one, the frames are counted
 * one header to the next as a decoder walks them (the bitrate may change from frame to frame), up
 * to the first bytes that are not a frame of the same stream (a trailing tag, junk).
 */
function mp3Seconds(b: Uint8Array): number | undefined {
  let at = 0;
  for (let tags = 0; tags < 4 && hasAscii(b, at, "ID3") && at + 10 <= b.length; tags++)
    at += 10 + (b[at + 5]! & 0x10 ? 10 : 0) + (((b[at + 6]! & 0x7f) << 21) | ((b[at + 7]! & 0x7f) << 14) | ((b[at + 8]! & 0x7f) << 7) | (b[at + 9]! & 0x7f));
  const first = mpegFrame(b, at);
  if (!first) return undefined;
  const v = view(b);
  if (first.layer === 3) {
    // The tag sits after the side information, CRC or not (LAME writes it there, FFmpeg and mpg123 read it there).
    const xing = at + 4 + (first.version === 3 ? (b[at + 3]! >> 6 === 3 ? 17 : 32) : b[at + 3]! >> 6 === 3 ? 9 : 17);
    if ((hasAscii(b, xing, "Xing") || hasAscii(b, xing, "Info")) && xing + 12 <= b.length && v.getUint32(xing + 4) & 1)
      return (v.getUint32(xing + 8) * first.samples) / first.rate;
    if (hasAscii(b, at + 36, "VBRI") && at + 54 <= b.length) return (v.getUint32(at + 50) * first.samples) / first.rate;
  }
  const start = at;
  let frames = 0;
  for (let f: ReturnType<typeof mpegFrame> = first; f && at + f.length <= b.length; f = mpegFrame(b, at)) {
    if (f.version !== first.version || f.layer !== first.layer || f.rate !== first.rate) break;
    frames++;
    at += f.length;
    // Past MAX_WALKED frames (minutes of audio), the rest of the file counts at their mean length.
    if (frames === MAX_WALKED) return ((frames + Math.floor((b.length - at) / ((at - start) / frames))) * first.samples) / first.rate;
  }
  return (frames * first.samples) / first.rate;
}
