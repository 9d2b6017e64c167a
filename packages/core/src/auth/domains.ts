/**
 * Which hosts a Sign-In with Ethereum message may name. The domain binds a signature to the site
 * that asked for it; a gateway that believed the request's `Host` would let a phishing page relay
 * a signature its visitor gave it (any client can send `Host: phishing.example`).
 */
import { GatewayError } from "../errors.js";

/** What decides the sign-in hosts of one gateway, fixed when it is created. */
export interface SignInPolicy {
  /** `auth.domains`: when set, exactly these. */
  readonly configured: readonly string[] | undefined;
  /** The hosts of the explicit `cors.origins`: the sites the operator lets browsers call from. */
  readonly corsHosts: readonly string[];
  /** Whether a loopback `Host` (a developer's machine) is believed: never with `NODE_ENV=production`. */
  readonly loopback: boolean;
}

/**
 * The sign-in policy of a gateway's options. Without `auth.domains`: the hosts of the explicit
 * `cors.origins`, plus the request's own `Host` when it names a loopback address and
 * `nodeEnv` is not `"production"`.
 */
export function signInPolicy(options: {
  domains?: readonly string[] | undefined;
  corsOrigins?: "*" | readonly string[] | undefined;
  nodeEnv: string | undefined;
}): SignInPolicy {
  const origins = options.corsOrigins === undefined || options.corsOrigins === "*" ? [] : options.corsOrigins;
  return { configured: options.domains, corsHosts: [...new Set(origins.map((o) => new URL(o).host))], loopback: options.nodeEnv !== "production" };
}

/**
 * Whether `host` (`name[:port]`) names this machine: `localhost`, a `*.localhost` name, an address
 * in 127.0.0.0/8 or `[::1]`.
 */
export function isLoopbackHost(host: string): boolean {
  let name: string;
  try {
    name = new URL(`http://${host}/`).hostname;
  } catch {
    return false;
  }
  return name === "localhost" || name.endsWith(".localhost") || name === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/**
 * Whether a session opened for `domain` proves its wallet on a request that reached `host`: the
 * domain is one this gateway signs in to (a store shared by gateways of other domains, staging
 * and production say, must not carry one's sessions to the other). Without `auth.domains`, a
 * session of a loopback domain holds on any loopback host (one developer machine).
 */
export function servesSessionDomain(policy: SignInPolicy, domain: string, host: string | undefined): boolean {
  if (policy.configured) return policy.configured.includes(domain);
  if (policy.corsHosts.includes(domain)) return true;
  return policy.loopback && host !== undefined && isLoopbackHost(host) && isLoopbackHost(domain);
}

/** One line describing the policy, for the start banner. */
export function describeSignInPolicy(policy: SignInPolicy): string {
  if (policy.configured) return policy.configured.join(", ");
  const parts = [...policy.corsHosts, ...(policy.loopback ? ["a loopback Host (localhost, 127.0.0.1, [::1])"] : [])];
  const listed = parts.length > 0 ? parts.join(", ") : "none: sign-in answers 503 until auth.domains is set";
  return `${listed} (set auth.domains to the public host(s) users sign in at)`;
}

/**
 * The hosts a message may sign in to on a request that reached `host`.
 * @throws GatewayError 503 `not_configured` when the policy allows none (no `auth.domains`, no
 *   explicit CORS origins, and a host that is not loopback or a production process).
 */
export function signInDomains(policy: SignInPolicy, host: string | undefined): readonly string[] {
  if (policy.configured) return policy.configured;
  const domains = policy.loopback && host !== undefined && isLoopbackHost(host) ? [...policy.corsHosts, host] : policy.corsHosts;
  if (domains.length > 0) return domains;
  throw new GatewayError(
    "not_configured",
    "Sign-in is not configured: set auth.domains to the host(s) users sign in at. Without it only the hosts of cors.origins, and a loopback Host outside NODE_ENV=production, are trusted.",
  );
}
