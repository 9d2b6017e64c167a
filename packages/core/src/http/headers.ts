/** Parsing of the gateway's credential and context headers (CONTRACT.md "Cross-cutting"). */
import { getAddress, isAddress } from "viem";
import { GatewayError, invalidRequest } from "../errors.js";
import { chainIdInput } from "./schemas.js";
import type { GatewayRequest } from "./types.js";

/** A validated, lower-case EVM address, or a 400 naming `param`. */
export function parseAddress(value: unknown, param: string): string {
  if (typeof value !== "string" || !isAddress(value, { strict: false })) throw invalidRequest(`${param} must be a 0x-prefixed 20-byte EVM address`, param);
  return getAddress(value).toLowerCase();
}

/** The owner wallet from `x-session-user-address`: missing → 401, invalid → 400. */
export function sessionAddress(req: GatewayRequest): string {
  const value = req.headers["x-session-user-address"];
  if (!value) throw new GatewayError("authentication_required", "The x-session-user-address header (owner wallet) is required.", { param: "x-session-user-address" });
  return parseAddress(value, "x-session-user-address");
}

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
