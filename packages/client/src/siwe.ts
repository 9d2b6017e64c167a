/**
 * Sign-In with Ethereum (EIP-4361) messages and EIP-55 checksummed addresses, without a
 * dependency: the text is exactly what viem's `createSiweMessage` (viem/siwe) builds for the same
 * fields, which the gateway parses and verifies with viem (siwe.test.ts compares the two).
 */
import { keccak_256 } from "@noble/hashes/sha3";

/** The fields of a SIWE message (EIP-4361). */
export interface SiweMessageFields {
  /** The host (`host[:port]`) asking for the sign-in; the gateway wants its own Host here. */
  domain: string;
  /** The wallet, any case: it is written EIP-55 checksummed. */
  address: string;
  /** A human-readable line shown by the wallet (no line breaks). */
  statement?: string | undefined;
  /** The resource the sign-in is for (RFC 3986 URI), e.g. the page's origin. */
  uri: string;
  /** @default "1" (the only version) */
  version?: "1" | undefined;
  /** EIP-155 chain id of the wallet. */
  chainId: number;
  /** The gateway's nonce (alphanumeric, at least 8 characters). */
  nonce: string;
  /** @default now */
  issuedAt?: Date | undefined;
  expirationTime?: Date | undefined;
  notBefore?: Date | undefined;
  requestId?: string | undefined;
  /** RFC 3986 URIs. */
  resources?: readonly string[] | undefined;
  /** URI scheme of the domain (e.g. `https`), written before it when given. */
  scheme?: string | undefined;
}

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const NONCE = /^[a-zA-Z0-9]{8,}$/;
const URI = /^[a-zA-Z][a-zA-Z0-9+\-.]*:[^\s]*$/;
const DOMAIN = /^[^\s/?#@]+$/;
const SCHEME = /^[a-zA-Z][a-zA-Z0-9+\-.]*$/;

/**
 * The EIP-55 checksummed form of a 20-byte hex address (`0x` + 40 hex digits, any case).
 * @throws TypeError when `address` is not such an address.
 */
export function toChecksumAddress(address: string): `0x${string}` {
  if (typeof address !== "string" || !HEX_ADDRESS.test(address)) throw new TypeError(`Not an address (0x + 40 hex digits): ${JSON.stringify(address)}`);
  const lower = address.slice(2).toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(lower));
  let out = "0x";
  for (let i = 0; i < 40; i++) {
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
    out += nibble >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  }
  return out as `0x${string}`;
}

function invalid(field: string, why: string, value: unknown): never {
  throw new TypeError(`Invalid SIWE ${field}: ${why} (got ${JSON.stringify(value)}).`);
}

/**
 * The EIP-4361 text of a sign-in message, ready for the wallet's `personal_sign`.
 * @throws TypeError on a field EIP-4361 does not allow (the same checks as viem's createSiweMessage).
 */
export function buildSiweMessage(fields: SiweMessageFields): string {
  const { domain, statement, uri, chainId, nonce, scheme, resources } = fields;
  const version = fields.version ?? "1";
  if (typeof domain !== "string" || !DOMAIN.test(domain)) invalid("domain", "must be an RFC 3986 authority such as example.com or 127.0.0.1:3000", domain);
  if (!Number.isSafeInteger(chainId) || chainId < 1) invalid("chainId", "must be an EIP-155 chain id", chainId);
  if (typeof nonce !== "string" || !NONCE.test(nonce)) invalid("nonce", "must be at least 8 letters or digits", nonce);
  if (typeof uri !== "string" || !URI.test(uri)) invalid("uri", "must be an RFC 3986 URI", uri);
  if (version !== "1") invalid("version", "must be '1'", version);
  if (scheme !== undefined && !SCHEME.test(scheme)) invalid("scheme", "must be an RFC 3986 URI scheme", scheme);
  if (statement !== undefined && /[\r\n]/.test(statement)) invalid("statement", "must not contain a line break", statement);
  const address = toChecksumAddress(fields.address);
  const lines = [
    `${scheme ? `${scheme}://` : ""}${domain} wants you to sign in with your Ethereum account:`,
    address,
    "",
    ...(statement ? [statement, ""] : [""]),
    `URI: ${uri}`,
    `Version: ${version}`,
    `Chain ID: ${chainId}`,
    `Nonce: ${nonce}`,
    `Issued At: ${(fields.issuedAt ?? new Date()).toISOString()}`,
  ];
  if (fields.expirationTime) lines.push(`Expiration Time: ${fields.expirationTime.toISOString()}`);
  if (fields.notBefore) lines.push(`Not Before: ${fields.notBefore.toISOString()}`);
  if (fields.requestId) lines.push(`Request ID: ${fields.requestId}`);
  if (resources) {
    lines.push("Resources:");
    for (const resource of resources) {
      if (typeof resource !== "string" || !URI.test(resource)) invalid("resources", "every resource must be an RFC 3986 URI", resource);
      lines.push(`- ${resource}`);
    }
  }
  return lines.join("\n");
}
