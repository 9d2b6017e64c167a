/**
 * The pace a request body must keep while it is read. A body holds its bytes of the in-flight cap
 * (./body-budget.ts) while it is read, so a client that sends slowly holds them as long as the
 * server lets a request live. Each read gets a grace period, after which the bytes received must keep
 * up with a minimum average rate, and a most it may last; a read that falls behind or outlasts it is
 * refused with 408 `request_timeout`, its connection closed, and its bytes given back. A chunk that
 * still arrives for a refused read throws, so the adapter stops reading it.
 *
 * One shared interval checks every read in flight, so a read costs no timer of its own.
 */
import { GatewayError } from "../errors.js";

/** How a body read must keep up. */
export interface BodyPaceOptions {
  /** The least average rate, in bytes per second, once the grace period is over (0: any rate). */
  readonly minBytesPerSecond: number;
  /** How long a read may go before the rate is asked of it, in ms. */
  readonly graceMs: number;
  /** The longest a read may last, in ms, whatever its rate. */
  readonly maxMs: number;
}

/** One body read, watched for its pace. */
export interface PacedRead {
  /** Counts `bytes` more received; throws the 408 once the read was refused (the adapter stops reading). */
  received(bytes: number): void;
  /**
   * `read`, or a rejection with 408 `request_timeout` once the bytes received fall behind the pace;
   * the watch ends when either settles.
   */
  guard<T>(read: Promise<T>): Promise<T>;
}

/** The watcher of every body read in flight. */
export interface BodyPacer {
  /** Starts watching one read (its clock starts now). */
  watch(): PacedRead;
  /** Stops the shared interval (the gateway closing); reads still watched are no longer refused. */
  close(): void;
}

interface Watched {
  startTick: number;
  bytes: number;
  fail?: (error: unknown) => void;
  /** The 408, once refused. */
  refused?: GatewayError;
}

/** The 408 of a body that fell behind or took too long; it closes the connection, as the body's remainder is never read. */
function tooSlow(bytes: number, seconds: number, options: BodyPaceOptions): GatewayError {
  const rule = `send at least ${options.minBytesPerSecond} bytes a second after the first ${options.graceMs / 1000} s, and the whole body within ${options.maxMs / 1000} s`;
  return new GatewayError("request_timeout", `The request body arrived too slowly: ${bytes} bytes in ${seconds} s; ${rule}.`, {
    headers: { connection: "close" },
    details: { minBytesPerSecond: options.minBytesPerSecond, graceMs: options.graceMs, maxMs: options.maxMs },
  });
}

/** Creates the pacer of one gateway. */
export function createBodyPacer(options: BodyPaceOptions): BodyPacer {
  const { minBytesPerSecond, graceMs, maxMs } = options;
  const tickMs = Math.max(50, Math.min(1000, Math.floor(graceMs / 2)));
  const reads = new Set<Watched>();
  let tick = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  const check = () => {
    tick++;
    for (const read of reads) {
      const elapsedMs = (tick - read.startTick) * tickMs;
      if (elapsedMs <= maxMs && (elapsedMs <= graceMs || read.bytes >= ((elapsedMs - graceMs) * minBytesPerSecond) / 1000)) continue;
      reads.delete(read);
      read.refused = tooSlow(read.bytes, Math.round(elapsedMs / 1000), options);
      read.fail?.(read.refused);
    }
  };
  return {
    watch() {
      if (closed) return { received: () => {}, guard: (read) => read };
      if (timer === undefined) {
        timer = setInterval(check, tickMs);
        timer.unref?.();
      }
      const read: Watched = { startTick: tick, bytes: 0 };
      return {
        received(bytes) {
          if (read.refused) throw read.refused;
          read.bytes += bytes;
        },
        guard(body) {
          reads.add(read);
          return new Promise((resolve, reject) => {
            read.fail = reject;
            body.then(
              (value) => {
                reads.delete(read);
                resolve(value);
              },
              (error: unknown) => {
                reads.delete(read);
                reject(error);
              },
            );
          });
        },
      };
    },
    close() {
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      reads.clear();
    },
  };
}
