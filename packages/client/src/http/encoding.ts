/** Wire encodings with only Web APIs (atob, TextDecoder): JSON with bigints, base64 JSON headers, query strings. */

/** A query parameter value; `undefined` leaves the parameter out, arrays are joined with ",". */
export type QueryValue = string | number | bigint | boolean | readonly string[] | undefined;

/** JSON text of `value`; bigints are written as decimal strings (the gateway's amount format). */
export function stringifyJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
}

/** `?a=1&b=2` for the defined entries of `query` ("" when none). */
export function queryString(query: Readonly<Record<string, QueryValue>> | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    params.set(key, Array.isArray(value) ? value.join(",") : String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Bytes of standard or URL-safe base64 (padding optional), or undefined when malformed. */
export function base64ToBytes(text: string): Uint8Array | undefined {
  const normal = text.trim().replace(/-/g, "+").replace(/_/g, "/");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(normal)) return undefined;
  const padded = normal.replace(/=+$/, "").padEnd(Math.ceil(normal.replace(/=+$/, "").length / 4) * 4, "=");
  try {
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** The JSON value carried base64-encoded in a header (x402 headers, `X-Receipt`), or undefined when malformed. */
export function decodeBase64Json(text: string): unknown {
  const bytes = base64ToBytes(text);
  if (!bytes) return undefined;
  try {
    return JSON.parse(utf8.decode(bytes));
  } catch {
    return undefined;
  }
}

/** A non-negative decimal integer string as bigint, else undefined. */
export function parseAmount(text: string | null | undefined): bigint | undefined {
  return text != null && /^\d{1,78}$/.test(text.trim()) ? BigInt(text.trim()) : undefined;
}

/** Standard base64 of `bytes` (btoa over chunks, so large files do not overflow the call stack). */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** A file field as the gateway takes it: bytes become base64; strings (base64 or a data: URL) pass as they are. */
export function fileField(value: string | Uint8Array): string {
  return typeof value === "string" ? value : bytesToBase64(value);
}
