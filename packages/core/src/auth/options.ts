/** The options of wallet sessions (Sign-In with Ethereum) and of the request rate limits. */
import { z } from "zod";
import type { WalletAuthenticator } from "../options.js";

const MINUTE = 60_000;

/** The zod schema of `options.authenticateWallet`. */
export const walletAuthenticatorSchema = z.custom<WalletAuthenticator>((v) => typeof v === "function", "must be a function (request) => address | null");

/** The zod schema of `options.auth`. */
export const authOptionsSchema = z
  .strictObject({
    /**
     * The domains (`host[:port]`) a SIWE message may name. @default the Host the request reached,
     * so a wallet signs for the site it sees.
     */
    domains: z.array(z.string().regex(/^[A-Za-z0-9.\-[\]:]{1,255}$/, "must be a host such as app.example.com or localhost:3000")).min(1).optional(),
    /** Lifetime of a wallet session in ms. @default 86400000 (24 h) */
    sessionTtlMs: z.number().int().min(MINUTE).max(30 * 24 * 60 * MINUTE).optional(),
    /** Lifetime of a sign-in nonce in ms. @default 600000 (10 min) */
    nonceTtlMs: z.number().int().min(10_000).max(60 * MINUTE).optional(),
    /** The session cookie browsers get from `POST /api/auth/verify`. */
    cookie: z
      .strictObject({
        /** @default "tollgate_session" */
        name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1..64 letters, digits, _ or -").optional(),
        /** @default "none" when `cors.credentials` is on (a dashboard on another site), else "lax" */
        sameSite: z.enum(["lax", "strict", "none"]).optional(),
        /** @default true when sameSite is "none" or the request came over https */
        secure: z.boolean().optional(),
      })
      .optional(),
  })
  .optional();

/** Requests per minute, or `false` for no limit. */
const perMinute = z.union([z.literal(false), z.number().int().min(1).max(1_000_000)]);

/** The zod schema of `options.rateLimits`; `false` turns every limit off. */
export const rateLimitOptionsSchema = z
  .union([
    z.literal(false),
    z.strictObject({
      /** Requests per minute of a key that sets no `rateLimit` of its own. @default false (a key's budget is its primary limit) */
      keyDefault: perMinute.optional(),
      /** Requests per minute per client IP on the credential-free routes, per group. */
      perIp: z
        .strictObject({
          /** `POST /api/auth/nonce` and `/verify`. @default 60 */
          auth: perMinute.optional(),
          /** `POST /v1/feedback`. @default 60 */
          feedback: perMinute.optional(),
          /** `POST /api/dispenser/claim`. @default 10 */
          dispenser: perMinute.optional(),
          /** `GET /agents`, `/agents/search` and `/api/directory/agents` (each a scan of the cards, or a call to the directory with your key). @default 120 */
          agents: perMinute.optional(),
          /** `GET /v1/videos/{id}` and `/v1/videos/{id}/stream` (each a store read; see also `video.streamsPerClient`). @default 300 */
          videos: perMinute.optional(),
        })
        .optional(),
      /**
       * Requests per minute per owner wallet on the routes that write its keys: create
       * (`POST /api/keys`), update (`PATCH /api/keys/{id}`) and rotate. Each adds rows (a key, its
       * change events) that stay; without a limit one wallet session could add them as fast as the
       * gateway answers. The internal secret (the host app's own server) is not counted.
       */
      perWallet: z
        .strictObject({
          /** Key create, update and rotate. @default 60 */
          keys: perMinute.optional(),
        })
        .optional(),
      /**
       * UTF-8 bytes of chat prompt per minute that the gateway tokenizes before anybody has paid for
       * the call, per client IP (no key: a 402 quote, or an x402 request, priced before its payment is
       * verified) or per owner wallet (a service key's call, whatever key). Counting tokens is the one
       * costly step such a request can ask for (up to ~0.75 s of CPU for the 768 KiB a request may
       * have tokenized: 128 Ki characters of messages and as many of tools). A call that is billed
       * gives its bytes back; beyond the limit, 429 `rate_limited`. At least 1 MiB, so that one
       * request of any size fits. @default 4194304 (4 MiB)
       */
      unpaidChatBytes: z.union([z.literal(false), z.number().int().min(1_048_576).max(1_000_000_000)]).optional(),
      /** How many clients of each kind (IPs, keys, wallets, unpaid-chat IPs and wallets) the limiter tracks at once; beyond it the oldest of that kind is forgotten. @default 100000 */
      maxTrackedClients: z.number().int().min(100).max(10_000_000).optional(),
    }),
  ])
  .optional();

/** A group of credential-free routes limited per client IP. */
export type IpLimitGroup = "auth" | "feedback" | "dispenser" | "agents" | "videos";

/** A group of wallet-proven routes limited per owner wallet. */
export type WalletLimitGroup = "keys";

/** The rate limits after defaults: requests per minute, or undefined for none. */
export interface ResolvedRateLimits {
  readonly keyDefault: number | undefined;
  readonly perIp: Readonly<Record<IpLimitGroup, number | undefined>>;
  readonly perWallet: Readonly<Record<WalletLimitGroup, number | undefined>>;
  /** Bytes of chat prompt tokenized before payment, per minute per client IP or owner wallet. */
  readonly unpaidChatBytes: number | undefined;
  readonly maxTrackedClients: number;
}

/** Applies the defaults of {@link rateLimitOptionsSchema}. */
export function resolveRateLimits(options: z.output<typeof rateLimitOptionsSchema>): ResolvedRateLimits {
  const off = (v: number | false | undefined, def: number | undefined) => (v === false ? undefined : (v ?? def));
  if (options === false)
    return { keyDefault: undefined, perIp: { auth: undefined, feedback: undefined, dispenser: undefined, agents: undefined, videos: undefined }, perWallet: { keys: undefined }, unpaidChatBytes: undefined, maxTrackedClients: 100 };
  const ip = options?.perIp;
  return {
    keyDefault: off(options?.keyDefault, undefined),
    perIp: { auth: off(ip?.auth, 60), feedback: off(ip?.feedback, 60), dispenser: off(ip?.dispenser, 10), agents: off(ip?.agents, 120), videos: off(ip?.videos, 300) },
    perWallet: { keys: off(options?.perWallet?.keys, 60) },
    unpaidChatBytes: off(options?.unpaidChatBytes, 4 * 1024 * 1024),
    maxTrackedClients: options?.maxTrackedClients ?? 100_000,
  };
}
