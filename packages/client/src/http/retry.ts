/**
 * The retry policy: which failures are retried and how long to wait. See the README's "Retries"
 * section for the reasoning; the short form:
 *
 * - idempotent calls (every GET and DELETE, prepare with its idempotency key, settle and abort
 *   (replayed by the gateway), key updates (they set values), pricing and search POSTs, the
 *   settlement batch): retried on 408, 409, 429, 5xx, connection errors and timeouts;
 * - calls that charge or create without an idempotency key (media, key create and rotation,
 *   legacy key settle, feedback, dispenser claim): retried only on 408, 429 and 503 — answers that say the
 *   request was not processed — never after a connection error, a timeout, 500, 502 or 504, where
 *   it may have gone through;
 * - an `x-should-retry: true|false` answer header overrides both (the gateway sends `false` on
 *   every 409);
 * - otherwise a gateway error whose code is definitive is never retried: its conflicts, and
 *   `not_configured` (a 503 that only a configuration change fixes). This also holds where the
 *   header is invisible (a browser when CORS does not expose it) or absent (an older gateway).
 */

/** Gateway envelope codes that repeating the request cannot fix, whatever their status. */
export const DEFINITIVE_CODES: ReadonlySet<string> = new Set([
  "chain_mismatch",
  "amount_exceeds_reservation",
  "invalid_state",
  "idempotency_conflict",
  "already_claimed",
  "limit_below_committed",
  "not_configured",
]);

/** First backoff step in ms. */
export const INITIAL_RETRY_DELAY_MS = 500;
/** Backoff ceiling in ms. */
export const MAX_RETRY_DELAY_MS = 8_000;
/** A `Retry-After` longer than this is not waited for: the error is thrown instead. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Whether an HTTP error answer is retried, for an idempotent call or not; `code` is the envelope's. */
export function isRetryableAnswer(status: number, headers: Headers, idempotent: boolean, code?: string): boolean {
  const explicit = headers.get("x-should-retry");
  if (explicit === "true") return true;
  if (explicit === "false") return false;
  if (code !== undefined && DEFINITIVE_CODES.has(code)) return false;
  if (status === 408 || status === 429 || status === 503) return true;
  return idempotent && (status === 409 || status >= 500);
}

/**
 * The wait the server asks for, in ms: `retry-after-ms`, else `Retry-After` as seconds or an
 * HTTP date (relative to `now`). Undefined when absent or malformed.
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Number(ms);
  const after = headers.get("retry-after");
  if (after === null) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(after)) return Number(after) * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * How long to wait before retry number `retry + 1` (`retry` retries already made): the server's
 * `Retry-After` when it gives one (undefined — do not retry — when it is over
 * {@link MAX_RETRY_AFTER_MS}), else exponential backoff from 500 ms, doubling up to 8 s, minus up
 * to 25% jitter.
 */
export function retryDelayMs(retry: number, headers: Headers | undefined, random: () => number = Math.random, now: number = Date.now()): number | undefined {
  const asked = headers ? retryAfterMs(headers, now) : undefined;
  if (asked !== undefined) return asked <= MAX_RETRY_AFTER_MS ? asked : undefined;
  const base = Math.min(INITIAL_RETRY_DELAY_MS * 2 ** retry, MAX_RETRY_DELAY_MS);
  return base * (1 - random() * 0.25);
}

/** Waits `ms`; rejects with the signal's reason as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
