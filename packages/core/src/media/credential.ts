/**
 * The credential of a paid route, resolved before its body is read: a live service key, an x402
 * payment signature, or none. A dead or unknown key is refused here (401) without reading a byte
 * of the body, and a request with no credential at all is read only up to the unpaid limit
 * (enough to price its 402 challenge), so unauthenticated uploads cannot fill memory.
 */
import type { GatewayContext } from "../context.js";
import type { RouteDefinition } from "../http/route.js";
import type { GatewayRequest } from "../http/types.js";
import type { KeyRecord } from "../store/types.js";

/** What pays for a call. */
export type PaidCredential =
  | { readonly kind: "key"; readonly key: KeyRecord }
  | { readonly kind: "signature"; readonly header: string }
  | { readonly kind: "none" };

/** Resolves the credential: `Authorization` (a key; 401 when it is not live), else `PAYMENT-SIGNATURE` / `X-PAYMENT`, else none. */
export async function paidCredential(request: GatewayRequest, gateway: GatewayContext): Promise<PaidCredential> {
  if (request.headers.authorization) return { kind: "key", key: await gateway.services.keys.spender(request.headers.authorization) };
  const header = request.headers["payment-signature"] ?? request.headers["x-payment"];
  return header ? { kind: "signature", header } : { kind: "none" };
}

/** The credential, body-limit, rate-limit and security parts every paid media route shares. */
export const PAID_ROUTE = {
  authenticate: paidCredential,
  bodyLimit: (credential: PaidCredential) => (credential.kind === "none" ? "unpaid" : "media"),
  rateLimit: { key: (credential: PaidCredential) => (credential.kind === "key" ? credential.key : undefined) },
  security: { accepts: ["serviceKey", "x402"], charges: true },
} as const satisfies Partial<RouteDefinition<unknown, unknown, unknown, PaidCredential>>;
