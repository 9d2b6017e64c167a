/** Conformance: x402 nonce claims (money invariant 5 of docs/architecture.md: an authorization nonce pays at most once). */
import { expect } from "vitest";
import { makeVideoJob, T0, uniq, type StoreTest } from "./store-fixtures.js";

const NETWORK = "eip155:8453";
const PAYER = "0x00000000000000000000000000000000000000aa";

/** A fresh random-looking 32-byte nonce. */
function nonce(): string {
  return `0x${uniq().padStart(64, "0")}`;
}

export const x402Tests = {
  "x402: a nonce is claimed once; payer and nonce compare case-insensitively; other keys are independent": async ({ store }) => {
    const n = nonce();
    const claim = { network: NETWORK, payer: PAYER, nonce: n, requestId: "req_1", now: T0, expiresAt: T0 + 300_000 };
    expect(await store.claimPaymentNonce(claim)).toBe(true);
    expect(await store.getPaymentNonce({ network: NETWORK, payer: PAYER, nonce: n })).toEqual({
      network: NETWORK,
      payer: PAYER,
      nonce: n,
      requestId: "req_1",
      status: "claimed",
      claimedAt: T0,
      expiresAt: T0 + 300_000,
    });
    expect(await store.claimPaymentNonce({ ...claim, requestId: "req_2" })).toBe(false);
    expect(await store.claimPaymentNonce({ ...claim, requestId: "req_3", payer: PAYER.toUpperCase().replace("0X", "0x"), nonce: n.toUpperCase().replace("0X", "0x") })).toBe(false);
    // An expired claim is still a claim: the store never lets a nonce be claimed twice.
    expect(await store.claimPaymentNonce({ ...claim, requestId: "req_4", now: T0 + 10_000_000 })).toBe(false);
    expect(await store.claimPaymentNonce({ ...claim, requestId: "req_5", network: "eip155:1" })).toBe(true);
    expect(await store.claimPaymentNonce({ ...claim, requestId: "req_6", payer: "0x00000000000000000000000000000000000000bb" })).toBe(true);
    expect((await store.getPaymentNonce({ network: NETWORK, payer: PAYER, nonce: n }))?.requestId).toBe("req_1");
    expect(await store.getPaymentNonce({ network: NETWORK, payer: PAYER, nonce: nonce() })).toBeNull();
  },

  "x402: release frees an unsettled claim of its own request only": async ({ store }) => {
    const n = nonce();
    const k = { network: NETWORK, payer: PAYER, nonce: n };
    expect(await store.claimPaymentNonce({ ...k, requestId: "req_a", now: T0, expiresAt: T0 + 1000 })).toBe(true);
    expect(await store.releasePaymentNonce({ ...k, requestId: "req_other" })).toBe(false);
    expect(await store.releasePaymentNonce({ ...k, requestId: "req_a" })).toBe(true);
    expect(await store.releasePaymentNonce({ ...k, requestId: "req_a" })).toBe(false);
    expect(await store.getPaymentNonce(k)).toBeNull();
    expect(await store.claimPaymentNonce({ ...k, requestId: "req_b", now: T0 + 1, expiresAt: T0 + 1000 })).toBe(true);
    expect((await store.getPaymentNonce(k))?.requestId).toBe("req_b");
  },

  "x402: a settled nonce can be neither released nor claimed again": async ({ store }) => {
    const k = { network: NETWORK, payer: PAYER, nonce: nonce() };
    expect(await store.claimPaymentNonce({ ...k, requestId: "req_a", now: T0, expiresAt: T0 + 1000 })).toBe(true);
    expect(await store.markPaymentNonceSettled({ ...k, requestId: "req_other", txHash: "0x01", now: T0 + 1 })).toBe(false);
    expect(await store.markPaymentNonceSettled({ ...k, requestId: "req_a", txHash: "0xabc", now: T0 + 2 })).toBe(true);
    expect(await store.markPaymentNonceSettled({ ...k, requestId: "req_a", txHash: "0xdef", now: T0 + 3 })).toBe(false);
    expect(await store.releasePaymentNonce({ ...k, requestId: "req_a" })).toBe(false);
    expect(await store.claimPaymentNonce({ ...k, requestId: "req_b", now: T0 + 4, expiresAt: T0 + 1000 })).toBe(false);
    expect(await store.getPaymentNonce(k)).toMatchObject({ status: "settled", requestId: "req_a", txHash: "0xabc", settledAt: T0 + 2 });
  },

  "x402: a mark with a videoJob inserts the job in the same step; a failed mark inserts none": async ({ store }) => {
    const k = { network: NETWORK, payer: PAYER, nonce: nonce() };
    expect(await store.claimPaymentNonce({ ...k, requestId: "req_a", now: T0, expiresAt: T0 + 1000 })).toBe(true);
    const stranger = makeVideoJob();
    expect(await store.markPaymentNonceSettled({ ...k, requestId: "req_other", txHash: "0x01", now: T0 + 1, videoJob: stranger })).toBe(false);
    expect(await store.getVideoJob(stranger.id)).toBeNull();
    const unclaimed = makeVideoJob();
    expect(await store.markPaymentNonceSettled({ ...k, nonce: nonce(), requestId: "req_a", txHash: "0x01", now: T0 + 1, videoJob: unclaimed })).toBe(false);
    expect(await store.getVideoJob(unclaimed.id)).toBeNull();

    const job = makeVideoJob();
    expect(await store.markPaymentNonceSettled({ ...k, requestId: "req_a", txHash: "0xabc", now: T0 + 2, videoJob: job })).toBe(true);
    expect(await store.getVideoJob(job.id)).toEqual(job);
    expect(await store.getPaymentNonce(k)).toMatchObject({ status: "settled", txHash: "0xabc" });
    const again = makeVideoJob();
    expect(await store.markPaymentNonceSettled({ ...k, requestId: "req_a", txHash: "0xdef", now: T0 + 3, videoJob: again })).toBe(false);
    expect(await store.getVideoJob(again.id)).toBeNull();
  },

  "x402: 20 concurrent marks of one claim, each with its own videoJob: exactly one wins and one job is inserted": async ({ store }) => {
    const k = { network: NETWORK, payer: PAYER, nonce: nonce() };
    expect(await store.claimPaymentNonce({ ...k, requestId: "req_a", now: T0, expiresAt: T0 + 1000 })).toBe(true);
    const jobs = Array.from({ length: 20 }, () => makeVideoJob());
    const results = await Promise.all(jobs.map((videoJob, i) => store.markPaymentNonceSettled({ ...k, requestId: "req_a", txHash: `0x${i}`, now: T0 + 1, videoJob })));
    expect(results.filter(Boolean)).toHaveLength(1);
    const found = (await Promise.all(jobs.map((j) => store.getVideoJob(j.id)))).filter((j) => j !== null);
    expect(found.map((j) => j.id)).toEqual([jobs[results.indexOf(true)]!.id]);
  },

  "x402: a mark whose videoJob id exists rejects and leaves the claim unsettled": async ({ store }) => {
    const k = { network: NETWORK, payer: PAYER, nonce: nonce() };
    expect(await store.claimPaymentNonce({ ...k, requestId: "req_a", now: T0, expiresAt: T0 + 1000 })).toBe(true);
    const existing = makeVideoJob();
    await store.insertVideoJob(existing);
    await expect(store.markPaymentNonceSettled({ ...k, requestId: "req_a", txHash: "0xabc", now: T0 + 1, videoJob: makeVideoJob({ id: existing.id, model: "other" }) })).rejects.toThrow();
    expect(await store.getPaymentNonce(k)).toMatchObject({ status: "claimed", requestId: "req_a" });
    expect(await store.getVideoJob(existing.id)).toEqual(existing);
    expect(await store.markPaymentNonceSettled({ ...k, requestId: "req_a", txHash: "0xabc", now: T0 + 2, videoJob: makeVideoJob() })).toBe(true);
  },

  "x402: 20 concurrent claims of one nonce: exactly one wins": async ({ store }) => {
    const k = { network: NETWORK, payer: PAYER, nonce: nonce() };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claimPaymentNonce({ ...k, requestId: `req_${i}`, now: T0, expiresAt: T0 + 1000 })));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect((await store.getPaymentNonce(k))?.requestId).toBe(`req_${winner}`);
  },

  "x402: with maxOpen a claim must fit the payer's open claims; settled, released, expired, older and other payers' claims do not count": async ({ store }) => {
    const payer = `0x${uniq().padStart(40, "0")}`;
    const at = (n: number) => ({ network: NETWORK, payer, nonce: nonce(), requestId: `req_${uniq()}`, now: T0 + n, expiresAt: T0 + 1_000, maxOpen: 100n });
    const a = at(0);
    expect(await store.claimPaymentNonce({ ...a, amount: 60n })).toBe(true);
    const b = at(1);
    expect(await store.claimPaymentNonce({ ...b, amount: 50n })).toBe(false);
    expect(await store.getPaymentNonce(b)).toBeNull();
    const c = at(2);
    expect(await store.claimPaymentNonce({ ...c, amount: 40n })).toBe(true);
    expect(await store.claimPaymentNonce({ ...at(3), amount: 1n })).toBe(false);
    expect(await store.claimPaymentNonce({ ...at(3), payer: "0x00000000000000000000000000000000000000ab", amount: 100n })).toBe(true);
    expect(await store.claimPaymentNonce({ ...at(3), network: "eip155:1", amount: 100n })).toBe(true);
    // Without maxOpen nothing is checked (the amount is still recorded).
    const d = at(4);
    expect(await store.claimPaymentNonce({ ...d, maxOpen: undefined, amount: 30n })).toBe(true);
    expect(await store.releasePaymentNonce(a)).toBe(true);
    expect(await store.releasePaymentNonce(d)).toBe(true);
    expect(await store.claimPaymentNonce({ ...b, now: T0 + 5, amount: 50n })).toBe(true); // 40 + 50
    expect(await store.markPaymentNonceSettled({ ...c, txHash: "0x1", now: T0 + 6 })).toBe(true);
    expect(await store.claimPaymentNonce({ ...at(7), amount: 50n })).toBe(true); // 50 + 50: c settled
    expect(await store.claimPaymentNonce({ ...at(8), amount: 1n })).toBe(false);
    // A settled claim counts again with settledSince at or before its settlement (a balance read before it may not show it).
    const e = at(9);
    expect(await store.releasePaymentNonce({ ...b })).toBe(true);
    expect(await store.claimPaymentNonce({ ...e, amount: 50n, settledSince: T0 + 7 })).toBe(true); // 50 + 50; c settled at T0 + 6
    expect(await store.releasePaymentNonce(e)).toBe(true);
    expect(await store.claimPaymentNonce({ ...e, amount: 50n, settledSince: T0 + 6 })).toBe(false); // 50 + 40 + 50
    // A claim counts until its authorization expires, and only if claimed since openSince.
    expect(await store.claimPaymentNonce({ ...at(1_000), expiresAt: T0 + 2_000, amount: 100n })).toBe(true);
    expect(await store.claimPaymentNonce({ ...at(1_001), expiresAt: T0 + 2_000, amount: 1n })).toBe(false);
    expect(await store.claimPaymentNonce({ ...at(1_002), expiresAt: T0 + 2_000, openSince: T0 + 1_001, amount: 100n })).toBe(true);
  },

  "x402: 20 concurrent claims of one payer under maxOpen: exactly those that fit win": async ({ store }) => {
    const payer = `0x${uniq().padStart(40, "0")}`;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.claimPaymentNonce({ network: NETWORK, payer, nonce: nonce(), requestId: `req_${i}`, now: T0, expiresAt: T0 + 1_000, amount: 10n, maxOpen: 55n })),
    );
    expect(results.filter(Boolean)).toHaveLength(5);
  },

  "x402: claims of the store's largest amount add up exactly under maxOpen, beyond what one amount may be": async ({ store }) => {
    const payer = `0x${uniq().padStart(40, "0")}`;
    const max = store.maxAmount;
    const claim = (amount: bigint, maxOpen: bigint) =>
      store.claimPaymentNonce({ network: NETWORK, payer, nonce: nonce(), requestId: `req_${uniq()}`, now: T0, expiresAt: T0 + 1_000, amount, maxOpen });
    expect(await claim(max, 3n * max)).toBe(true);
    expect(await claim(max, 3n * max)).toBe(true);
    // Open: 2 × max. One more max fits 3 × max exactly; then not even 1 does.
    expect(await claim(max, 3n * max)).toBe(true);
    expect(await claim(1n, 3n * max)).toBe(false);
    expect(await claim(1n, 3n * max + 1n)).toBe(true);
  },

  "x402: claims marked unsure are listed until their checkUntil, soonest first, while still claimed": async ({ store }) => {
    const payTo = "0x00000000000000000000000000000000000000CC";
    const claimed = async (amount: bigint) => {
      const k = { network: NETWORK, payer: PAYER, nonce: nonce() };
      expect(await store.claimPaymentNonce({ ...k, requestId: `req_${k.nonce.slice(-6)}`, now: T0, expiresAt: T0 + 1_000, amount })).toBe(true);
      return Object.assign(k, { requestId: `req_${k.nonce.slice(-6)}` });
    };
    const [a, b, c] = [await claimed(7n), await claimed(8n), await claimed(9n)];
    // Only the holder of a claim that is still claimed can mark it.
    expect(await store.markPaymentNonceUnsure({ ...a, requestId: "req_other", payTo, checkUntil: T0 + 3_000 })).toBe(false);
    expect(await store.markPaymentNonceUnsure({ ...a, nonce: nonce(), payTo, checkUntil: T0 + 3_000 })).toBe(false);
    expect(await store.markPaymentNonceUnsure({ ...a, payTo, checkUntil: T0 + 3_000 })).toBe(true);
    expect(await store.markPaymentNonceUnsure({ ...b, payTo, checkUntil: T0 + 2_000 })).toBe(true);
    expect(await store.getPaymentNonce(a)).toMatchObject({ status: "claimed", checkUntil: T0 + 3_000 });
    expect((await store.getPaymentNonce(c))?.checkUntil).toBeUndefined();
    const mine = async (now: number, limit = 100) =>
      (await store.listUnsurePaymentNonces({ now, limit })).filter((u) => [a, b, c].some((k) => k.nonce === u.nonce));
    const entry = (k: typeof a, amount: bigint, checkUntil: number) => ({ network: NETWORK, payer: PAYER, nonce: k.nonce, requestId: k.requestId, amount, payTo: payTo.toLowerCase(), checkUntil });
    expect(await mine(T0)).toEqual([entry(b, 8n, T0 + 2_000), entry(a, 7n, T0 + 3_000)]);
    expect(await mine(T0 + 2_000)).toEqual([entry(a, 7n, T0 + 3_000)]);
    expect(await mine(T0 + 3_000)).toEqual([]);
    expect((await store.listUnsurePaymentNonces({ now: T0, limit: 1 })).length).toBe(1);
    // Paged by (checkUntil, network, payer, nonce): a page after the last claim of the previous one.
    const all: string[] = [];
    for (let after: Awaited<ReturnType<typeof store.listUnsurePaymentNonces>>[number] | undefined, guard = 0; guard < 100; guard++) {
      const page = await store.listUnsurePaymentNonces(Object.assign({ now: T0, limit: 1 }, after ? { after } : {}));
      all.push(...page.map((u) => u.nonce));
      if (page.length === 0) break;
      after = page[0];
    }
    expect(all.filter((n) => n === a.nonce || n === b.nonce)).toEqual([b.nonce, a.nonce]);
    expect(new Set(all).size).toBe(all.length);
    // Settled or released, a claim is no longer watched, and a settled one cannot be marked again.
    expect(await store.markPaymentNonceSettled({ ...a, txHash: "0xabc", now: T0 + 10 })).toBe(true);
    expect(await store.markPaymentNonceUnsure({ ...a, payTo, checkUntil: T0 + 9_000 })).toBe(false);
    expect(await store.releasePaymentNonce(b)).toBe(true);
    expect(await mine(T0)).toEqual([]);
    expect(await store.getPaymentNonce(a)).toMatchObject({ status: "settled", txHash: "0xabc", checkUntil: T0 + 3_000 });
  },
} satisfies Record<string, StoreTest>;
