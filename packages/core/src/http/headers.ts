/** Parsing of the gateway's credential and context headers (docs/api.md). */
import { invalidRequest } from "../errors.js";
import { chainIdInput } from "./schemas.js";
import type { GatewayRequest } from "./types.js";

export { parseAddress } from "../validation.js";

/** A chain id: a positive safe integer given as a number or digits. */
export function parseChainId(value: unknown, param: string): number {
  const r = chainIdInput.safeParse(value);
  if (!r.success) throw invalidRequest(`${param} must be a positive integer chain id`, param);
  return r.data;
}

/** The request chain from `x-network-id` or its alias `x-chain-id`; undefined when neither is sent. */
export function requestChainId(req: GatewayRequest): number | undefined {
  const network = req.headers["x-network-id"];
  if (network !== undefined) return parseChainId(network, "x-network-id");
  const chain = req.headers["x-chain-id"];
  return chain === undefined ? undefined : parseChainId(chain, "x-chain-id");
}

/** The `x-idempotency-key` header: undefined when absent, 400 unless 1..255 characters. */
export function idempotencyKeyHeader(req: GatewayRequest): string | undefined {
  const value = req.headers["x-idempotency-key"]?.trim();
  if (value === undefined) return undefined;
  if (value.length < 1 || value.length > 255) throw invalidRequest("x-idempotency-key must be 1..255 characters", "x-idempotency-key");
  return value;
}

/**
 * The host a request reached: the forwarded host behind trusted proxies, else `Host`, else the
 * request URL's host. (Next.js hands the adapter a URL naming localhost whatever the browser
 * used, so the header comes first.) A client can name any host here: it is a SIWE domain only
 * when loopback (auth/domains.ts), and a same-origin check only when the browser sends no
 * `Sec-Fetch-Site` (wallet-proof.ts).
 */
export function requestHost(request: GatewayRequest, trustedProxies: number): string | undefined {
  const forwarded = trustedProxies > 0 ? request.headers["x-forwarded-host"]?.split(",")[0]?.trim() : undefined;
  return forwarded || request.headers.host || (request.origin ? new URL(request.origin).host : undefined);
}
