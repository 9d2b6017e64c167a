/**
 * Request rate limits at the HTTP boundary: fixed one-minute windows per subject (a key id, or a
 * route group and client IP), counted in this process's memory on the gateway's clock. With N
 * instances behind a balancer the effective limit is N× (documented in docs/security.md).
 *
 * Written here rather than taken from a library (rate-limiter-flexible, for one) because the
 * window must follow the gateway's injectable Clock, so tests under a manual clock are exact, and
 * the whole of it is a bounded Map of counters.
 */
import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";

/** The outcome of one counted request. */
export interface RateLimitDecision {
  readonly allowed: boolean;
  /** Requests (or units of `cost`) allowed per window. */
  readonly limit: number;
  /** Requests (or units) left in the current window after this one. */
  readonly remaining: number;
  /** When the current window ends (ms since the epoch). */
  readonly resetAt: number;
}

/** A set of fixed-window counters. */
export interface RateLimiter {
  /**
   * Counts one request of `subject` against `limit` per `windowMs`, weighing `cost` units: a
   * request whose cost no longer fits the window is refused and counts nothing. `refund` gives
   * `cost` units back to the current window (never below 0), e.g. once the work was paid for.
   * @default windowMs 60000, cost 1, mode "fit"
   */
  hit(subject: string, limit: number, windowMs?: number, cost?: number, mode?: "fit" | "refund"): RateLimitDecision;
  /** How many subjects are tracked now, in all classes. */
  readonly size: number;
}

interface Window {
  count: number;
  resetAt: number;
}

/**
 * Creates a limiter. A subject's window starts at its first request and lasts `windowMs`; exactly
 * `limit` requests pass in it. Subjects fall in classes by the text before their first `:` (the
 * gateway's `ip:`, `key:`, `wallet:`, `unpaid-chat-ip:` and `unpaid-chat-wallet:`), and at most `maxSubjects` windows are kept
 * per class: beyond that, the class's lapsed ones are dropped first, then its oldest (in O(1) a
 * request, however many it keeps). So a flood of
 * new IPs cannot grow memory without bound, and it forgets only IP windows: never a key's or a
 * wallet's, which would start their limits over.
 */
export function createRateLimiter(options: { clock: Clock; maxSubjects: number }): RateLimiter {
  const classes = new Map<string, Map<string, Window>>();
  const classOf = (subject: string) => {
    const colon = subject.indexOf(":");
    const name = colon < 0 ? "" : subject.slice(0, colon);
    let windows = classes.get(name);
    if (!windows) classes.set(name, (windows = new Map()));
    return windows;
  };
  // A class's Map is in window order (a renewed window is re-inserted at the end), so its lapsed
  // windows lead: drop from the front while they have lapsed or the class is full, and stop at the
  // first live one once there is room. Each insert pays for what it drops, so a class kept full by a
  // flood of new subjects costs O(1) a request, not a scan of every window.
  const evict = (windows: Map<string, Window>, now: number) => {
    for (const [subject, w] of windows) {
      if (w.resetAt > now && windows.size < options.maxSubjects) break;
      windows.delete(subject);
    }
  };
  return {
    get size() {
      let n = 0;
      for (const windows of classes.values()) n += windows.size;
      return n;
    },
    hit(subject, limit, windowMs = 60_000, cost = 1, mode = "fit") {
      const now = options.clock.now();
      const windows = classOf(subject);
      let w = windows.get(subject);
      if (!w || w.resetAt <= now) {
        if (w) windows.delete(subject); // re-inserted at the end: Map order is window age
        else if (windows.size >= options.maxSubjects) evict(windows, now);
        w = { count: 0, resetAt: now + windowMs };
        windows.set(subject, w);
      }
      if (mode === "refund") w.count = Math.max(0, w.count - cost);
      const allowed = mode === "refund" || w.count + cost <= limit;
      if (allowed && mode === "fit") w.count += cost;
      return { allowed, limit, remaining: Math.max(0, limit - w.count), resetAt: w.resetAt };
    },
  };
}

/** The `x-ratelimit-*` headers of a decision (`reset` in seconds from now, as the IETF draft has it). */
export function rateLimitHeaders(d: RateLimitDecision, now: number): Record<string, string> {
  return {
    "x-ratelimit-limit": String(d.limit),
    "x-ratelimit-remaining": String(d.remaining),
    "x-ratelimit-reset": String(Math.max(0, Math.ceil((d.resetAt - now) / 1000))),
  };
}

/** The 429 of a refused decision, with `Retry-After` in whole seconds (at least 1); `unit` names what the limit counts. */
export function rateLimited(d: RateLimitDecision, now: number, what: string, unit = "requests"): GatewayError {
  const headers = rateLimitHeaders(d, now);
  const retryAfter = Math.max(1, Math.ceil((d.resetAt - now) / 1000));
  return new GatewayError("rate_limited", `Rate limit of ${d.limit} ${unit} per minute reached for ${what}; retry in ${retryAfter} s.`, {
    headers: Object.assign({}, headers, { "retry-after": String(retryAfter) }),
    details: { limit: d.limit, retryAfterSeconds: retryAfter },
  });
}
