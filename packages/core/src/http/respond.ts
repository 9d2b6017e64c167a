/** Helpers that build {@link GatewayResponse} values in route handlers. */
import type { GatewayResponse } from "./types.js";

/** A JSON response (status 200 unless given). */
export function json(value: unknown, init: { status?: number; headers?: Record<string, string> } = {}): GatewayResponse {
  return { status: init.status ?? 200, headers: { "content-type": "application/json; charset=utf-8", ...init.headers }, body: { kind: "json", value } };
}

/** A bytes response with the given content type. */
export function bytes(value: Uint8Array, contentType: string, init: { status?: number; headers?: Record<string, string> } = {}): GatewayResponse {
  return { status: init.status ?? 200, headers: { "content-type": contentType, ...init.headers }, body: { kind: "bytes", value } };
}

/** An empty response (e.g. 204). */
export function empty(status = 204, headers: Record<string, string> = {}): GatewayResponse {
  return { status, headers, body: { kind: "empty" } };
}

const bigintAsString = (_k: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v);

/**
 * JSON.stringify that writes bigint as a decimal string (amounts are never floats on the wire).
 * A replacer runs for every value (each float of an embedding), so the plain native stringify
 * goes first; it throws a TypeError on the first bigint, and only then is the replacer used.
 */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return JSON.stringify(value, bigintAsString);
  }
}
