/** Conformance: x402 nonce claims (DESIGN.md invariant 5: an authorization nonce pays at most once). */
import { expect } from "vitest";
import { T0, uniq, type StoreTest } from "./store-fixtures.js";

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

  "x402: 20 concurrent claims of one nonce: exactly one wins": async ({ store }) => {
    const k = { network: NETWORK, payer: PAYER, nonce: nonce() };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claimPaymentNonce({ ...k, requestId: `req_${i}`, now: T0, expiresAt: T0 + 1000 })));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect((await store.getPaymentNonce(k))?.requestId).toBe(`req_${winner}`);
  },
} satisfies Record<string, StoreTest>;
