/**
 * Conformance: `insertKey`'s `liveLimit`, the cap on a wallet's live keys (neither revoked nor
 * expired), and `findActiveSessionKey`, which reads the same live keys. A refused insert writes nothing (not even the session keys it would have superseded);
 * revoked and expired keys free their place; a session key that supersedes one takes its place;
 * and the cap is exact under concurrency. `listHeldKeys` reads the same live keys of one chain, and
 * the others that still hold a reservation.
 */
import { expect } from "vitest";
import { heldKeysSince, type Store } from "@tollgate/core";
import { addKey, DAY, makeKey, OTHER_OWNER, OWNER, T0, type StoreTest } from "./store-fixtures.js";

/** The error an insert past the cap must reject with. */
const refused = (limit: number) => ({ code: "too_many_keys", details: { limit } });

/** The owner's keys (ids) as listed. */
async function keyIds(store: Store, owner = OWNER): Promise<string[]> {
  return (await store.listKeys(owner, { limit: 100 })).keys.map((k) => k.keyId).sort();
}

export const liveKeyTests = {
  "liveLimit: the insert past the wallet's live keys is refused with too_many_keys and writes nothing; other wallets are not counted": async ({ store }) => {
    const kept = [await addKey(store), await addKey(store)].map((k) => k.keyId);
    await addKey(store, { owner: OTHER_OWNER });
    const third = makeKey();
    await expect(store.insertKey(third, { liveLimit: 2 })).rejects.toMatchObject(refused(2));
    expect(await store.getKeyById(third.keyId)).toBeNull();
    expect(await store.getKeyByTokenHash(third.tokenHash)).toBeNull();
    expect(await keyIds(store)).toEqual(kept.sort());
    // The same insert fits under a higher cap, and another wallet's key under the same one.
    expect(await store.insertKey(makeKey({ owner: OTHER_OWNER }), { liveLimit: 2 })).toEqual({ superseded: [] });
    expect(await store.insertKey(third, { liveLimit: 3 })).toEqual({ superseded: [] });
  },

  "liveLimit: revoked and expired keys free their place, judged at supersedeSessionAt": async ({ store }) => {
    const a = await addKey(store);
    await addKey(store, { expiresAt: T0 + 1_000 });
    await expect(store.insertKey(makeKey(), { liveLimit: 2, supersedeSessionAt: T0 + 999 })).rejects.toMatchObject(refused(2));
    // At T0 + 1000 the second key has expired.
    expect(await store.insertKey(makeKey(), { liveLimit: 2, supersedeSessionAt: T0 + 1_000 })).toEqual({ superseded: [] });
    await expect(store.insertKey(makeKey(), { liveLimit: 2, supersedeSessionAt: T0 + 1_000 })).rejects.toMatchObject(refused(2));
    await store.revokeKey(a.keyId, T0 + 1_000);
    expect(await store.insertKey(makeKey(), { liveLimit: 2, supersedeSessionAt: T0 + 1_000 })).toEqual({ superseded: [] });
    // A key that is not live itself adds nothing, whatever the count.
    expect(await store.insertKey(makeKey({ expiresAt: T0 + 500 }), { liveLimit: 2, supersedeSessionAt: T0 + 1_000 })).toEqual({ superseded: [] });
    expect(await store.insertKey(makeKey({ revokedAt: T0 + 10 }), { liveLimit: 1, supersedeSessionAt: T0 + 1_000 })).toEqual({ superseded: [] });
  },

  "liveLimit: a session key takes the place of the one it supersedes; a refused one supersedes nothing": async ({ store }) => {
    const session = await addKey(store, { purpose: "session" });
    await addKey(store);
    const next = makeKey({ purpose: "session" });
    expect(await store.insertKey(next, { liveLimit: 2, supersedeSessionAt: T0 + 10 })).toEqual({ superseded: [session.keyId] });
    // A session key on another chain supersedes nothing and would be the third live key.
    const elsewhere = makeKey({ purpose: "session", chainId: 1 });
    await expect(store.insertKey(elsewhere, { liveLimit: 2, supersedeSessionAt: T0 + 20 })).rejects.toMatchObject(refused(2));
    expect((await store.getKeyById(next.keyId))!.revokedAt).toBeUndefined();
    // Under a cap already passed (lowered by the operator), even a replacing session key is refused, and the current one stays.
    await expect(store.insertKey(makeKey({ purpose: "session" }), { liveLimit: 1, supersedeSessionAt: T0 + 30 })).rejects.toMatchObject(refused(1));
    expect((await store.getKeyById(next.keyId))!.revokedAt).toBeUndefined();
  },

  "liveLimit: of 24 concurrent inserts for one wallet with room for 5, exactly 5 succeed": async ({ store }) => {
    await addKey(store);
    const keys = Array.from({ length: 24 }, (_, i) => makeKey({ purpose: i % 4 === 0 ? "session" : "api", chainId: 100 + i, expiresAt: T0 + DAY }));
    const results = await Promise.allSettled(keys.map((k) => store.insertKey(k, { liveLimit: 6, supersedeSessionAt: T0 })));
    const won = keys.filter((_, i) => results[i]!.status === "fulfilled").map((k) => k.keyId);
    expect(won).toHaveLength(5);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject(refused(6));
    const listed = await store.listKeys(OWNER, { limit: 100 });
    expect(listed.keys).toHaveLength(6);
    expect(listed.keys.every((k) => k.revokedAt === undefined)).toBe(true);
    for (const id of won) expect(listed.keys.map((k) => k.keyId)).toContain(id);
  },

  "findActiveSessionKey: the chain's session key that is neither revoked nor expired, or null": async ({ store }) => {
    expect(await store.findActiveSessionKey(OWNER, 8453, T0)).toBeNull();
    await addKey(store, { chainId: 8453 }); // an api key
    await addKey(store, { purpose: "session", chainId: 8453, revokedAt: T0 });
    await addKey(store, { purpose: "session", chainId: 8453, expiresAt: T0 + 10 });
    await addKey(store, { purpose: "session", chainId: 1 });
    await addKey(store, { purpose: "session", chainId: 8453, owner: OTHER_OWNER });
    const older = await addKey(store, { purpose: "session", chainId: 8453, createdAt: T0 - 5 });
    expect((await store.findActiveSessionKey(OWNER, 8453, T0))?.keyId).toBe(older.keyId);
    // The next session key supersedes it (revoked), and is found until it expires.
    const newer = await addKey(store, { purpose: "session", chainId: 8453, createdAt: T0 - 1, expiresAt: T0 + 100 });
    expect((await store.findActiveSessionKey(OWNER, 8453, T0))?.keyId).toBe(newer.keyId);
    expect(await store.findActiveSessionKey(OWNER, 8453, T0 + 100)).toBeNull();
    expect(await store.findActiveSessionKey(OWNER, 10, T0)).toBeNull();
    expect(await store.findActiveSessionKey(OWNER, 8453, T0)).toEqual(await store.getKeyById(newer.keyId));
  },

  "listHeldKeys: the chain's live keys, and the revoked or expired ones that still hold a reservation, as stored": async ({ store }) => {
    expect(await store.listHeldKeys(OWNER, 8453, T0)).toEqual([]);
    const api = await addKey(store, { chainId: 8453, budgetLimit: 700n, budgetUsed: 5n, budgetPeriod: "daily", periodStart: T0 - 1_000 });
    const session = await addKey(store, { purpose: "session", chainId: 8453, expiresAt: T0 + 10 });
    const revokedHolding = await addKey(store, { chainId: 8453, revokedAt: T0 - 5, budgetReserved: 30n });
    const expiredHolding = await addKey(store, { chainId: 8453, expiresAt: T0, budgetReserved: 40n });
    await addKey(store, { chainId: 8453, revokedAt: T0 });
    await addKey(store, { chainId: 8453, expiresAt: T0 });
    // Revoked before any intent of it could still be open: never read.
    await addKey(store, { chainId: 8453, revokedAt: heldKeysSince(T0) - 1, budgetReserved: 50n });
    await addKey(store, { chainId: 1, budgetReserved: 60n });
    await addKey(store, { chainId: 8453, owner: OTHER_OWNER, revokedAt: T0, budgetReserved: 70n });
    const held = await store.listHeldKeys(OWNER, 8453, T0);
    expect(held.map((k) => k.keyId).sort()).toEqual([api.keyId, session.keyId, revokedHolding.keyId, expiredHolding.keyId].sort());
    for (const k of held) expect(k).toEqual(await store.getKeyById(k.keyId));
    // Later, the session key expired without a reservation: no longer held.
    expect((await store.listHeldKeys(OWNER, 8453, T0 + 10)).map((k) => k.keyId).sort()).toEqual([api.keyId, revokedHolding.keyId, expiredHolding.keyId].sort());
  },
} satisfies Record<string, StoreTest>;
