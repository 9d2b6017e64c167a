/**
 * The per-process cap on request-body bytes being read or held at once, and each client's share of
 * it: one client (IP, or IPv6 /64) cannot take the whole cap with bodies it never finishes sending
 * and so keep every other client's bodies out (docs/security.md "Bodies").
 */
import { GatewayError } from "../errors.js";

/** The bytes one request holds: taken up front (a declared length) and as chunks arrive. */
export interface BodyHold {
  /**
   * Takes `bytes` more. Throws 503 `overloaded` when they do not fit in the process's cap, and 429
   * `rate_limited` when they do not fit in the client's share; both with `Retry-After: 1` and
   * `Connection: close` (the rest of the body is not read). A
   * request is let past a cap when nothing else holds bytes under it, so one body larger than a
   * cap is still read when it is alone.
   */
  take(bytes: number): void;
  /** Gives back everything this hold took; calling it again does nothing. */
  release(): void;
}

/** A counter of body bytes in flight, in all and per client. */
export interface BodyBudget {
  /**
   * Takes `bytes` from the budget (see {@link BodyHold.take}). Returns the release function;
   * calling it more than once releases once.
   */
  acquire(bytes: number, client?: string): () => void;
  /**
   * Opens a hold that takes bytes as they come (see {@link BodyHold}), counted against `client`'s
   * share too when given. A request whose client is unknown counts against the process cap alone.
   */
  hold(client?: string): BodyHold;
  /** Bytes currently taken. */
  readonly inUse: number;
  /** Bytes `client` currently holds. */
  heldBy(client: string): number;
  /** How many clients hold bytes now. */
  readonly clients: number;
}

/** A refused body is never read, so its connection closes after the answer. */
const RETRY = { "retry-after": "1", connection: "close" } as const;

/**
 * Creates a budget of `capBytes` in all, of which one client may hold at most `perClientBytes`
 * (default: the whole cap).
 */
export function createBodyBudget(capBytes: number, perClientBytes: number = capBytes): BodyBudget {
  let inUse = 0;
  const clients = new Map<string, number>();
  const hold = (client?: string): BodyHold => {
    let held = 0;
    let released = false;
    return {
      take(bytes) {
        // Nothing taken, nothing kept: a client whose request holds no bytes gets no entry.
        if (released || bytes === 0) return;
        if (inUse - held > 0 && inUse + bytes > capBytes)
          throw new GatewayError("overloaded", "The gateway is reading too many request bodies at once; retry shortly.", { headers: RETRY });
        if (client !== undefined) {
          const mine = clients.get(client) ?? 0;
          if (mine - held > 0 && mine + bytes > perClientBytes)
            throw new GatewayError(
              "rate_limited",
              `Too many request bodies in flight from ${client} (at most ${perClientBytes} bytes at once); finish or cancel the others first.`,
              {
                headers: RETRY,
                details: { limitBytes: perClientBytes },
              },
            );
          clients.set(client, mine + bytes);
        }
        inUse += bytes;
        held += bytes;
      },
      release() {
        if (released) return;
        released = true;
        inUse -= held;
        if (client === undefined || held === 0) return;
        const left = (clients.get(client) ?? 0) - held;
        if (left > 0) clients.set(client, left);
        else clients.delete(client);
      },
    };
  };
  return {
    get inUse() {
      return inUse;
    },
    heldBy: (client) => clients.get(client) ?? 0,
    get clients() {
      return clients.size;
    },
    hold,
    acquire(bytes, client) {
      const h = hold(client);
      h.take(bytes);
      return () => h.release();
    },
  };
}
