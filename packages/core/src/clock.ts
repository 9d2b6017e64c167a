/** A source of the current time, injectable so tests can move time by hand. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; for tests. */
export interface ManualClock extends Clock {
  /** Moves time forward by `ms` milliseconds. */
  advance(ms: number): void;
  /** Sets the time to `ms`. */
  set(ms: number): void;
}

/** Creates a {@link ManualClock} starting at `startMs` (default 2026-01-01T00:00:00Z). */
export function createManualClock(startMs = Date.UTC(2026, 0, 1)): ManualClock {
  let t = startMs;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
    set: (ms) => {
      t = ms;
    },
  };
}
