/** Conformance tests of {@link KeyStore}. */
import { expect } from "vitest";
import type { KeyRecord, KeyStore } from "@tollgate/core";
import { addKey, CHAIN, DAY, makeCharge, makeIntent, makeKey, mustGetKey, OTHER_OWNER, OWNER, reserveOk, seededRandom, shuffle, T0, type StoreTest } from "./store-fixtures.js";

export const keyTests = {
  "insertKey then getKeyById and getKeyByTokenHash return it": async ({ store }) => {
    const key = makeKey({ name: "my key", budgetLimit: 5000n });
    expect(await store.insertKey(key)).toEqual({ superseded: [] });
    expect(await store.getKeyById(key.keyId)).toEqual(key);
    expect(await store.getKeyByTokenHash(key.tokenHash)).toEqual(key);
    expect(await store.getKeyById("key_unknown")).toBeNull();
    expect(await store.getKeyByTokenHash("f".repeat(64))).toBeNull();
    // Returned records are copies.
    const read = await mustGetKey(store, key.keyId);
    read.budgetUsed = 999n;
    read.name = "changed";
    expect(await store.getKeyById(key.keyId)).toEqual(key);
  },

  "a key's rateLimit round-trips through every read and every operation that returns the whole key; absent stays absent": async ({ store }) => {
    const limited = await addKey(store, { rateLimit: { requestsPerMinute: 120 }, budgetLimit: 100n });
    const plain = await addKey(store, { budgetLimit: 100n });
    for (const key of [limited, plain]) {
      const read = [await store.getKeyById(key.keyId), await store.getKeyByTokenHash(key.tokenHash), (await store.listKeys(OWNER, { limit: 100 })).keys.find((k) => k.keyId === key.keyId)];
      for (const r of read) expect(r).toEqual(key);
      const expected = key.rateLimit ? { rateLimit: { requestsPerMinute: 120 } } : {};
      // The ledger steps return only the budget (KeyBudget); they keep the rest of the key as it was.
      const reserved = await store.reserve({ intent: makeIntent(key.keyId, 10n), now: T0 });
      expect(await store.getKeyById(key.keyId)).toMatchObject(expected);
      const id = reserved.ok ? reserved.intent.intentId : "";
      const settled = await store.settle({ intentId: id, finalAmount: 5n, result: {}, now: T0 + 1, charge: makeCharge(key, 5n, { intentId: id }) });
      expect(settled.ok).toBe(true);
      const aborted = await store.abort({ intentId: await reserveOk(store, key.keyId, 1n), reason: "x", result: {}, now: T0 + 2 });
      expect(aborted.ok).toBe(true);
      expect(await store.getKeyById(key.keyId)).toMatchObject({ ...expected, budgetUsed: 5n, budgetReserved: 0n });
      const charged = await store.chargeDirect({ keyId: key.keyId, amount: 1n, now: T0 + 3 });
      expect(charged.ok && charged.key).toMatchObject(expected);
      const refused = await store.chargeDirect({ keyId: key.keyId, amount: 1000n, now: T0 + 3 });
      expect(!refused.ok && "key" in refused && refused.key).toMatchObject(expected);
      const revoked = await store.revokeKey(key.keyId, T0 + 4);
      expect(revoked).toEqual({ ...key, budgetUsed: 6n, lastUsedAt: T0 + 3, revokedAt: T0 + 4 });
      if (!key.rateLimit) for (const k of [revoked, charged.ok && charged.key]) expect(k && "rateLimit" in k).toBe(false);
    }
    // Returned records are copies, the nested rate limit too.
    const read = await mustGetKey(store, limited.keyId);
    read.rateLimit!.requestsPerMinute = 1;
    expect((await mustGetKey(store, limited.keyId)).rateLimit).toEqual({ requestsPerMinute: 120 });
    const input = makeKey({ rateLimit: { requestsPerMinute: 60 } });
    await store.insertKey(input);
    input.rateLimit!.requestsPerMinute = 2;
    expect((await mustGetKey(store, input.keyId)).rateLimit).toEqual({ requestsPerMinute: 60 });
  },

  "insertKey rejects a duplicate keyId or tokenHash": async ({ store }) => {
    const key = await addKey(store);
    await expect(store.insertKey(makeKey({ keyId: key.keyId }))).rejects.toThrow();
    await expect(store.insertKey(makeKey({ tokenHash: key.tokenHash }))).rejects.toThrow();
    expect(await store.getKeyById(key.keyId)).toEqual(key);
  },

  "insertKey refuses a budget above maxAmount with invalid_request": async ({ store }) => {
    await expect(store.insertKey(makeKey({ budgetLimit: store.maxAmount + 1n }))).rejects.toMatchObject({ code: "invalid_request" });
    const key = await addKey(store, { budgetLimit: store.maxAmount });
    expect((await mustGetKey(store, key.keyId)).budgetLimit).toBe(store.maxAmount);
  },

  "listKeys pages newest first with a keyset cursor, no duplicates and no gaps": async ({ store }) => {
    const random = seededRandom(7);
    // Groups of three share a createdAt, so the keyId tie-break is exercised.
    const mine = Array.from({ length: 23 }, (_, i) => makeKey({ createdAt: T0 + Math.floor(i / 3) * 1000, chainId: i % 4 === 0 ? 1 : CHAIN }));
    const others = Array.from({ length: 3 }, () => makeKey({ owner: OTHER_OWNER }));
    for (const key of shuffle([...mine, ...others], random)) await store.insertKey(key);
    const expected = [...mine].sort((a, b) => b.createdAt - a.createdAt || (a.keyId < b.keyId ? 1 : -1)).map((k) => k.keyId);

    const pages = await collectPages(store, OWNER, 5);
    expect(pages.map((p) => p.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.flat().map((k) => k.keyId)).toEqual(expected);

    // A total that is a multiple of the page size ends with an empty next cursor, not an empty page.
    const exact = await collectPages(store, OWNER, 23);
    expect(exact.map((p) => p.length)).toEqual([23]);

    const onChain1 = await collectPages(store, OWNER, 2, 1);
    expect(onChain1.flat().map((k) => k.keyId)).toEqual(expected.filter((id) => mine.find((k) => k.keyId === id)?.chainId === 1));
    expect((await store.listKeys("0x00000000000000000000000000000000000000cc", { limit: 10 })).keys).toEqual([]);
  },

  "revokeKey sets revokedAt once; repeating returns the record unchanged": async ({ store }) => {
    const key = await addKey(store);
    const first = await store.revokeKey(key.keyId, T0 + 10);
    expect(first).toEqual({ ...key, revokedAt: T0 + 10 });
    expect(await store.revokeKey(key.keyId, T0 + 20)).toEqual(first);
    expect(await store.getKeyById(key.keyId)).toEqual(first);
    expect(await store.revokeKey("key_unknown", T0)).toBeNull();
  },

  "a session key supersedes the owner's other active session keys on the same chain only": async ({ store }) => {
    const expired = await addKey(store, { purpose: "session", createdAt: T0 - DAY, expiresAt: T0 - 1 });
    const old = await addKey(store, { purpose: "session" });
    const api = await addKey(store, { purpose: "api" });
    const otherChain = await addKey(store, { purpose: "session", chainId: 1 });
    const otherOwner = await addKey(store, { purpose: "session", owner: OTHER_OWNER });
    const apiNew = makeKey({ purpose: "api", createdAt: T0 + 100 });
    expect(await store.insertKey(apiNew, { supersedeSessionAt: T0 + 100 })).toEqual({ superseded: [] });

    const fresh = makeKey({ purpose: "session", createdAt: T0 + 200 });
    expect(await store.insertKey(fresh, { supersedeSessionAt: T0 + 200 })).toEqual({ superseded: [old.keyId] });
    expect((await mustGetKey(store, old.keyId)).revokedAt).toBe(T0 + 200);
    for (const untouched of [expired, api, otherChain, otherOwner, apiNew, fresh]) {
      expect((await mustGetKey(store, untouched.keyId)).revokedAt, untouched.keyId).toBeUndefined();
    }
    // Without supersedeSessionAt the new key's createdAt is the revocation time.
    const next = makeKey({ purpose: "session", createdAt: T0 + 300 });
    expect(await store.insertKey(next)).toEqual({ superseded: [fresh.keyId] });
    expect((await mustGetKey(store, fresh.keyId)).revokedAt).toBe(T0 + 300);
  },

  "concurrent session inserts leave exactly one active session key": async ({ store }) => {
    const keys = Array.from({ length: 10 }, (_, i) => makeKey({ purpose: "session", createdAt: T0 + i }));
    const results = await Promise.all(keys.map((k) => store.insertKey(k, { supersedeSessionAt: T0 + DAY / 2 })));
    const read = await Promise.all(keys.map((k) => mustGetKey(store, k.keyId)));
    expect(read.filter((k) => k.revokedAt === undefined)).toHaveLength(1);
    const superseded = results.flatMap((r) => r.superseded);
    expect(new Set(superseded).size).toBe(9);
    expect(superseded).toHaveLength(9);
  },
} satisfies Record<string, StoreTest>;

async function collectPages(store: KeyStore, owner: string, limit: number, chainId?: number): Promise<KeyRecord[][]> {
  const pages: KeyRecord[][] = [];
  let cursor: KeyRecord | { createdAt: number; keyId: string } | undefined;
  for (;;) {
    const page = await store.listKeys(owner, { limit, ...(cursor ? { cursor: { createdAt: cursor.createdAt, keyId: cursor.keyId } } : {}), ...(chainId === undefined ? {} : { chainId }) });
    if (page.keys.length > 0) pages.push(page.keys);
    if (!page.nextCursor) return pages;
    expect(page.keys).toHaveLength(limit);
    cursor = page.nextCursor;
    if (pages.length > 1000) throw new Error("listKeys does not terminate");
  }
}
