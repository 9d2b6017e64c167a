/**
 * The options of `createGateway`, validated with zod. Every problem is reported at once, one
 * line each, in a {@link GatewayOptionsError}.
 */
import { z } from "zod";
import { catalogSchema, formatIssues, type ModelCard } from "./catalog/card.js";
import { chainsOptionsSchema } from "./chain/options.js";
import { x402OptionsSchema } from "./x402/options.js";
import type { Clock } from "./clock.js";
import type { HttpClient } from "./http/client.js";
import type { IdGenerator } from "./ids.js";
import type { Store } from "./store/types.js";
import { MAX_INTENT_LIFETIME_MS } from "./store/usage-days.js";
import { feedbackOptionsSchema } from "./feedback/options.js";
import { agentsOptionsSchema } from "./agents/options.js";
import { dispenserOptionsSchema } from "./dispenser/options.js";
import { settlementOptionsSchema } from "./settlement/options.js";
import { mediaOptionsSchema } from "./media/options.js";
import { videoOptionsSchema } from "./video/options.js";
import { authOptionsSchema, rateLimitOptionsSchema, walletAuthenticatorSchema } from "./auth/options.js";
import type { GatewayRequest } from "./http/types.js";
import { loggerOptionSchema, metricsOptionsSchema, readinessOptionsSchema } from "./observability/options.js";


/** Thrown by `createGateway` when its options are invalid; `issues` holds one line per problem. */
export class GatewayOptionsError extends Error {
  readonly issues: readonly string[];
  constructor(issues: readonly string[]) {
    super(`Invalid Tollgate options:\n${issues.map((i) => `  - ${i}`).join("\n")}`);
    this.name = "GatewayOptionsError";
    this.issues = issues;
  }
}

const MiB = 1024 * 1024;
const origin = z.string().regex(/^https?:\/\/[^/\s]+$/, "must be an origin such as https://app.example.com");
const fn = <T>(what: string) => z.custom<T>((v) => typeof v === "function", `must be ${what}`);
const withMethod = <T>(method: string, what: string) =>
  z.custom<T>((v) => typeof v === "object" && v !== null && typeof (v as Record<string, unknown>)[method] === "function", `must be ${what}`);

