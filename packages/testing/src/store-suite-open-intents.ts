/**
 * Conformance: a reserve's `openLimit`, the cap on a key's authorized intents. The store keeps the
 * count in the same steps that move intents in and out of `authorized`; every way out must free a
 * slot (settle, abort, expiry on a miss, on read, by the sweeper, by a key's release, and a settle
 * that came too late), and the guard must be exact under concurrency.
 */
import { expect } from "vitest";
import type { ReserveResult, Store } from "@tollgate/core";
import { addKey, makeIntent, mustGetKey, T0, type StoreTest } from "./store-fixtures.js";

const SHORT = T0 + 1_000;
const LATE = T0 + 2_000;

const reserveAt = (
  store: Store,
  keyId: string,
  openLimit: number,
  now = T0,
  expiresAt = T0 + 15 * 60_000,
  extra: Partial<Parameters<typeof makeIntent>[2]> = {},
) => store.reserve({ intent: makeIntent(keyId, 5n, { expiresAt, ...extra }), now, openLimit });

/** The id of a reserve that must succeed. */
function won(r: ReserveResult): string {
  if (!r.ok) throw new Error(`reserve refused: ${r.reason}`);
  return r.intent.intentId;
}

/** `n` open intents of a fresh key, each expiring at `expiresAt`. */
async function keyWithOpen(store: Store, n: number, openLimit: number, expiresAt?: number) {
  const key = await addKey(store, { budgetLimit: 1_000_000n });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(won(await reserveAt(store, key.keyId, openLimit, T0, expiresAt)));
  return { key, ids };
}

/** The key is at its cap: one more reserve is refused as full. */
async function expectFull(store: Store, keyId: string, openLimit: number, now = T0) {
  const r = await reserveAt(store, keyId, openLimit, now, now + 60_000);
  expect(r.ok ? "reserved" : r.reason).toBe("too_many_open_intents");
}

