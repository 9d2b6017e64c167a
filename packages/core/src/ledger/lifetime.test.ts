/**
 * An intent's lifetime: the gateway's `intentTtlMs`, or a call's own longer TTL (a long stream),
 * never beyond MAX_INTENT_LIFETIME_MS, which the stores' usage read relies on
 * (`heldKeysSince`); and `intentTtlMs` itself is refused beyond it.
 */
import { describe, expect, it } from "vitest";
import { createGateway } from "../gateway.js";
import { createManualClock } from "../clock.js";
import { createMemoryStore } from "../store/memory.js";
import { MAX_INTENT_LIFETIME_MS } from "../store/usage-days.js";

const OWNER = "0x00000000000000000000000000000000000000a1";
const HOUR = 3_600_000;

async function prepared(intentTtlMs: number, ttlMs?: number): Promise<number> {
  const clock = createManualClock(Date.UTC(2026, 0, 1));
  const gateway = createGateway({ store: createMemoryStore(), clock, sweepIntervalMs: 0, intentTtlMs });
  const { key } = await gateway.services.keys.create({
    owner: OWNER,
    chainId: 8453,
    purpose: "api",
    budgetLimit: 1_000n,
    expiresAt: clock.now() + 30 * 24 * HOUR,
  });
  const { intent } = await gateway.services.ledger.prepare({
    key,
    chainId: 8453,
    service: "s",
    action: "a",
    resource: "r",
    method: "POST",
    maxAmount: 10n,
    ttlMs,
  });
  return intent.expiresAt - clock.now();
}

describe("intent lifetime", () => {
  it("is intentTtlMs, or a call's own longer TTL, and never longer than MAX_INTENT_LIFETIME_MS", async () => {
    expect(MAX_INTENT_LIFETIME_MS).toBe(7 * 24 * HOUR);
    expect(await prepared(15 * 60_000)).toBe(15 * 60_000);
    expect(await prepared(15 * 60_000, HOUR)).toBe(HOUR);
    expect(await prepared(HOUR, 60_000)).toBe(HOUR);
    expect(await prepared(15 * 60_000, 30 * 24 * HOUR)).toBe(MAX_INTENT_LIFETIME_MS);
    expect(await prepared(MAX_INTENT_LIFETIME_MS, 8 * 24 * HOUR)).toBe(MAX_INTENT_LIFETIME_MS);
  });

  it("intentTtlMs beyond MAX_INTENT_LIFETIME_MS is refused when the gateway is created", () => {
    expect(() => createGateway({ store: createMemoryStore(), sweepIntervalMs: 0, intentTtlMs: MAX_INTENT_LIFETIME_MS + 1 })).toThrow(/intentTtlMs/);
  });
});
