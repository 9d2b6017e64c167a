/**
 * The sweeper's schedule, driven by a recording timer over a real gateway's ledger: a run that
 * stops at its cap is followed after a short pause, until the backlog is gone; then the interval.
 */
import { describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createGateway } from "../gateway.js";
import { createMemoryStore } from "../store/memory.js";
import { BACKLOG_MIN_PAUSE_MS, nextSweepDelay, startSweeper, type SweepTimer } from "./sweeper.js";

const OWNER = "0x00000000000000000000000000000000000000a1";

/** A timer that only records: `fire()` runs the pending callback, as its delay had passed. */
function recordingTimer() {
  const delays: number[] = [];
  let pending: (() => void) | undefined;
  const cleared: unknown[] = [];
  const timer: SweepTimer = {
    set(run, ms) {
      delays.push(ms);
      pending = run;
      return delays.length;
    },
    clear: (handle) => void cleared.push(handle),
  };
  const fire = async () => {
    const run = pending;
    pending = undefined;
    expect(run).toBeDefined();
    run!();
    // The run is async: wait until it has scheduled the next one (or stopped).
    for (let i = 0; i < 100 && pending === undefined; i++) await new Promise((r) => setTimeout(r, 1));
  };
  return { timer, delays, cleared, fire };
}

describe("expiry sweeper", () => {
  it("the pause after a run: the interval without a backlog; after one, four times the run, between 50 ms and the interval", () => {
    expect(nextSweepDelay(false, 400, 60_000)).toBe(60_000);
    expect(nextSweepDelay(true, 400, 60_000)).toBe(1_600);
    expect(nextSweepDelay(true, 1, 60_000)).toBe(BACKLOG_MIN_PAUSE_MS);
    expect(nextSweepDelay(true, 20_000, 60_000)).toBe(60_000);
    expect(nextSweepDelay(true, 400, 1_000)).toBe(1_000);
  });

  it("drains a backlog run after run with short pauses, then goes back to the interval", async () => {
    const clock = createManualClock();
    const store = createMemoryStore();
    const gateway = createGateway({ store, clock, sweepIntervalMs: 0, intentTtlMs: 60_000 });
    const { key } = await gateway.services.keys.create({
      owner: OWNER,
      chainId: 8453,
      purpose: "api",
      budgetLimit: 10_000n,
      expiresAt: clock.now() + 86_400_000,
    });
    for (let i = 0; i < 450; i++)
      await gateway.services.ledger.prepare({ key, chainId: 8453, service: "s", action: "a", resource: "r", method: "POST", maxAmount: 1n });
    clock.advance(120_000); // all 450 overdue
    const expired: number[] = [];
    // Runs of at most 4 batches of 50 (a cap of 200), each timed at 15 ms (the clock moves 15 ms a reading).
    let t = 0;
    const { timer, delays, fire } = recordingTimer();
    const sweeper = startSweeper({
      intervalMs: 60_000,
      run: async () => {
        const n = await gateway.services.ledger.sweep(50, 4);
        expired.push(n);
        return n >= 200;
      },
      onError: (err) => {
        throw err;
      },
      timer,
      now: () => (t += 15),
    });
    expect(delays).toEqual([60_000]);
    await fire();
    await fire();
    await fire();
    expect(expired).toEqual([200, 200, 50]);
    expect(delays).toEqual([60_000, 60, 60, 60_000]);
    // Every reservation is back on the key.
    expect((await store.getKeyById(key.keyId))?.budgetReserved).toBe(0n);
    sweeper.stop();
    await gateway.close();
  });

  it("a failing run is reported and the next one comes after the interval; stop() clears the timer, and a run in progress schedules nothing after it", async () => {
    const { timer, delays, cleared, fire } = recordingTimer();
    const errors: unknown[] = [];
    let finish: (() => void) | undefined;
    let calls = 0;
    const sweeper = startSweeper({
      intervalMs: 5_000,
      run: async () => {
        if (++calls === 1) throw new Error("store down");
        await new Promise<void>((resolve) => (finish = resolve));
        return true;
      },
      onError: (err) => errors.push(err),
      timer,
    });
    await fire();
    expect([calls, errors.map((e) => (e as Error).message), delays]).toEqual([1, ["store down"], [5_000, 5_000]]);
    // The second run is in progress when the sweeper stops: it finishes, and nothing follows.
    void fire();
    await new Promise((r) => setTimeout(r, 5));
    expect(calls).toBe(2);
    sweeper.stop();
    expect(cleared).toEqual([2]);
    finish!();
    await new Promise((r) => setTimeout(r, 5));
    expect(delays).toEqual([5_000, 5_000]);
  });
});
