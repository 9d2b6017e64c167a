/** Service-key tokens: minting, hashing (SHA-256, the only form stored) and parsing the header. */
import { sha256, stringToBytes } from "viem";
import { bytesToBase64Url } from "../encoding.js";
import { randomBytes } from "../ids.js";

/** Token prefix per compat mode (docs/api.md "Aliases and compat differences"). */
export function tokenPrefix(compat: "compose" | undefined): string {
  return compat === "compose" ? "compose-" : "svc-";
}

/** A new token: prefix + 32 CSPRNG bytes in base64url (43 characters). */
export function mintToken(compat: "compose" | undefined): string {
  return `${tokenPrefix(compat)}${bytesToBase64Url(randomBytes(32))}`;
}

type NodeCrypto = {
  /** One-shot hash (Node ≥ 20.12): no Hash object per call. */
  hash?(algorithm: "sha256", data: string, encoding: "hex"): string;
  createHash(algorithm: "sha256"): { update(data: string, encoding: "utf8"): { digest(encoding: "hex"): string } };
};
// Node's native SHA-256 costs ~1 µs a token, the portable one ~10 µs; edge runtimes without
// `process.getBuiltinModule` use the portable one.
const nodeCrypto = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.("node:crypto") as
  NodeCrypto | undefined;

/** Lower-case hex SHA-256 of UTF-8 text (no 0x). */
export function sha256Hex(text: string): string {
  if (!nodeCrypto) return sha256(stringToBytes(text)).slice(2);
  return nodeCrypto.hash ? nodeCrypto.hash("sha256", text, "hex") : nodeCrypto.createHash("sha256").update(text, "utf8").digest("hex");
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
