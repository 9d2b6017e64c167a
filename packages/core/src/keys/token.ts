/** Service-key tokens: minting, hashing (SHA-256, the only form stored) and parsing the header. */
import { bytesToBase64Url } from "../encoding.js";
import { randomBytes } from "../ids.js";
import { sha256Hex } from "../sha256.js";

/** Token prefix per compat mode (docs/api.md "Aliases and compat differences"). */
export function tokenPrefix(compat: "compose" | undefined): string {
  return compat === "compose" ? "compose-" : "svc-";
}

/** A new token: prefix + 32 CSPRNG bytes in base64url (43 characters). */
export function mintToken(compat: "compose" | undefined): string {
  return `${tokenPrefix(compat)}${bytesToBase64Url(randomBytes(32))}`;
}

/** Lower-case hex SHA-256 of a token (no 0x). */
export function hashToken(token: string): string {
  return sha256Hex(token);
}

/**
 * The token of an `Authorization` header: `Bearer <token>` or a bare token. Returns undefined
 * when the header is absent or empty.
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const value = header.trim();
  const m = /^bearer\s+(.+)$/i.exec(value);
  const token = (m ? m[1]! : value).trim();
  return token === "" ? undefined : token;
}

/** Whether a string has the shape of a token this gateway mints (any compat prefix). */
export function looksLikeToken(token: string): boolean {
  return /^(svc|compose)-[A-Za-z0-9_-]{43}$/.test(token);
}
