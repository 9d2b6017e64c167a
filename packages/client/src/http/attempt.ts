/** One attempt's abort signal: the caller's signal combined with the attempt's timeout, and what ended it. */
import { ConnectionError, TimeoutError, UserAbortError, type TollgateError } from "../errors.js";

/** The signal of one attempt and its cleanup. */
export interface Attempt {
  /** Aborted by the caller's signal, by the timeout, or by {@link Attempt.abort}. */
  readonly signal: AbortSignal;
  /** Stops the timeout (a stream's deadline covers its headers only). */
  clearTimeout(): void;
  /** Aborts the attempt's request (e.g. a stream the caller stopped reading). */
  abort(): void;
  /** Stops the timeout and stops listening to the caller's signal. Idempotent. */
  done(): void;
  /** The error for a failed fetch or body read: the caller's abort, the timeout, or a connection failure. */
  failure(cause: unknown): TollgateError;
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause instanceof Error ? cause.cause : undefined;
  const code = (inner as { code?: unknown } | undefined)?.code;
  return inner ? `${cause.message} (${typeof code === "string" ? `${code}: ` : ""}${inner.message})` : cause.message;
}

/** The error of a call whose caller aborted it. */
export function userAbort(signal: AbortSignal): UserAbortError {
  return new UserAbortError("The call was aborted by its signal.", { cause: signal.reason });
}

/** Starts an attempt with deadline `timeoutMs` under the caller's `caller` signal. */
export function startAttempt(caller: AbortSignal | undefined, timeoutMs: number): Attempt {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(caller!.reason);
  caller?.addEventListener("abort", onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`No answer within ${timeoutMs} ms.`, "TimeoutError"));
  }, timeoutMs);
  const clear = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  return {
    signal: controller.signal,
    clearTimeout: clear,
    abort: () => controller.abort(),
    done() {
      clear();
      caller?.removeEventListener("abort", onAbort);
    },
    failure(cause) {
      if (caller?.aborted) return userAbort(caller);
      if (timedOut) return new TimeoutError(`No complete answer within ${timeoutMs} ms.`, { cause });
      return new ConnectionError(`Connection failed: ${describe(cause)}`, { cause });
    },
  };
}
