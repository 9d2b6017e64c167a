/**
 * Builders and checks shared by the store conformance suite. Ids are unique within a process, so
 * several tests (or fast-check runs) can share one store.
 */
import { expect } from "vitest";
import type { ChargeRecord, KeyRecord, NewIntent, Store, VideoJobRecord } from "@tollgate/core";

/** One conformance test: gets a fresh store, throws on failure. */
export type StoreTest = (ctx: { store: Store }) => Promise<void>;

/** The suite's epoch: 2026-01-01T00:00:00Z. */
export const T0 = Date.UTC(2026, 0, 1);
export const DAY = 86_400_000;
export const OWNER = "0x00000000000000000000000000000000000000aa";
export const OTHER_OWNER = "0x00000000000000000000000000000000000000bb";
export const CHAIN = 8453;

let counter = 0;
/** A process-unique suffix. */
export function uniq(): string {
  counter += 1;
  return `${Date.now().toString(36)}${counter.toString(36).padStart(6, "0")}`;
}

/** A fresh api key with a budget of 1000 that expires a day after T0. */
export function makeKey(overrides: Partial<KeyRecord> = {}): KeyRecord {
  const id = uniq();
  return {
    keyId: `key_${id}`,
    tokenHash: id.padStart(64, "0"),
    owner: OWNER,
    chainId: CHAIN,
    purpose: "api",
    budgetLimit: 1000n,
    budgetUsed: 0n,
    budgetReserved: 0n,
    createdAt: T0,
    expiresAt: T0 + DAY,
    ...overrides,
  };
}

/** Inserts a fresh key and returns it. */
export async function addKey(store: Store, overrides: Partial<KeyRecord> = {}): Promise<KeyRecord> {
  const key = makeKey(overrides);
  await store.insertKey(key);
  return key;
}

/** A new intent on `keyId` for `maxAmount`, created at T0, expiring 15 minutes later. */
export function makeIntent(keyId: string, maxAmount: bigint, overrides: Partial<NewIntent> = {}): NewIntent {
  return {
    intentId: `pi_${uniq()}`,
    keyId,
    maxAmount,
    fingerprint: "fp",
    request: { service: "conformance", action: "test", meter: { units: "7" } },
    createdAt: T0,
    expiresAt: T0 + 15 * 60_000,
    ...overrides,
  };
}

/** A queued charge of `amount` on `key`. */
export function makeCharge(key: KeyRecord, amount: bigint, overrides: Partial<ChargeRecord> = {}): ChargeRecord {
  return {
    chargeId: `ch_${uniq()}`,
    keyId: key.keyId,
    owner: key.owner,
    chainId: key.chainId,
    amount,
    status: "queued",
    createdAt: T0,
    ...overrides,
  };
}

/** A queued video job, as a paid video submission inserts it (settle, x402 mark). */
export function makeVideoJob(overrides: Partial<VideoJobRecord> = {}): VideoJobRecord {
  return { id: `vid_${uniq()}`, model: "sora-2", provider: "openai", upstream: "local", upstreamId: `up_${uniq()}`, status: "queued", receipt: { paid: "5" }, createdAt: T0, updatedAt: T0, ...overrides };
}

/** Reserves and asserts success; returns the intent id. */
export async function reserveOk(store: Store, keyId: string, maxAmount: bigint, overrides: Partial<NewIntent> = {}, now = T0): Promise<string> {
  const r = await store.reserve({ intent: makeIntent(keyId, maxAmount, overrides), now });
  if (!r.ok) throw new Error(`reserve failed: ${r.reason}`);
  return r.intent.intentId;
}

/** Reads a key that must exist. */
export async function mustGetKey(store: Store, keyId: string): Promise<KeyRecord> {
  const key = await store.getKeyById(keyId);
  if (!key) throw new Error(`key ${keyId} not found`);
  return key;
}

/** Money invariant 1 (docs/architecture.md) for one key. */
export function expectBudgetInvariant(key: KeyRecord): void {
  expect(key.budgetUsed >= 0n, `used ${key.budgetUsed} negative`).toBe(true);
  expect(key.budgetReserved >= 0n, `reserved ${key.budgetReserved} negative`).toBe(true);
  expect(key.budgetUsed + key.budgetReserved <= key.budgetLimit, `used ${key.budgetUsed} + reserved ${key.budgetReserved} > limit ${key.budgetLimit}`).toBe(true);
}

/** A small seeded PRNG (mulberry32) so random orders are reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher–Yates shuffle with the given PRNG (returns a new array). */
export function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
