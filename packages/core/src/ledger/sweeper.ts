/**
 * The expiry sweeper's schedule. A run expires overdue intents in batches, up to a cap; when it
 * stops at the cap (more are overdue: a backlog, many keys at their open-intent cap, say), the
 * next run starts after a pause proportional to the run's own time instead of a whole interval,
 * so a backlog of a million drains in about a minute and a half (measured on SQLite) instead of
 * twenty, while the sweeper still holds the serving thread at most a fifth of the time (requests
 * are served between its batches, and during its pauses). Correctness never waits for it: every read and a reserve that does not
 * fit expire overdue intents themselves.
 */

/** The timer the sweeper schedules its runs with. */
export interface SweepTimer {
  set(run: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** Options of {@link startSweeper}. */
export interface SweeperOptions {
  /** The pause between runs that found no backlog (and before the first), in ms. */
  intervalMs: number;
  /** One run; resolves to true when it stopped at its cap with intents still overdue. */
  run: () => Promise<boolean>;
  /** Called with a run's error; the next run is scheduled as after a run without a backlog. */
  onError: (err: unknown) => void;
  /** @default setTimeout, unref'ed (the sweeper never keeps a process alive) */
  timer?: SweepTimer;
  /** A monotonic clock in ms, to time runs. @default performance.now */
  now?: () => number;
}

/** After a run with a backlog, the pause is this many times the run's duration (the sweeper's share of time is at most 1 / (1 + this)). */
export const BACKLOG_PAUSE_FACTOR = 4;
/** The shortest pause after a run with a backlog, in ms. */
export const BACKLOG_MIN_PAUSE_MS = 50;

/** The pause before the next run: after a backlog, {@link BACKLOG_PAUSE_FACTOR} times the run's `elapsedMs` (at least {@link BACKLOG_MIN_PAUSE_MS}, at most the interval). */
export function nextSweepDelay(backlog: boolean, elapsedMs: number, intervalMs: number): number {
  if (!backlog) return intervalMs;
  return Math.min(intervalMs, Math.max(BACKLOG_MIN_PAUSE_MS, Math.ceil(elapsedMs * BACKLOG_PAUSE_FACTOR)));
}

const defaultTimer: SweepTimer = {
  set(run, ms) {
    const handle = setTimeout(run, ms);
    handle.unref?.();
    return handle;
  },
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Starts the sweeper: the first run after `intervalMs`, each next one after {@link nextSweepDelay}.
 * One run at a time. `stop()` schedules nothing more (a run in progress finishes).
 */
export function startSweeper(options: SweeperOptions): { stop(): void } {
  const timer = options.timer ?? defaultTimer;
  const now = options.now ?? (() => performance.now());
  let handle: unknown;
  let stopped = false;
  const schedule = (ms: number) => {
    if (!stopped) handle = timer.set(() => void tick(), ms);
  };
  const tick = async () => {
    const started = now();
    let backlog = false;
    try {
      backlog = await options.run();
    } catch (err) {
      options.onError(err);
    }
    schedule(nextSweepDelay(backlog, now() - started, options.intervalMs));
  };
  schedule(options.intervalMs);
  return {
    stop() {
      stopped = true;
      timer.clear(handle);
    },
  };
}
