/** The opaque cursor of newest-first listings (keys, intents): a (createdAt, id) keyset position. */
import { fromBase64Url, toBase64Url } from "./encoding.js";
import { invalidRequest } from "./errors.js";

/** Encodes a keyset position as an opaque URL-safe string. */
export function encodeKeysetCursor(createdAt: number, id: string): string {
  return toBase64Url(JSON.stringify([createdAt, id]));
}

/**
 * Decodes a cursor made by {@link encodeKeysetCursor}.
 * @throws GatewayError `invalid_request` (field `cursor`) on anything else.
 */
export function decodeKeysetCursor(text: string): { createdAt: number; id: string } {
  try {
    const [createdAt, id] = JSON.parse(fromBase64Url(text) ?? "") as unknown[];
    if (Number.isSafeInteger(createdAt) && typeof id === "string") return { createdAt: createdAt as number, id };
  } catch {
    // fall through
  }
  throw invalidRequest("cursor is not a cursor returned by this API", "cursor");
}
