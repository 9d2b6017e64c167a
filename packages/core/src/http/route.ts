/**
 * A route is data: method, path pattern, zod schemas for params / query / body, and a handler.
 * The route table of every capability is a list of these; the router, the docs and the OpenAPI
 * document are all derived from it.
 */
import type { z } from "zod";
import type { GatewayRequest, GatewayResponse } from "./types.js";
import type { GatewayContext } from "../context.js";
import type { IpLimitGroup, WalletLimitGroup } from "../auth/options.js";
import type { KeyRecord } from "../store/types.js";
import type { RequestTrace } from "../observability/telemetry.js";

/** HTTP methods a route can declare. */
export type RouteMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Which body-size limit applies to a route (by default 1 MiB JSON, 32 MiB media;
 * `unpaid`: what a paid route reads from a request without a credential, 1 MiB by default).
 */
export type BodyLimitKind = "json" | "media" | "unpaid";

/** A credential a route accepts, named as in the OpenAPI document's `components.securitySchemes`. */
export type RouteCredential =
  /** `Authorization: Bearer svc-…` (a service key). */
  | "serviceKey"
  /** `x-session-user-address` (the owner wallet), proven by a wallet session or another proof. */
  | "session"
  /** `Authorization: Bearer sess_…` or the session cookie (a Sign-In with Ethereum session). */
  | "walletSession"
  /** `PAYMENT-SIGNATURE` (an x402 v2 payment). */
  | "x402"
  /** `x-internal-secret` (the operator's settlement secret). */
  | "internalSecret"
  /** `Authorization: Bearer <metrics.token>` (the Prometheus scraper's token, when one is configured). */
  | "metricsToken";

/**
 * How a route authenticates, declared for the API reference (its `authenticate` is opaque code
 * and some routes check credentials inside the handler). Omitted: the route is public.
 */
export interface RouteSecurity {
  /**
   * Credentials the route accepts, any one of which is enough, in the order it tries them; an
   * inner list is a set sent together (e.g. the internal secret with the wallet header).
   */
  readonly accepts: readonly (RouteCredential | readonly RouteCredential[])[];
  /** The caller may also send none of them (e.g. anonymous feedback). @default false */
  readonly optional?: boolean;
  /** The route charges a key budget or takes an x402 payment, so it can answer 402. @default false */
  readonly charges?: boolean;
}

/** What a handler receives: the parsed, validated inputs plus the gateway context. */
export interface RouteContext<P, Q, B, A = undefined> {
  readonly request: GatewayRequest;
  /** What the route's `authenticate` returned (its credential), resolved before any input parsing. */
  readonly auth: A;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly requestId: string;
  readonly gateway: GatewayContext;
  /** What the request's log line reports beyond HTTP facts (key, model, charge, upstream time); a paid call fills it. */
  readonly trace: RequestTrace;
}

/** The declaration of one route. Path segments `:name` match one segment, `:name+` one or more. */
export interface RouteDefinition<P = unknown, Q = unknown, B = unknown, A = undefined> {
  readonly method: RouteMethod;
  readonly path: string;
  /** One line for the generated API docs. */
  readonly summary: string;
  /** Capability the route belongs to (docs grouping). */
  readonly tag: string;
  readonly params?: z.ZodType<P>;
  readonly query?: z.ZodType<Q>;
  /** When set, the body is read (size-capped) and parsed as JSON, then validated. An empty body parses as `{}`. */
  readonly body?: z.ZodType<B>;
  /** When the body schema is set: also take missing body fields from the query string. */
  readonly bodyFromQuery?: boolean;
  /** @default "json"; a function chooses from the route's credential (resolved before the body is read). */
  readonly bodyLimit?: BodyLimitKind | ((auth: A) => BodyLimitKind);
  /**
   * Rate limits the pipeline applies: `ip` counts the client IP in that group before anything
   * else; `key` counts the key the route's credential resolved to (its own `rateLimit`, else the
   * gateway default); `wallet` counts the owner wallet `of` returns (lower-case address; undefined:
   * not counted) in that group. All answer 429 `rate_limited` with `Retry-After` and `x-ratelimit-*`.
   */
  readonly rateLimit?: {
    readonly ip?: IpLimitGroup;
    readonly key?: (auth: A) => KeyRecord | undefined;
    readonly wallet?: { readonly group: WalletLimitGroup; readonly of: (auth: A) => string | undefined };
  };
  /**
   * Also accept `multipart/form-data` (the OpenAI SDK uploads files so): text parts become string
   * fields, file parts `{ filename?, contentType?, data: Uint8Array }`.
   */
  readonly multipart?: boolean;
  /**
   * Resolves the route's credential before params, query and body are parsed, so a request
   * without a valid credential gets its 401/403 rather than a 400 about its body.
   */
  readonly authenticate?: (request: GatewayRequest, gateway: GatewayContext) => Promise<A> | A;
  /** The credentials the route accepts, for the generated API reference. @default public */
  readonly security?: RouteSecurity;
  handle(ctx: RouteContext<P, Q, B, A>): Promise<GatewayResponse> | GatewayResponse;
}

/** A route with its types erased, as the router stores it. */
export type AnyRoute = RouteDefinition<any, any, any, any>;

/** Declares a route; the generics are inferred from the zod schemas. */
export function defineRoute<P = Record<string, never>, Q = Record<string, never>, B = undefined, A = undefined>(
  definition: RouteDefinition<P, Q, B, A>,
): RouteDefinition<P, Q, B, A> {
  return definition;
}
