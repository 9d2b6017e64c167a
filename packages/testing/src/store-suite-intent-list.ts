/**
 * Conformance tests of `listIntents`: a wallet's intents newest first with a keyset cursor, the
 * key, chain and status filters, and the bounded scan (a filtered page examines at most `scan`
 * intents, so it may be short or empty and still carry a cursor, and paging on lists every match
 * exactly once, in order).
 */
import { expect } from "vitest";
import type { IntentListOptions, IntentRecord, Store } from "@tollgate/core";
import { addKey, mustGetKey, OTHER_OWNER, OWNER, reserveOk, T0, type StoreTest } from "./store-fixtures.js";

type Filter = Omit<IntentListOptions, "limit" | "cursor">;

/** Every page of `owner`'s intents with page size `limit` (at most 200 pages). */
async function intentPages(store: Store, limit: number, filter: Filter = {}): Promise<IntentRecord[][]> {
  const pages: IntentRecord[][] = [];
  let cursor: Awaited<ReturnType<Store["listIntents"]>>["nextCursor"] = null;
  do {
    const page = await store.listIntents(OWNER, { limit, ...filter, ...(cursor ? { cursor } : {}) });
    pages.push(page.intents);
    cursor = page.nextCursor;
  } while (cursor && pages.length < 200);
  return pages;
}

const newestFirst = (x: IntentRecord, y: IntentRecord) => y.createdAt - x.createdAt || (x.intentId < y.intentId ? 1 : -1);

/** `n` intents of the owner over two keys (every third on key b, chain 1), pairs sharing a createdAt. */
async function history(store: Store, n: number) {
  const a = await addKey(store, { budgetLimit: 1_000_000n });
  const b = await addKey(store, { budgetLimit: 1_000_000n, chainId: 1 });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await reserveOk(store, i % 3 === 0 ? b.keyId : a.keyId, BigInt(i + 1), { createdAt: T0 + Math.floor(i / 2) * 10 }));
  const all = await Promise.all(ids.map(async (id) => (await store.getIntent(id))!));
  return { a, b, ids, expected: [...all].sort(newestFirst) };
}

