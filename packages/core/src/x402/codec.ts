/** The x402 header encoding: standard base64 of the UTF-8 JSON text (as `@x402/core`'s `safeBase64Encode`). */
import { base64ToBytes, bytesToBase64 } from "../encoding.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Largest header accepted by {@link decodeHeader} (a real payment is ~1 KiB). */
export const MAX_HEADER_CHARS = 16_384;

/** Base64 of the JSON of `value` (bigints are written as decimal strings). */
export function encodeHeader(value: unknown): string {
  const json = JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  return bytesToBase64(encoder.encode(json));
}

/** The outcome of {@link decodeHeader}. */
export type DecodeResult = { ok: true; value: unknown } | { ok: false; message: string };

/** Decodes a base64 JSON header; a value, never an exception, when it is malformed. */
export function decodeHeader(header: string): DecodeResult {
  const text = header.trim();
  if (text.length === 0) return { ok: false, message: "the header is empty" };
  if (text.length > MAX_HEADER_CHARS) return { ok: false, message: `the header is longer than ${MAX_HEADER_CHARS} characters` };
  const bytes = base64ToBytes(text);
  if (!bytes) return { ok: false, message: "the header is not base64" };
  let json: string;
  try {
    json = decoder.decode(bytes);
  } catch {
    return { ok: false, message: "the header does not decode to UTF-8 text" };
  }
  try {
    return { ok: true, value: JSON.parse(json) };
  } catch {
    return { ok: false, message: "the header does not decode to JSON" };
  }
}