/** The zod schema of {@link GatewayOptions}. */
export const gatewayOptionsSchema = z.strictObject({
  /** Where keys, intents and charges live. @default an in-memory store (lost on restart) */
  store: withMethod<Store>("reserve", "a Store (createMemoryStore(), createSqliteStore(…), …)").optional(),
  catalog: z
    .strictObject({
      /** Cards replacing the bundled native catalog. */
      native: z.array(z.unknown()).optional(),
      /** Cards of the extended catalog served by `/v1/models/all`. */
      extended: z.array(z.unknown()).optional(),
      /** Provider order for duplicate public ids. */
      providerPriority: z.array(z.string().min(1)).optional(),
    })
    .optional(),
  modelsService: z
    .strictObject({
      url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
      timeoutMs: z.number().int().min(1).max(120_000).optional(),
      headers: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
  http: fn<HttpClient>("an HttpClient function").optional(),
  cors: z
    .strictObject({
      origins: z.union([z.literal("*"), z.array(origin).min(1)]),
      /** Allow cookies and credentials; needs explicit origins (a credentialed `*` would let any site act for signed-in users). */
      credentials: z.boolean().optional(),
      maxAgeSeconds: z.number().int().min(0).max(86_400).optional(),
    })
    .refine((c) => !(c.origins === "*" && c.credentials), { message: 'credentials: true needs explicit origins, not "*"', path: ["credentials"] })
    .optional(),
  limits: z
    .strictObject({
      jsonBodyBytes: z.number().int().min(1024).max(64 * MiB).optional(),
      mediaBodyBytes: z.number().int().min(1024).max(1024 * MiB).optional(),
      /** The most a paid route reads from a request that carries no credential (enough to price its x402 challenge). @default 1 MiB */
      unpaidBodyBytes: z.number().int().min(1024).max(1024 * MiB).optional(),
      /** Cap on request-body bytes being read or held at once by this process; beyond it, 503 `overloaded`. @default 64 MiB */
      inFlightBodyBytes: z.number().int().min(64 * 1024).max(64 * 1024 * MiB).optional(),
      /**
       * The most of `inFlightBodyBytes` one client (IP, IPv6 /64; see `trustedProxies`) may hold at
       * once (bytes held are bytes received); beyond it, 429 `rate_limited`. A client's only body in
       * flight may be larger. @default a quarter of inFlightBodyBytes
       */
      inFlightBodyBytesPerClient: z.number().int().min(1024).max(64 * 1024 * MiB).optional(),
      /**
       * The least average rate, in bytes per second, at which a request body must arrive once
       * `bodyGraceMs` has passed; a slower one is refused with 408 `request_timeout` and its bytes
       * given back. 0: any rate (`bodyTimeoutMs` still applies). @default 8192
       */
      minBodyBytesPerSecond: z.number().int().min(0).max(1024 * MiB).optional(),
      /** How long a request body may take before `minBodyBytesPerSecond` applies, in ms. @default 10000 */
      bodyGraceMs: z.number().int().min(100).max(3_600_000).optional(),
      /** The longest a request body may take to arrive, in ms, whatever its rate (408 `request_timeout` after). @default 300000 */
      bodyTimeoutMs: z.number().int().min(1000).max(86_400_000).optional(),
      /**
       * The most authorized (open) payment intents one service key may hold at once; a reserve
       * beyond it gets 429 `too_many_open_intents`. Every paid call holds one while it runs, so
       * this also caps a key's calls in flight. It bounds what one key can make the reads that
       * sum or expire its intents (usage, the open-intent gauge, expiry) work through. @default 1000
       */
      openIntentsPerKey: z.number().int().min(1).max(10_000_000).optional(),
      /**
       * The most live (neither revoked nor expired) service keys one wallet may hold; creating one
       * more gets 409 `too_many_keys`. With `openIntentsPerKey` it bounds what one wallet can hold
       * open, and what a leaked wallet session can mint. @default 1000
       */
      liveKeysPerWallet: z.number().int().min(1).max(10_000_000).optional(),
    })
    .optional(),
  /**
   * How the owner wallet named by `x-session-user-address` is proven. `"verified"`: a wallet
   * session (SIWE), a live key of that wallet, the internal secret or `authenticateWallet` must
   * prove it. `"trusted-header"`: the header alone is enough; only behind a proxy that has
   * already authenticated the user. @default "verified"
   */
  walletAuth: z.enum(["verified", "trusted-header"]).optional(),
  /**
   * A host app's own user authentication: returns the wallet the request's user owns (any case),
   * or null when it does not know the user (the other proofs then apply).
   */
  authenticateWallet: walletAuthenticatorSchema.optional(),
  /**
   * A secret (at least 16 characters) that a server-side host app sends as `x-internal-secret` to
   * act for the wallet it names in `x-session-user-address`.
   * @default settlement.internalSecret (the secret of `POST /api/settlement/batch`), when set
   */
  internalSecret: z.string().min(16, "must be at least 16 characters").optional(),
  /** Sign-In with Ethereum and wallet sessions. */
  auth: authOptionsSchema,
  /** Request rate limits (per key, per client IP on credential-free routes). */
  rateLimits: rateLimitOptionsSchema,
  /**
   * How many reverse proxies in front of the gateway append to `X-Forwarded-For`; the client IP
   * is the entry that many from the right. 0: the socket's peer address. @default 0
   */
  trustedProxies: z.number().int().min(0).max(10).optional(),
  clock: withMethod<Clock>("now", "a Clock ({ now(): number })").optional(),
  ids: withMethod<IdGenerator>("next", "an IdGenerator ({ next(prefix): string })").optional(),
  compat: z.enum(["compose"]).optional(),
  /** Lifetime of an unsettled payment intent in ms. @default 900000 (15 min) */
  intentTtlMs: z.number().int().min(1000).max(MAX_INTENT_LIFETIME_MS).optional(),
  /** Platform fee in basis points (100 = 1%). @default 100 */
  feeBps: z.number().int().min(0).max(10_000).optional(),
  /**
   * How long a paid call may reuse a service key it looked up, in ms (in-process cache of the
   * key's identity; the store's guarded reserve still checks revocation, expiry and budget on every
   * call). 0 looks the key up on every call. @default 1000
   */
  keyCacheMs: z.number().int().min(0).max(60_000).optional(),
  /**
   * How often the sweeper releases expired reservations, in ms; 0 turns it off (expiry on read still
   * applies). A run that finds a backlog (50 000 overdue) is followed sooner, after four times its
   * own duration. @default 60000
   */
  sweepIntervalMs: z.number().int().min(0).max(3_600_000).optional(),
  /** EVM chains (RPC URL and USDC address per chain id) used by x402, the dispenser and settlement. */
  chains: chainsOptionsSchema,
  x402: x402OptionsSchema,
  feedback: feedbackOptionsSchema,
  agents: agentsOptionsSchema,
  dispenser: dispenserOptionsSchema,
  settlement: settlementOptionsSchema,
  media: mediaOptionsSchema,
  video: videoOptionsSchema,
  /** A pino-compatible logger: a line per request, and the gateway's warnings and errors. @default none: no request lines; warnings and errors to the console */
  logger: loggerOptionSchema,
  /** Prometheus metrics (`gateway.metrics`, `GET /metrics`). @default on, no token */
  metrics: metricsOptionsSchema,
  /** Deadlines and caching of the `GET /readyz` checks. */
  readiness: readinessOptionsSchema,
});

/** Options of `createGateway`. */
export type GatewayOptions = z.input<typeof gatewayOptionsSchema>;

/** Options after validation, with cards parsed. */
export interface ResolvedOptions extends Omit<z.output<typeof gatewayOptionsSchema>, "catalog"> {
  readonly nativeCards: readonly ModelCard[] | undefined;
  readonly extendedCards: readonly ModelCard[] | undefined;
  readonly providerPriority: readonly string[] | undefined;
  readonly jsonBodyBytes: number;
  readonly mediaBodyBytes: number;
  readonly unpaidBodyBytes: number;
  readonly inFlightBodyBytes: number;
  readonly inFlightBodyBytesPerClient: number;
  readonly bodyPace: { readonly minBytesPerSecond: number; readonly graceMs: number; readonly maxMs: number };
  readonly openIntentsPerKey: number;
  readonly liveKeysPerWallet: number;
}

/** A host app's wallet authentication hook (see `GatewayOptions.authenticateWallet`). */
export type WalletAuthenticator = (request: GatewayRequest) => Promise<string | null> | string | null;

/** Validates options; throws {@link GatewayOptionsError} listing every problem. */
export function resolveOptions(input: unknown): ResolvedOptions {
  const issues: string[] = [];
  const parsed = gatewayOptionsSchema.safeParse(input ?? {});
  if (!parsed.success) issues.push(...formatIssues(parsed.error.issues));
  const raw = (typeof input === "object" && input !== null ? input : {}) as { catalog?: { native?: unknown; extended?: unknown } };
  const cards = (value: unknown, name: string): ModelCard[] | undefined => {
    if (value === undefined || !Array.isArray(value)) return undefined;
    const r = catalogSchema.safeParse(value);
    if (r.success) return r.data;
    issues.push(...formatIssues(r.error.issues, `catalog.${name}`));
    return undefined;
  };
  const nativeCards = cards(raw.catalog?.native, "native");
  const extendedCards = cards(raw.catalog?.extended, "extended");
  if (nativeCards?.length === 0) issues.push("catalog.native: must hold at least one card");
  if (issues.length > 0 || !parsed.success) throw new GatewayOptionsError(issues);
  const o = parsed.data;
  return {
    ...o,
    nativeCards,
    extendedCards,
    providerPriority: o.catalog?.providerPriority,
    jsonBodyBytes: o.limits?.jsonBodyBytes ?? MiB,
    mediaBodyBytes: o.limits?.mediaBodyBytes ?? 32 * MiB,
    unpaidBodyBytes: o.limits?.unpaidBodyBytes ?? MiB,
    inFlightBodyBytes: o.limits?.inFlightBodyBytes ?? 64 * MiB,
    inFlightBodyBytesPerClient: o.limits?.inFlightBodyBytesPerClient ?? Math.floor((o.limits?.inFlightBodyBytes ?? 64 * MiB) / 4),
    bodyPace: { minBytesPerSecond: o.limits?.minBodyBytesPerSecond ?? 8 * 1024, graceMs: o.limits?.bodyGraceMs ?? 10_000, maxMs: o.limits?.bodyTimeoutMs ?? 300_000 },
    openIntentsPerKey: o.limits?.openIntentsPerKey ?? 1000,
    liveKeysPerWallet: o.limits?.liveKeysPerWallet ?? 1000,
  };
}
