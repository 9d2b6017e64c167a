/**
 * @tollgate/next — the gateway as Next.js App Router route handlers. Put it in a catch-all route
 * (`app/gateway/[...path]/route.ts`) and export the methods you serve:
 * `export const { GET, POST, DELETE, OPTIONS } = createHandler(gateway, { basePath: "/gateway" })`.
 * Only Web `Request`/`Response` are used, so `next` is never imported at runtime.
 */
import { fallbackResponse, fromWebRequest, toWebResponse } from "@tollgate/core";
import type { Gateway } from "@tollgate/core";

/** Options of {@link createHandler}; the same names as every Tollgate framework adapter. */
export interface NextHandlerOptions {
  /** URL path the catch-all route lives under (e.g. `"/gateway"`), stripped at a segment boundary before routing. @default "" */
  basePath?: string;
  /** Hard cap in bytes on a request body, below the per-route limits of the gateway (larger bodies get 413). @default unlimited */
  maxBodySize?: number;
  /** Called once per error that escaped the gateway (the client then gets one 500 error envelope). @default logs to stderr */
  onError?: (error: unknown) => void;
  /**
   * The client's address for the per-IP limits (sign-in nonces, feedback, the dispenser, unpaid
   * tokenizing, in-flight body shares). A route handler gets no socket address, and `next start`
   * keeps an `X-Forwarded-For` the client sent, so neither is one to trust on its own: return the
   * address your host vouches for, e.g. `ipAddress(request)` of `@vercel/functions` on Vercel, or a
   * header your reverse proxy overwrites (nginx `proxy_set_header X-Real-IP $remote_addr`).
   * Without it the per-IP limits apply only with the gateway's `trustedProxies` behind a proxy
   * that overwrites `X-Forwarded-For`; otherwise they do not apply at all. A value that is not an
   * IP address counts as none.
   */
  clientIp?: (request: Request) => string | undefined;
}

/** One App Router route handler. */
export type NextRouteHandler = (request: Request) => Promise<Response>;

/** The route handlers returned by {@link createHandler}, one per HTTP method (all the same function). */
export interface NextRouteHandlers {
  GET: NextRouteHandler;
  POST: NextRouteHandler;
  PUT: NextRouteHandler;
  PATCH: NextRouteHandler;
  DELETE: NextRouteHandler;
  OPTIONS: NextRouteHandler;
  HEAD: NextRouteHandler;
}

/**
 * Builds the App Router handlers of a gateway. Each converts the `Request` with `fromWebRequest`
 * (base path stripped, body capped at `maxBodySize`, `request.signal` as the disconnect signal),
 * calls `gateway.handle` and answers with `toWebResponse` (SSE streams; cancelling the body stops
 * the stream). Never rejects: an escaping error is reported once to `onError` and becomes a 500
 * error envelope.
 */
export function createHandler(gateway: Pick<Gateway, "handle">, options: NextHandlerOptions = {}): NextRouteHandlers {
  const onError = options.onError ?? defaultOnError;
  const handler: NextRouteHandler = async (request) => {
    try {
      const remoteAddress = options.clientIp?.(request);
      const gatewayRequest = fromWebRequest(request, {
        basePath: options.basePath ?? "",
        ...(options.maxBodySize === undefined ? {} : { maxBodySize: options.maxBodySize }),
        ...(remoteAddress ? { remoteAddress } : {}),
      });
      return toWebResponse(await gateway.handle(gatewayRequest), { onError });
    } catch (error) {
      onError(error);
      return toWebResponse(fallbackResponse(error, request.headers.get("x-request-id")));
    }
  };
  return { GET: handler, POST: handler, PUT: handler, PATCH: handler, DELETE: handler, OPTIONS: handler, HEAD: handler };
}

function defaultOnError(error: unknown): void {
  console.error("[tollgate] request failed:", error);
}