export const openIntentTests = {
  "openLimit: the reserve past the cap is refused with too_many_open_intents and changes nothing; without a cap any number fit": async ({ store }) => {
    const { key } = await keyWithOpen(store, 3, 3);
    const before = await mustGetKey(store, key.keyId);
    const r = await reserveAt(store, key.keyId, 3);
    expect(r.ok).toBe(false);
    if (!r.ok && r.reason !== "key_not_found") {
      expect(r.reason).toBe("too_many_open_intents");
      expect(r.key.keyId).toBe(key.keyId);
    }
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetReserved: before.budgetReserved, budgetUsed: 0n, lastUsedAt: before.lastUsedAt });
    // A larger cap, or none, lets the same key go on.
    won(await reserveAt(store, key.keyId, 4));
    for (let i = 0; i < 5; i++) won(await store.reserve({ intent: makeIntent(key.keyId, 5n), now: T0 }));
    expect((await mustGetKey(store, key.keyId)).budgetReserved).toBe(45n);
  },

  "openLimit: a settle or an abort frees its slot": async ({ store }) => {
    const { key, ids } = await keyWithOpen(store, 2, 2);
    await expectFull(store, key.keyId, 2);
    expect((await store.settle({ intentId: ids[0]!, finalAmount: 3n, result: {}, now: T0 + 1 })).ok).toBe(true);
    won(await reserveAt(store, key.keyId, 2));
    await expectFull(store, key.keyId, 2);
    expect((await store.abort({ intentId: ids[1]!, reason: "test", result: {}, now: T0 + 1 })).ok).toBe(true);
    won(await reserveAt(store, key.keyId, 2));
    await expectFull(store, key.keyId, 2);
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetReserved: 10n, budgetUsed: 3n });
  },

  "openLimit: overdue intents count until expired, and a reserve that meets the cap expires them first": async ({ store }) => {
    const { key } = await keyWithOpen(store, 2, 2, SHORT);
    await expectFull(store, key.keyId, 2, T0 + 1);
    const r = await reserveAt(store, key.keyId, 2, LATE, LATE + 60_000);
    won(r);
    expect(await mustGetKey(store, key.keyId)).toMatchObject({ budgetReserved: 5n });
    won(await reserveAt(store, key.keyId, 2, LATE, LATE + 60_000));
    await expectFull(store, key.keyId, 2, LATE);
  },

  "openLimit: expiry by the sweeper, by a key's release, on read and by a late settle each free their slots": async ({ store }) => {
    // After each kind of expiry the key must take `limit` new intents at once (none of them
    // expiring anything: the old ones are no longer overdue-and-authorized), then refuse one more.
    const limit = 2;
    const refill = async (keyId: string) => {
      for (let i = 0; i < limit; i++) won(await reserveAt(store, keyId, limit, LATE, LATE + 60_000));
      await expectFull(store, keyId, limit, LATE);
    };
    const sweep = await keyWithOpen(store, limit, limit, SHORT);
    expect(await store.expireIntents(LATE, 1_000)).toBe(limit);
    await refill(sweep.key.keyId);

    const released = await keyWithOpen(store, limit, limit, SHORT);
    expect(await store.releaseOverdueIntents([released.key.keyId], LATE)).toBe(limit);
    await refill(released.key.keyId);

    const read = await keyWithOpen(store, limit, limit, SHORT);
    for (const id of read.ids) expect((await store.getIntent(id, LATE))?.status).toBe("expired");
    await refill(read.key.keyId);

    const late = await keyWithOpen(store, limit, limit, SHORT);
    expect(await store.settle({ intentId: late.ids[0]!, finalAmount: 1n, result: {}, now: LATE })).toMatchObject({ ok: false, reason: "expired" });
    expect(await store.abort({ intentId: late.ids[1]!, reason: "late", result: {}, now: LATE })).toMatchObject({ ok: false, reason: "expired" });
    await refill(late.key.keyId);
    for (const { key } of [sweep, released, read, late]) expect((await mustGetKey(store, key.keyId)).budgetReserved).toBe(10n);
  },

  "openLimit: a scoped reserve holds a slot too, and an idempotent replay at the cap still replays": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 1_000n });
    const scoped = won(await reserveAt(store, key.keyId, 2, T0, undefined, { budgetScope: { scope: "openai/*", limit: 100n } }));
    const idem = won(await reserveAt(store, key.keyId, 2, T0, undefined, { idempotencyKey: "once" }));
    await expectFull(store, key.keyId, 2);
    const replay = await reserveAt(store, key.keyId, 2, T0, undefined, { idempotencyKey: "once" });
    expect(replay).toMatchObject({ ok: false, reason: "idempotent_replay", intent: { intentId: idem } });
    expect((await store.settle({ intentId: scoped, finalAmount: 5n, result: {}, now: T0 + 1 })).ok).toBe(true);
    won(await reserveAt(store, key.keyId, 2, T0 + 1, undefined, { budgetScope: { scope: "openai/*", limit: 100n } }));
    await expectFull(store, key.keyId, 2, T0 + 1);
  },

  "openLimit: a revoked or expired key is refused as such, not as full; direct charges ignore the cap": async ({ store }) => {
    const { key } = await keyWithOpen(store, 1, 1);
    expect((await store.chargeDirect({ keyId: key.keyId, amount: 7n, now: T0 })).ok).toBe(true);
    const expired = await reserveAt(store, key.keyId, 1, key.expiresAt, key.expiresAt + 60_000);
    expect(expired.ok ? "reserved" : expired.reason).toBe("key_expired");
    await store.revokeKey(key.keyId, T0 + 1);
    const revoked = await reserveAt(store, key.keyId, 1, T0 + 2);
    expect(revoked.ok ? "reserved" : revoked.reason).toBe("key_revoked");
  },

  "openLimit: 40 concurrent reserves under a cap of 10 with room for all: exactly 10 win": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 1_000_000n });
    const results = await Promise.all(Array.from({ length: 40 }, () => reserveAt(store, key.keyId, 10)));
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    expect(results.filter((r) => !r.ok && r.reason === "too_many_open_intents")).toHaveLength(30);
    expect((await mustGetKey(store, key.keyId)).budgetReserved).toBe(50n);
    const owner = (await mustGetKey(store, key.keyId)).owner;
    const open = (await store.listIntents(owner, { limit: 100 })).intents.filter((i) => i.status === "authorized");
    expect(open).toHaveLength(10);
  },
} satisfies Record<string, StoreTest>;
