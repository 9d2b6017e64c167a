/**
 * Pass-through of an upstream JSON answer: the gateway forwards the upstream's bytes and reads
 * only the `usage` object it bills on, instead of decoding, validating and re-encoding every
 * number of an embedding. OpenAI-style answers end with their `usage` object, so it is found by
 * scanning back from the end; anything unexpected returns undefined and the caller takes the
 * full (decode and validate) path.
 */

/** How far from the end `"usage"` is looked for. */
const TAIL = 1024;
const USAGE = new TextEncoder().encode('"usage"');
const decoder = new TextDecoder();
const encoder = new TextEncoder();

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** Index of the last non-whitespace byte, or -1. */
function lastByte(bytes: Uint8Array): number {
  let end = bytes.length - 1;
  while (end >= 0 && isSpace(bytes[end])) end--;
  return end;
}

/** Index of the last `"usage"` within the tail, or -1. */
function lastUsage(bytes: Uint8Array): number {
  for (let i = bytes.length - USAGE.length; i >= Math.max(0, bytes.length - TAIL); i--) {
    let j = 0;
    while (j < USAGE.length && bytes[i + j] === USAGE[j]) j++;
    if (j === USAGE.length) return i;
  }
  return -1;
}

/**
 * The `usage` object of a JSON object answer whose last member it is (`{…,"usage":{…}}`), parsed;
 * undefined when the bytes do not have that shape (the caller then decodes the whole answer).
 * Everything from the object after `"usage":` to the answer's closing brace must parse as one
 * object, which only holds when `usage` is the top-level object's last member: any nesting would
 * leave a closing bracket in the slice.
 */
export function usageAtTail(bytes: Uint8Array): Record<string, unknown> | undefined {
  const end = lastByte(bytes);
  if (end < 1 || bytes[end] !== 0x7d /* } */ || bytes[0] !== 0x7b /* { */) return undefined;
  const at = lastUsage(bytes);
  if (at < 0) return undefined;
  let i = at + USAGE.length;
  while (isSpace(bytes[i])) i++;
  if (bytes[i] !== 0x3a /* : */) return undefined;
  i++;
  while (isSpace(bytes[i])) i++;
  if (bytes[i] !== 0x7b) return undefined;
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes.subarray(i, end)));
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A non-negative safe integer field of `usage`, else undefined. */
export function countOf(usage: Record<string, unknown>, field: string): number | undefined {
  const v = usage[field];
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/**
 * `raw` (a JSON object's bytes, as {@link usageAtTail} accepted) with one more member appended:
 * `…,"<name>":<value JSON>}`.
 */
export function appendMember(raw: Uint8Array, name: string, valueJson: string): Uint8Array {
  const end = lastByte(raw);
  const tail = encoder.encode(`,${JSON.stringify(name)}:${valueJson}}`);
  const out = new Uint8Array(end + tail.length);
  out.set(raw.subarray(0, end), 0);
  out.set(tail, end);
  return out;
}
