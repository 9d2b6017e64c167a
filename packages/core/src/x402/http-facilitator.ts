/**
 * A client of a remote x402 facilitator over the injectable {@link HttpClient}:
 * `POST {url}/verify` and `POST {url}/settle` with `{x402Version:2, paymentPayload,
 * paymentRequirements}`, `GET {url}/supported`. Like `@x402/core`'s HTTPFacilitatorClient, a non-2xx
 * answer whose body is a refusal (`isValid:false` / `success:false`) is returned as that refusal.
 */
import { GatewayError } from "../errors.js";
import { hostOf, type HttpClient } from "../http/client.js";
import type { Facilitator } from "./facilitator.js";
import { settleResponseSchema, supportedResponseSchema, verifyResponseSchema, X402_VERSION, type FacilitatorRequest } from "./types.js";
import type { z } from "zod";

/** Options of {@link createHttpFacilitator}. */
export interface HttpFacilitatorOptions {
  /** Base URL; a trailing slash is ignored. */
  readonly url: string;
  readonly http: HttpClient;
  /** Extra headers on every request (e.g. an API key). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Per-request deadline in ms (default 15 000); on expiry the call rejects with 504 `upstream_timeout`. */
  readonly timeoutMs?: number;
}

/** Default per-request deadline of a remote facilitator. */
export const DEFAULT_FACILITATOR_TIMEOUT_MS = 15_000;

/**
 * Creates the HTTP facilitator client. Failures: timeout → `GatewayError("upstream_timeout")`
 * (504); unreachable, non-2xx without a refusal body, or an unexpected body →
 * `GatewayError("upstream_error")` (502). Messages name the host only.
 */
export function createHttpFacilitator(options: HttpFacilitatorOptions): Facilitator {
  const base = options.url.replace(/\/+$/, "");
  const host = hostOf(base);
  const timeoutMs = options.timeoutMs ?? DEFAULT_FACILITATOR_TIMEOUT_MS;

  async function call<S extends z.ZodType>(method: "GET" | "POST", path: string, schema: S, body: FacilitatorRequest | undefined, refusal?: (v: z.output<S>) => boolean): Promise<z.output<S>> {
    const what = `the x402 facilitator at ${host} (${path})`;
    let status: number;
    let text: string;
    try {
      const res = await options.http({
        method,
        url: `${base}${path}`,
        headers: { accept: "application/json", ...(body ? { "content-type": "application/json" } : {}), ...options.headers },
        ...(body ? { body: JSON.stringify(body) } : {}),
        timeoutMs,
      });
      status = res.status;
      text = await res.text();
    } catch (error) {
      if (error instanceof GatewayError && (error.code === "upstream_timeout" || error.code === "upstream_error")) {
        throw new GatewayError(error.code, error.code === "upstream_timeout" ? `${what} did not answer within ${timeoutMs} ms` : `${what} could not be reached`, { cause: error });
      }
      throw new GatewayError("upstream_error", `${what} could not be reached`, { cause: error });
    }
    let parsed: z.ZodSafeParseResult<z.output<S>> | undefined;
    try {
      parsed = schema.safeParse(JSON.parse(text)) as z.ZodSafeParseResult<z.output<S>>;
    } catch {
      parsed = undefined;
    }
    if (status >= 200 && status < 300) {
      if (parsed?.success) return parsed.data;
      throw new GatewayError("upstream_error", `${what} answered ${status} with an unexpected body`);
    }
    if (parsed?.success && refusal?.(parsed.data)) return parsed.data;
    throw new GatewayError("upstream_error", `${what} answered ${status}`, { details: { facilitatorStatus: status } });
  }

  const request = (paymentPayload: FacilitatorRequest["paymentPayload"], paymentRequirements: FacilitatorRequest["paymentRequirements"]): FacilitatorRequest => ({
    x402Version: X402_VERSION,
    paymentPayload,
    paymentRequirements,
  });

  return {
    verify: (payload, requirements) => call("POST", "/verify", verifyResponseSchema, request(payload, requirements), (v) => !v.isValid),
    settle: (payload, requirements) => call("POST", "/settle", settleResponseSchema, request(payload, requirements), (v) => !v.success),
    supported: () => call("GET", "/supported", supportedResponseSchema, undefined),
  };
}
