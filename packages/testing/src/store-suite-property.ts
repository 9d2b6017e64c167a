/**
 * Model-based property: random sequences of reserve / settle / abort / direct charge / time
 * passing / sweep / read / revoke across several keys, checked after every step against a small
 * reference model. Covers invariants 1–4 of docs/architecture.md "Money invariants", and the
 * open-intent cap (each run reserves under a small `openLimit`, so every way out of `authorized`
 * must free its slot for the model and the store to agree).
 */
import fc from "fast-check";
import { expect } from "vitest";
import type { IntentStatus, Store } from "@tollgate/core";
import { expectBudgetInvariant, makeIntent, makeKey, T0, uniq, type StoreTest } from "./store-fixtures.js";

const KEYS = 3;

type Command =
  | { kind: "reserve"; key: number; amount: number; /** half seconds */ ttl: number; idem: number | undefined }
  | { kind: "settle"; pick: number; percent: number; over: boolean }
  | { kind: "abort"; pick: number }
  | { kind: "charge"; key: number; amount: number }
  | { kind: "advance"; ms: number }
  | { kind: "sweep"; limit: number }
  | { kind: "read"; pick: number }
  | { kind: "revoke"; key: number };

const keyIndex = fc.nat(KEYS - 1);
const intentPick = fc.oneof(fc.nat(2), fc.nat());
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("reserve" as const), key: keyIndex, amount: fc.integer({ min: 0, max: 50 }), ttl: fc.integer({ min: 1, max: 4 }), idem: fc.option(fc.nat(3), { nil: undefined }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("settle" as const), pick: intentPick, percent: fc.nat(100), over: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("abort" as const), pick: intentPick }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("charge" as const), key: keyIndex, amount: fc.nat(30) }) },
  // Time moves in half seconds, as do ttls and key lives, so it often lands exactly on an
  // expiry: the `expiresAt <= now` boundary.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 6 }).map((h) => h * 500) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("sweep" as const), limit: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("read" as const), pick: intentPick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("revoke" as const), key: keyIndex }) },
);
// Budgets of a few reservations, so exhaustion and release matter.
const keySetup = fc.array(fc.record({ limit: fc.integer({ min: 0, max: 120 }), life: fc.oneof(fc.integer({ min: 1, max: 20 }).map((s) => s * 1000), fc.constant(1_000_000)) }), { minLength: KEYS, maxLength: KEYS });

interface ModelKey {
  id: string;
  limit: bigint;
  used: bigint;
  reserved: bigint;
  revokedAt: number | undefined;
  expiresAt: number;
}
interface ModelIntent {
  id: string;
  key: ModelKey;
  max: bigint;
  status: IntentStatus;
  expiresAt: number;
  idem: string | undefined;
  final?: bigint;
}

