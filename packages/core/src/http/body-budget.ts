/** The per-process cap on request-body bytes being read or held at once. */
import { GatewayError } from "../errors.js";

/** The bytes one request holds: taken up front (a declared length) and as chunks arrive. */
export interface BodyHold {
  /** Takes `bytes` more, or throws 503 `overloaded` (with `Retry-After: 1`) when they do not fit. */
  take(bytes: number): void;
  /** Gives back everything this hold took; calling it again does nothing. */
  release(): void;
}

/** A counter of body bytes in flight. */
export interface BodyBudget {
  /**
   * Takes `bytes` from the budget, or throws 503 `overloaded` (with `Retry-After: 1`) when they do
   * not fit. Returns the release function; calling it more than once releases once.
   */
  acquire(bytes: number): () => void;
  /** Opens a hold that takes bytes as they come (see {@link BodyHold}). */
  hold(): BodyHold;
  /** Bytes currently taken. */
  readonly inUse: number;
}

/** Creates a budget of `capBytes`. A single request larger than the cap is still let through when nothing else is in flight. */
export function createBodyBudget(capBytes: number): BodyBudget {
  let inUse = 0;
  const hold = (): BodyHold => {
    let held = 0;
    let released = false;
    return {
      take(bytes) {
        if (released) return;
        if (inUse - held > 0 && inUse + bytes > capBytes)
          throw new GatewayError("overloaded", "The gateway is reading too many request bodies at once; retry shortly.", { headers: { "retry-after": "1" } });
        inUse += bytes;
        held += bytes;
      },
      release() {
        if (released) return;
        released = true;
        inUse -= held;
      },
    };
  };
  return {
    get inUse() {
      return inUse;
    },
    hold,
    acquire(bytes) {
      const h = hold();
      h.take(bytes);
      return () => h.release();
    },
  };
}