export const intentListTests = {
  "listIntents pages an owner's intents newest first, by key or chain, with a keyset cursor": async ({ store }) => {
    const stranger = await addKey(store, { owner: OTHER_OWNER, budgetLimit: 1000n });
    await reserveOk(store, stranger.keyId, 1n);
    const { b, ids, expected } = await history(store, 11);

    const pages = await intentPages(store, 4);
    expect(pages.map((p) => p.length)).toEqual([4, 4, 3]);
    expect(pages.flat()).toEqual(expected);
    expect((await intentPages(store, 11)).map((p) => p.length)).toEqual([11]);
    expect((await intentPages(store, 2, { keyId: b.keyId })).flat().map((i) => i.intentId)).toEqual(
      expected.filter((i) => i.keyId === b.keyId).map((i) => i.intentId),
    );
    expect((await intentPages(store, 3, { chainId: 1 })).flat().every((i) => i.chainId === 1 && i.keyId === b.keyId)).toBe(true);
    // Finished intents are listed with their final state; strangers see nothing of ours.
    await store.settle({ intentId: ids[10]!, finalAmount: 5n, result: { ok: 1 }, now: T0 + 100 });
    expect((await store.listIntents(OWNER, { limit: 1 })).intents[0]).toMatchObject({ intentId: ids[10], status: "settled", finalAmount: 5n });
    expect((await store.listIntents(OTHER_OWNER, { limit: 10 })).intents.map((i) => i.keyId)).toEqual([stranger.keyId]);
    expect(await store.listIntents("0x00000000000000000000000000000000000000cc", { limit: 10 })).toEqual({ intents: [], nextCursor: null });
  },

  "a filtered page examines at most `scan` intents: short and empty pages carry a cursor, and paging on lists every match once": async ({ store }) => {
    const { a, b, expected } = await history(store, 14);
    const ofB = expected.filter((i) => i.keyId === b.keyId);
    const pages = await intentPages(store, 2, { keyId: b.keyId, scan: 3 });
    expect(pages.flat()).toEqual(ofB);
    // 14 intents, 3 examined per page and the rest of the third's millisecond (pairs share one), or
    // fewer once 2 matches fill it: no page reads past that.
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(14 / 4));
    expect(pages.some((p) => p.length < 2)).toBe(true);
    expect(pages.every((p) => p.length <= 2)).toBe(true);

    // A page with no match still moves on: the first 3 intents hold none of a key that only has old ones.
    // Its cursor names the millisecond the scan ended in (the page examined all of it), never an
    // intent the filter hid: an intent id is the capability to settle or abort it.
    const late = await addKey(store, { budgetLimit: 100n });
    const first = await store.listIntents(OWNER, { limit: 5, keyId: late.keyId, scan: 3 });
    expect(first.intents).toEqual([]);
    expect(expected[3]!.createdAt).toBe(expected[2]!.createdAt);
    expect(first.nextCursor).toEqual({ createdAt: expected[2]!.createdAt, intentId: "" });
    const ofBAfter = expected.filter((i) => i.createdAt < expected[2]!.createdAt && i.keyId === b.keyId);
    expect((await store.listIntents(OWNER, { limit: 50, keyId: b.keyId, cursor: first.nextCursor! })).intents).toEqual(ofBAfter);
    expect((await intentPages(store, 5, { keyId: late.keyId, scan: 3 })).flat()).toEqual([]);

    // More matches than the page holds: the cursor is the last one listed, as without a filter.
    const full = await store.listIntents(OWNER, { limit: 2, keyId: a.keyId, scan: 10 });
    const ofA = expected.filter((i) => i.keyId === a.keyId);
    expect(full.intents).toEqual(ofA.slice(0, 2));
    expect(full.nextCursor).toEqual({ createdAt: ofA[1]!.createdAt, intentId: ofA[1]!.intentId });

    // Exactly `scan` intents left after the cursor: the page examines them all and ends the listing.
    const cursor = { createdAt: expected[10]!.createdAt, intentId: expected[10]!.intentId };
    const tail = await store.listIntents(OWNER, { limit: 5, keyId: b.keyId, scan: 3, cursor });
    expect(tail).toEqual({ intents: expected.slice(11).filter((i) => i.keyId === b.keyId), nextCursor: null });

    // Without a filter the scan does not shorten a page.
    expect((await store.listIntents(OWNER, { limit: 6, scan: 1 })).intents).toEqual(expected.slice(0, 6));
  },

  "status filters by the status listed at `now`: an overdue authorized intent is expired, and nothing is written": async ({ store }) => {
    const key = await addKey(store, { budgetLimit: 1000n });
    const settled = await reserveOk(store, key.keyId, 10n, { createdAt: T0 });
    const aborted = await reserveOk(store, key.keyId, 10n, { createdAt: T0 + 1 });
    const shortLived = await reserveOk(store, key.keyId, 10n, { createdAt: T0 + 2, expiresAt: T0 + 1_000 });
    const open = await reserveOk(store, key.keyId, 10n, { createdAt: T0 + 3, expiresAt: T0 + 60_000 });
    await store.settle({ intentId: settled, finalAmount: 4n, result: {}, now: T0 + 10 });
    await store.abort({ intentId: aborted, reason: "cancelled", result: {}, now: T0 + 10 });
    const ids = async (status: IntentListOptions["status"], now: number) =>
      (await store.listIntents(OWNER, { limit: 10, status, now })).intents.map((i) => i.intentId);

    expect(await ids("authorized", T0 + 500)).toEqual([open, shortLived]);
    expect(await ids("expired", T0 + 500)).toEqual([]);
    expect(await ids("settled", T0 + 500)).toEqual([settled]);
    expect(await ids("aborted", T0 + 500)).toEqual([aborted]);
    // Past its expiry the short-lived intent lists as expired, though it is still authorized in the store.
    expect(await ids("authorized", T0 + 1_000)).toEqual([open]);
    expect(await ids("expired", T0 + 1_000)).toEqual([shortLived]);
    expect((await store.getIntent(shortLived))!.status).toBe("authorized");
    expect((await mustGetKey(store, key.keyId)).budgetReserved).toBe(20n);
    // Once expired in the store it stays listed as expired.
    expect(await store.expireIntents(T0 + 1_000, 10)).toBe(1);
    expect(await ids("expired", T0 + 500)).toEqual([shortLived]);
    // With a scan the status filter pages like the others.
    expect((await intentPages(store, 1, { status: "authorized", now: T0 + 1_000, scan: 1 })).flat().map((i) => i.intentId)).toEqual([open]);
  },
} satisfies Record<string, StoreTest>;
