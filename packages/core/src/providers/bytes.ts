/**
 * Byte helpers of the provider layer, free of `node:` imports (core runs on edge runtimes):
 * checksums (CRC-32, Adler-32), the FNV-1a hash, concatenation and substring search.
 */
import { base64ToBytes, bytesToBase64 } from "../encoding.js";

const utf8 = new TextEncoder();

/** UTF-8 bytes of a string. */
export function utf8Bytes(text: string): Uint8Array {
  return utf8.encode(text);
}

/** 32-bit FNV-1a of a string's UTF-8 bytes or of bytes, optionally seeded (mixed into the offset basis). */
export function fnv1a(input: string | Uint8Array, seed = 0): number {
  const bytes = typeof input === "string" ? utf8.encode(input) : input;
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

let crcTable: Uint32Array | undefined;

/** CRC-32 (IEEE 802.3, as PNG and zip use) of `bytes`, continuing from `crc` (default: a fresh CRC). */
export function crc32(bytes: Uint8Array, crc = 0): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let c = (crc ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++) c = crcTable[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Adler-32 (the zlib trailer checksum) of `bytes`. */
export function adler32(bytes: Uint8Array): number {
  let a = 1;
  let b = 0;
  // Reduce every 5552 bytes (zlib's NMAX) so the sums stay small integers.
  for (let i = 0; i < bytes.length;) {
    const end = Math.min(i + 5552, bytes.length);
    for (; i < end; i++) {
      a += bytes[i]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** The concatenation of byte arrays. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Index of the first occurrence of `needle` in `haystack` at or after `from`, or -1. Knuth–Morris–
 * Pratt, so the time is linear in the haystack even for adversarial input.
 */
export function indexOfBytes(haystack: Uint8Array, needle: Uint8Array, from = 0, failure = kmpTable(needle)): number {
  if (needle.length === 0) return Math.min(from, haystack.length);
  let j = 0;
  for (let i = from; i < haystack.length; i++) {
    const c = haystack[i]!;
    while (j > 0 && c !== needle[j]) j = failure[j - 1]!;
    if (c === needle[j]) j++;
    if (j === needle.length) return i - needle.length + 1;
  }
  return -1;
}

/** The KMP failure table of `needle`, reusable across {@link indexOfBytes} calls with that needle. */
export function kmpTable(needle: Uint8Array): Int32Array {
  const t = new Int32Array(needle.length);
  let k = 0;
  for (let i = 1; i < needle.length; i++) {
    while (k > 0 && needle[i] !== needle[k]) k = t[k - 1]!;
    if (needle[i] === needle[k]) k++;
    t[i] = k;
  }
  return t;
}

/** Whether `bytes` holds `ascii` at `offset`. */
export function hasAscii(bytes: Uint8Array, offset: number, ascii: string): boolean {
  if (offset < 0 || offset + ascii.length > bytes.length) return false;
  for (let i = 0; i < ascii.length; i++) if (bytes[offset + i] !== ascii.charCodeAt(i)) return false;
  return true;
}

/** Little-endian float32 bytes of `vector`, base64 (OpenAI's `encoding_format: "base64"`). */
export function float32ToBase64(vector: readonly number[]): string {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < vector.length; i++) view.setFloat32(i * 4, vector[i]!, true);
  return bytesToBase64(bytes);
}

/** The numbers of a base64 little-endian float32 vector; null when malformed or not a multiple of 4 bytes. */
export function base64ToFloat32(text: string): number[] | null {
  const bytes = base64ToBytes(text);
  if (!bytes || bytes.length % 4 !== 0) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

