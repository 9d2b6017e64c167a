/**
 * A minimal, correct PNG encoder without `node:zlib` (core runs on edge runtimes): 8-bit RGB,
 * no interlace, filter 0 on every row, and an IDAT holding a zlib stream of STORED (uncompressed)
 * deflate blocks with its Adler-32 trailer — valid zlib that every decoder accepts. Images are
 * therefore about width × height × 3 bytes.
 */
import { adler32, concatBytes, crc32 } from "./bytes.js";

const SIGNATURE = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Largest payload of one stored deflate block. */
const STORED_MAX = 0xffff;

/**
 * Encodes an RGB image as PNG. `rgb` holds `width × height × 3` bytes, row-major, top row first.
 * Throws a `RangeError` when the sizes disagree or a side is not a positive integer ≤ 2^24.
 */
export function encodePng(width: number, height: number, rgb: Uint8Array): Uint8Array {
  for (const side of [width, height]) {
    if (!Number.isInteger(side) || side < 1 || side > 1 << 24) throw new RangeError(`bad PNG side ${side}`);
  }
  const rowBytes = width * 3;
  if (rgb.length !== rowBytes * height) throw new RangeError(`expected ${rowBytes * height} RGB bytes, got ${rgb.length}`);
  const raw = new Uint8Array(height * (rowBytes + 1));
  for (let y = 0; y < height; y++) {
    // raw[y * (rowBytes + 1)] stays 0: filter type None.
    raw.set(rgb.subarray(y * rowBytes, (y + 1) * rowBytes), y * (rowBytes + 1) + 1);
  }
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: truecolour RGB
  // compression 0, filter 0, interlace 0
  return concatBytes([SIGNATURE, chunk("IHDR", ihdr), chunk("IDAT", zlibStored(raw)), chunk("IEND", new Uint8Array(0))]);
}

/** A zlib stream (RFC 1950) of stored deflate blocks (RFC 1951 §3.2.4) carrying `data` verbatim. */
export function zlibStored(data: Uint8Array): Uint8Array {
  const blocks = Math.max(1, Math.ceil(data.length / STORED_MAX));
  const out = new Uint8Array(2 + blocks * 5 + data.length + 4);
  // CMF 0x78: deflate, 32 KiB window; FLG 0x01: no dictionary, fastest level, (0x7801 % 31 === 0).
  out[0] = 0x78;
  out[1] = 0x01;
  let at = 2;
  for (let b = 0; b < blocks; b++) {
    const start = b * STORED_MAX;
    const len = Math.min(STORED_MAX, data.length - start);
    out[at++] = b === blocks - 1 ? 1 : 0; // BFINAL, BTYPE=00
    out[at++] = len & 0xff;
    out[at++] = len >>> 8;
    out[at++] = ~len & 0xff;
    out[at++] = (~len >>> 8) & 0xff;
    out.set(data.subarray(start, start + len), at);
    at += len;
  }
  new DataView(out.buffer).setUint32(at, adler32(data));
  return out;
}

/** One PNG chunk: length, type, data, CRC-32 of type + data. */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** Parses `"WxH"` (e.g. `"1024x1024"`); null when malformed. Sides are positive decimal integers. */
export function parseSize(size: string): { width: number; height: number } | null {
  const m = /^\s*([1-9]\d{0,5})\s*[xX×]\s*([1-9]\d{0,5})\s*$/.exec(size);
  if (!m) return null;
  return { width: Number(m[1]), height: Number(m[2]) };
}
