import type { Clock } from "./clock.js";
import type { IdGenerator } from "./ids.js";
import type { HttpClient } from "./http/client.js";
import type { BodyBudget } from "./http/body-budget.js";
import type { BodyPacer } from "./http/body-pace.js";
import type { RateLimiter } from "./http/rate-limit.js";
import type { ResolvedRateLimits } from "./auth/options.js";
import type { SignInPolicy } from "./auth/domains.js";
import type { WalletAuthenticator } from "./options.js";
import type { GatewayServices } from "./services.js";
import type { Observability } from "./observability/service.js";

/** Who may act for a wallet (see http/wallet-proof.ts). */
export interface WalletPolicy {
  /** `"verified"`: the header must be proven; `"trusted-header"`: it is enough on its own. */
  readonly mode: "verified" | "trusted-header";
  /** The host app's hook, when configured. */
  readonly authenticate: WalletAuthenticator | undefined;
  /** The secret that lets a host app act for any wallet it names. */
  readonly internalSecret: string | undefined;
  /** Name of the session cookie. */
  readonly cookieName: string;
}

/** Everything a route handler may use besides its parsed inputs. Built once by `createGateway`. */
export interface GatewayContext {
  readonly services: GatewayServices;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly http: HttpClient;
  readonly limits: { readonly jsonBodyBytes: number; readonly mediaBodyBytes: number; readonly unpaidBodyBytes: number };
  /** `"compose"` switches the token prefix and SSE event names (docs/api.md "Aliases and compat differences"). */
  readonly compat: "compose" | undefined;
  readonly wallets: WalletPolicy;
  /** Request rate limits and their counters. */
  readonly rateLimits: ResolvedRateLimits & { readonly limiter: RateLimiter; readonly trustedProxies: number };
  /** In-flight request-body bytes of this process, in all and per client. */
  readonly bodyBudget: BodyBudget;
  /** The pace a body read must keep (http/body-pace.ts). */
  readonly bodyPace: BodyPacer;
  /** The hosts a SIWE message may name (auth/domains.ts). */
  readonly signIn: SignInPolicy;
  /** The session cookie's attributes. */
  readonly sessionCookie: { readonly sameSite: "lax" | "strict" | "none"; readonly secure: boolean | undefined };
  /** Logger, metrics, readiness and the per-request recorder. */
  readonly observability: Observability;
  /**
   * Work a request leaves running after its answer ended (a stream billed after its client left):
   * `close()` waits for it, up to a bound, before it closes the store.
   */
  readonly background: { track(work: Promise<unknown>): void };
}
