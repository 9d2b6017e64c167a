/**
 * The daily allowance of anonymous ratings (docs/discovery.md "Feedback"): one client (IP, or IPv6
 * /64) gives one target at most `perTarget` ratings a day, and all targets at most
 * {@link RATINGS_PER_CLIENT_DAY}. Counted in this process's memory, in its own bounded maps: a
 * window is forgotten only once its day is over, never to make room (so rating other targets cannot
 * reset a target's allowance), and when a map is full of live windows a new rating is refused.
 */
import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";

/** Anonymous ratings one client may give in all targets a day: it bounds what one client holds of the maps. */
export const RATINGS_PER_CLIENT_DAY = 100;
const DAY_MS = 86_400_000;

interface Window {
  count: number;
  resetAt: number;
}

/** Fixed one-day windows by subject, at most `capacity` of them, never evicted live. */
function dayWindows(capacity: number) {
  const windows = new Map<string, Window>();
  return {
    /** The live window of `subject` at `now`, or a new one; undefined when none fits. */
    at(subject: string, now: number): Window | undefined {
      const w = windows.get(subject);
      if (w && w.resetAt > now) return w;
      if (w) windows.delete(subject);
      // Windows are in the order they opened, so the lapsed ones lead.
      for (const [key, old] of windows) {
        if (old.resetAt > now) break;
        windows.delete(key);
      }
      if (windows.size >= capacity) return undefined;
      const fresh = { count: 0, resetAt: now + DAY_MS };
      windows.set(subject, fresh);
      return fresh;
    },
  };
}

/** The allowance of anonymous ratings. */
export interface AnonymousRatings {
  /**
   * Counts one anonymous rating of `target` by `client`. Throws 429 `rate_limited` (with
   * `Retry-After`) past the client's allowance for the target or for the day, or when the gateway
   * already holds `capacity` live windows; counts nothing then.
   */
  admit(client: string, target: { type: string; id: string }): void;
}

/** Creates the allowance: `perTarget` ratings of one target a day per client (0: none), `capacity` windows of each kind. */
export function createAnonymousRatings(clock: Clock, perTarget: number, capacity = 100_000): AnonymousRatings {
  const byTarget = dayWindows(capacity);
  const byClient = dayWindows(capacity);
  const refuse = (message: string, limit: number, resetAt: number) => {
    const retryAfter = Math.max(1, Math.ceil((resetAt - clock.now()) / 1000));
    throw new GatewayError(
      "rate_limited",
      `${message}; rate with a service key or a wallet session (one voice per wallet), or send a comment without a rating.`,
      {
        headers: { "retry-after": String(retryAfter) },
        details: { limit, retryAfterSeconds: retryAfter },
      },
    );
  };
  return {
    admit(client, target) {
      const now = clock.now();
      if (perTarget === 0) return refuse("This gateway counts no anonymous ratings", 0, now + DAY_MS);
      // The client's allowance first: a client that has used it opens no window for another target.
      const mine = byClient.at(client, now);
      if (!mine) return refuse("The gateway holds as many anonymous ratings as it counts today", capacity, now + DAY_MS);
      if (mine.count >= RATINGS_PER_CLIENT_DAY)
        return refuse(`${client} has given ${RATINGS_PER_CLIENT_DAY} anonymous ratings today`, RATINGS_PER_CLIENT_DAY, mine.resetAt);
      const one = byTarget.at(`${client}|${target.type}|${target.id}`, now);
      if (!one) return refuse("The gateway holds as many anonymous ratings as it counts today", capacity, now + DAY_MS);
      if (one.count >= perTarget)
        return refuse(`${client} has given this target ${perTarget} anonymous rating${perTarget === 1 ? "" : "s"} today`, perTarget, one.resetAt);
      one.count++;
      mine.count++;
    },
  };
}
