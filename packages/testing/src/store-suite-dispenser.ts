/** Conformance tests of {@link DispenserStore}: one claim per (address, chain), races included. */
import { expect } from "vitest";
import type { Store } from "@tollgate/core";
import { CHAIN, OTHER_OWNER, OWNER, T0, type StoreTest } from "./store-fixtures.js";

const AMOUNT = 1_000_000n;
const TX = `0x${"ab".repeat(32)}`;
const claim = (address = OWNER, chainId = CHAIN, createdAt = T0) => ({ address, chainId, amount: AMOUNT, createdAt });
const addressN = (i: number) => `0x${(0x1000 + i).toString(16).padStart(40, "0")}`;

async function begin(store: Store, address = OWNER, chainId = CHAIN, maxClaims?: number) {
  return store.beginDispenserClaim({ claim: claim(address, chainId), ...(maxClaims === undefined ? {} : { maxClaims }) });
}

export const dispenserTests = {
  "beginDispenserClaim inserts one pending claim per (address, chain)": async ({ store }) => {
    const first = await begin(store);
    expect(first).toEqual({ ok: true, claim: { address: OWNER, chainId: CHAIN, status: "pending", amount: AMOUNT, createdAt: T0 } });
    const again = await store.beginDispenserClaim({ claim: claim(OWNER, CHAIN, T0 + 5) });
    expect(again).toEqual({ ok: false, reason: "already_claimed", claim: { address: OWNER, chainId: CHAIN, status: "pending", amount: AMOUNT, createdAt: T0 } });
    // Another chain or another address is another claim.
    expect((await begin(store, OWNER, CHAIN + 1)).ok).toBe(true);
    expect((await begin(store, OTHER_OWNER)).ok).toBe(true);
    expect(await store.countDispenserClaims(CHAIN)).toBe(2);
    expect(await store.countDispenserClaims(CHAIN + 1)).toBe(1);
    expect(await store.countDispenserClaims(1)).toBe(0);
  },

  "completeDispenserClaim marks a pending claim claimed, once": async ({ store }) => {
    expect(await store.completeDispenserClaim({ createdAt: T0, address: OWNER, chainId: CHAIN, transferTx: null, txHash: TX, now: T0 })).toBeNull();
    await begin(store);
    const done = await store.completeDispenserClaim({ createdAt: T0, address: OWNER, chainId: CHAIN, transferTx: null, txHash: TX, now: T0 + 10 });
    expect(done).toEqual({ address: OWNER, chainId: CHAIN, status: "claimed", amount: AMOUNT, createdAt: T0, claimedAt: T0 + 10, txHash: TX });
    expect(await store.completeDispenserClaim({ createdAt: T0, address: OWNER, chainId: CHAIN, transferTx: null, txHash: "0xother", now: T0 + 20 })).toBeNull();
    const again = await begin(store);
    expect(again).toEqual({ ok: false, reason: "already_claimed", claim: done });
  },

  "recordDispenserTransfer marks a pending claim whose transfer is the one expected; only that transfer completes or releases it": async ({ store }) => {
    const at = { address: OWNER, chainId: CHAIN };
    expect(await store.recordDispenserTransfer({ createdAt: T0, ...at, transferTx: "0x01", previous: null })).toBe(false);
    await begin(store);
    expect(await store.recordDispenserTransfer({ createdAt: T0, ...at, transferTx: "0x01", previous: "0x00" })).toBe(false);
    expect(await store.recordDispenserTransfer({ createdAt: T0, ...at, transferTx: "0x01", previous: null })).toBe(true);
    // Another request's view (none recorded, or an older transfer) no longer holds the claim.
    expect(await store.recordDispenserTransfer({ createdAt: T0, ...at, transferTx: "0x09", previous: null })).toBe(false);
    const pending = { address: OWNER, chainId: CHAIN, status: "pending", amount: AMOUNT, createdAt: T0, transferTx: "0x01" };
    expect(await begin(store)).toEqual({ ok: false, reason: "already_claimed", claim: pending });
    expect(await store.listDispenserClaims(OWNER)).toEqual([pending]);
    expect(await store.releaseDispenserClaim({ createdAt: T0, ...at, transferTx: null })).toBe(false);
    expect(await store.completeDispenserClaim({ createdAt: T0, ...at, transferTx: "0x09", txHash: TX, now: T0 + 10 })).toBeNull();
    expect(await store.recordDispenserTransfer({ createdAt: T0, ...at, transferTx: "0x02", previous: "0x01" })).toBe(true);
    expect(await store.completeDispenserClaim({ createdAt: T0, ...at, transferTx: "0x01", txHash: TX, now: T0 + 10 })).toBeNull();
    const done = await store.completeDispenserClaim({ createdAt: T0, ...at, transferTx: "0x02", txHash: TX, now: T0 + 10 });
    expect(done).toEqual({ address: OWNER, chainId: CHAIN, status: "claimed", amount: AMOUNT, createdAt: T0, claimedAt: T0 + 10, txHash: TX });
    expect(await store.recordDispenserTransfer({ createdAt: T0, ...at, transferTx: "0x03", previous: null })).toBe(false);
    expect(await store.listDispenserClaims(OWNER)).toEqual([done]);
    // A release takes only the claim of the transfer it names.
    await begin(store, OTHER_OWNER);
    await store.recordDispenserTransfer({ createdAt: T0, address: OTHER_OWNER, chainId: CHAIN, transferTx: "0x04", previous: null });
    expect(await store.releaseDispenserClaim({ createdAt: T0, address: OTHER_OWNER, chainId: CHAIN, transferTx: "0x05" })).toBe(false);
    expect(await store.releaseDispenserClaim({ createdAt: T0, address: OTHER_OWNER, chainId: CHAIN, transferTx: "0x04" })).toBe(true);
    expect(await store.listDispenserClaims(OTHER_OWNER)).toEqual([]);
  },

  "a claim of the pair taken again after a release is another claim: a request holding the first cannot record, complete or release it": async ({ store }) => {
    const at = { address: OWNER, chainId: CHAIN };
    await begin(store);
    expect(await store.releaseDispenserClaim({ ...at, createdAt: T0, transferTx: null })).toBe(true);
    expect((await store.beginDispenserClaim({ claim: claim(OWNER, CHAIN, T0 + 180_000) })).ok).toBe(true);
    // The first claim's request (taken at T0, nothing recorded) comes back late.
    expect(await store.recordDispenserTransfer({ ...at, createdAt: T0, transferTx: "0x01", previous: null })).toBe(false);
    expect(await store.completeDispenserClaim({ ...at, createdAt: T0, transferTx: null, txHash: TX, now: T0 + 1 })).toBeNull();
    expect(await store.releaseDispenserClaim({ ...at, createdAt: T0, transferTx: null })).toBe(false);
    const second = { address: OWNER, chainId: CHAIN, status: "pending", amount: AMOUNT, createdAt: T0 + 180_000 };
    expect(await store.listDispenserClaims(OWNER)).toEqual([second]);
    expect(await store.recordDispenserTransfer({ ...at, createdAt: T0 + 180_000, transferTx: "0x02", previous: null })).toBe(true);
  },

  "releaseDispenserClaim deletes only a pending claim, so the address can claim again": async ({ store }) => {
    expect(await store.releaseDispenserClaim({ createdAt: T0, address: OWNER, chainId: CHAIN, transferTx: null })).toBe(false);
    await begin(store);
    expect(await store.releaseDispenserClaim({ createdAt: T0, address: OWNER, chainId: CHAIN, transferTx: null })).toBe(true);
    expect(await store.countDispenserClaims(CHAIN)).toBe(0);
    expect(await store.listDispenserClaims(OWNER)).toEqual([]);
    expect((await begin(store)).ok).toBe(true);
    await store.completeDispenserClaim({ createdAt: T0, address: OWNER, chainId: CHAIN, transferTx: null, txHash: TX, now: T0 });
    // A completed claim is final.
    expect(await store.releaseDispenserClaim({ createdAt: T0, address: OWNER, chainId: CHAIN, transferTx: null })).toBe(false);
    expect(await store.countDispenserClaims(CHAIN)).toBe(1);
    expect((await begin(store)).ok).toBe(false);
  },

  "listDispenserClaims returns the address's claims by chain": async ({ store }) => {
    await begin(store, OWNER, 10);
    await begin(store, OWNER, 2);
    await begin(store, OTHER_OWNER, 2);
    await store.completeDispenserClaim({ createdAt: T0, address: OWNER, chainId: 10, transferTx: null, txHash: TX, now: T0 + 1 });
    const list = await store.listDispenserClaims(OWNER);
    expect(list.map((c) => [c.chainId, c.status, c.txHash])).toEqual([
      [2, "pending", undefined],
      [10, "claimed", TX],
    ]);
    // Records are copies.
    list[0]!.status = "claimed";
    expect((await store.listDispenserClaims(OWNER))[0]!.status).toBe("pending");
  },

  "20 concurrent claims of one address: exactly one wins": async ({ store }) => {
    const results = await Promise.all(Array.from({ length: 20 }, () => begin(store)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.reason === "already_claimed")).toHaveLength(19);
    expect(await store.countDispenserClaims(CHAIN)).toBe(1);
  },

  "maxClaims caps a chain's claims under concurrency; pending claims count, released ones free a slot": async ({ store }) => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => begin(store, addressN(i), CHAIN, 3)));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    for (const r of results.filter((r) => !r.ok)) expect(r).toEqual({ ok: false, reason: "limit_reached", count: 3 });
    expect(await store.countDispenserClaims(CHAIN)).toBe(3);
    // Other chains are unaffected.
    expect((await begin(store, addressN(0), CHAIN + 1, 3)).ok).toBe(true);
    const winner = results.find((r) => r.ok);
    if (!winner?.ok) throw new Error("no winner");
    await store.releaseDispenserClaim({ createdAt: T0, address: winner.claim.address, chainId: CHAIN, transferTx: null });
    expect((await begin(store, addressN(50), CHAIN, 3)).ok).toBe(true);
    expect(await begin(store, addressN(51), CHAIN, 3)).toEqual({ ok: false, reason: "limit_reached", count: 3 });
  },
} satisfies Record<string, StoreTest>;