/** Applies one command to the store and to the model, and checks the outcome agrees. */
async function step(store: Store, cmd: Command, m: { now: number; keys: ModelKey[]; intents: ModelIntent[]; run: string; openLimit: number }): Promise<void> {
  const finish = (i: ModelIntent, status: IntentStatus, final = 0n) => {
    i.key.reserved -= i.max;
    i.key.used += final;
    i.status = status;
    if (status === "settled") i.final = final;
  };
  const releaseExpired = (k: ModelKey) => {
    for (const i of m.intents) if (i.key === k && i.status === "authorized" && i.expiresAt <= m.now) finish(i, "expired");
  };
  const open = (k: ModelKey) => m.intents.filter((i) => i.key === k && i.status === "authorized").length;
  /** The guard of a reserve (`capped`) or a direct charge, on the model. */
  const keyGuard = (k: ModelKey, amount: bigint, capped = false) =>
    k.revokedAt !== undefined
      ? "key_revoked"
      : k.expiresAt <= m.now
        ? "key_expired"
        : capped && open(k) >= m.openLimit
          ? "too_many_open_intents"
          : k.limit - k.used - k.reserved < amount
            ? "budget_exhausted"
            : "ok";
  // Small picks name the most recent intents, which are the ones still likely to be authorized.
  const picked = (pick: number) => m.intents[m.intents.length - 1 - (pick % Math.max(1, m.intents.length))];
  /** The guard of settle/abort; expires the intent if overdue. */
  const finishGuard = (i: ModelIntent | undefined) => {
    if (!i) return "not_found";
    if (i.status !== "authorized") return "invalid_state";
    if (i.expiresAt <= m.now) {
      finish(i, "expired");
      return "expired";
    }
    return "ok";
  };

  switch (cmd.kind) {
    case "reserve": {
      const k = m.keys[cmd.key] as ModelKey;
      const amount = BigInt(cmd.amount);
      const idem = cmd.idem === undefined ? undefined : `idem-${cmd.idem}`;
      const input = makeIntent(k.id, amount, { intentId: `pi_${m.run}_${m.intents.length}_${uniq()}`, createdAt: m.now, expiresAt: m.now + cmd.ttl * 500, ...(idem === undefined ? {} : { idempotencyKey: idem }) });
      const r = await store.reserve({ intent: input, now: m.now, openLimit: m.openLimit });
      // With an idempotency key the key's overdue intents are expired first; without, only when the guard misses.
      if (idem !== undefined) releaseExpired(k);
      const replay = idem === undefined ? undefined : m.intents.find((i) => i.key === k && i.idem === idem);
      let expected = replay ? "idempotent_replay" : keyGuard(k, amount, true);
      if (expected !== "ok" && !replay) {
        releaseExpired(k);
        expected = keyGuard(k, amount, true);
      }
      expect(r.ok ? "ok" : r.reason).toBe(expected);
      if (replay) expect(!r.ok && r.reason === "idempotent_replay" && r.intent.intentId).toBe(replay.id);
      if (expected === "ok") {
        k.reserved += amount;
        m.intents.push({ id: input.intentId, key: k, max: amount, status: "authorized", expiresAt: input.expiresAt, idem });
      }
      return;
    }
    case "settle": {
      const i = picked(cmd.pick);
      const final = i ? (cmd.over ? i.max + 1n : (i.max * BigInt(cmd.percent)) / 100n) : 1n;
      const r = await store.settle({ intentId: i?.id ?? "pi_missing", finalAmount: final, result: { final: final.toString() }, now: m.now });
      let expected = finishGuard(i);
      if (expected === "ok" && i && final > i.max) expected = "exceeds_reservation";
      expect(r.ok ? "ok" : r.reason).toBe(expected);
      if (expected === "ok" && i) {
        finish(i, "settled", final);
        expect(r.ok).toBe(true);
        expect(await store.getIntent(i.id)).toMatchObject({ status: "settled", finalAmount: final, releasedAmount: i.max - final });
      }
      return;
    }
    case "abort": {
      const i = picked(cmd.pick);
      const r = await store.abort({ intentId: i?.id ?? "pi_missing", reason: "property", result: {}, now: m.now });
      const expected = finishGuard(i);
      expect(r.ok ? "ok" : r.reason).toBe(expected);
      if (expected === "ok" && i) finish(i, "aborted");
      return;
    }
    case "charge": {
      const k = m.keys[cmd.key] as ModelKey;
      const amount = BigInt(cmd.amount);
      const r = await store.chargeDirect({ keyId: k.id, amount, now: m.now });
      releaseExpired(k);
      const expected = keyGuard(k, amount);
      expect(r.ok ? "ok" : r.reason).toBe(expected);
      if (expected === "ok") k.used += amount;
      return;
    }
    case "advance":
      m.now += cmd.ms;
      return;
    case "sweep": {
      const due = m.intents
        .filter((i) => i.status === "authorized" && i.expiresAt <= m.now)
        .sort((a, b) => a.expiresAt - b.expiresAt || (a.id < b.id ? -1 : 1))
        .slice(0, cmd.limit);
      expect(await store.expireIntents(m.now, cmd.limit)).toBe(due.length);
      for (const i of due) finish(i, "expired");
      return;
    }
    case "read": {
      const i = picked(cmd.pick);
      if (!i) return;
      const read = await store.getIntent(i.id, m.now);
      if (i.status === "authorized" && i.expiresAt <= m.now) finish(i, "expired");
      expect(read?.status).toBe(i.status);
      return;
    }
    case "revoke": {
      const k = m.keys[cmd.key] as ModelKey;
      expect((await store.revokeKey(k.id, m.now))?.revokedAt).toBe(k.revokedAt ?? m.now);
      k.revokedAt ??= m.now;
      return;
    }
  }
}

/** Compares every key and intent of the run with the model, and checks invariants 1–3. */
async function check(store: Store, m: { keys: ModelKey[]; intents: ModelIntent[] }): Promise<void> {
  for (const k of m.keys) {
    const key = await store.getKeyById(k.id);
    if (!key) throw new Error(`key ${k.id} vanished`);
    expectBudgetInvariant(key);
    expect([key.budgetUsed, key.budgetReserved, key.revokedAt]).toEqual([k.used, k.reserved, k.revokedAt]);
  }
  for (const i of m.intents) {
    const intent = await store.getIntent(i.id);
    expect(intent?.status).toBe(i.status);
    if (intent?.status === "settled") expect([intent.finalAmount, intent.releasedAmount]).toEqual([i.final, i.max - (i.final ?? 0n)]);
    if (intent?.status === "aborted" || intent?.status === "expired") expect(intent.releasedAmount).toBe(i.max);
  }
}

export const propertyTests = {
  "property: random reserve/settle/abort/expire/revoke sequences keep the money invariants": async ({ store }) => {
    await fc.assert(
      fc.asyncProperty(keySetup, fc.array(command, { maxLength: 30, size: "max" }), fc.integer({ min: 1, max: 4 }), async (setup, commands, openLimit) => {
        // Runs share the store; a failed (shrinking) run may leave authorized intents that a
        // later run's sweep would otherwise count.
        await store.expireIntents(Number.MAX_SAFE_INTEGER, 1_000_000);
        const run = uniq();
        const keys: ModelKey[] = [];
        for (const s of setup) {
          const key = makeKey({ budgetLimit: BigInt(s.limit), expiresAt: T0 + s.life });
          await store.insertKey(key);
          keys.push({ id: key.keyId, limit: key.budgetLimit, used: 0n, reserved: 0n, revokedAt: undefined, expiresAt: key.expiresAt });
        }
        const m = { now: T0, keys, intents: [] as ModelIntent[], run, openLimit };
        for (const cmd of commands) {
          await step(store, cmd, m);
          await check(store, m);
        }
        // Invariant 4: once everything is overdue, a sweep releases every reservation.
        m.now = T0 + 1_000_000;
        await step(store, { kind: "sweep", limit: 1_000 }, m);
        await check(store, m);
        for (const k of m.keys) expect(k.reserved).toBe(0n);
      }),
      { numRuns: 100 },
    );
  },
} satisfies Record<string, StoreTest>;
