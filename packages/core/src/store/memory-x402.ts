/** The x402 part of the memory store. */
import type { VideoJobRecord } from "./video-types.js";
import type { PaymentNonceKey, PaymentNonceRecord, PaymentNonceStore, UnsurePaymentNonce } from "./x402-types.js";

const keyOf = (k: PaymentNonceKey): string => `${k.network}|${k.payer.toLowerCase()}|${k.nonce.toLowerCase()}`;

/**
 * In-memory x402 operations (synchronous inside each method: that is their atomicity).
 * `insertVideoJob` is the memory video store's synchronous insert (throws on a duplicate id
 * before inserting), used by `markPaymentNonceSettled` in the same step as the mark.
 */
export function createMemoryPaymentNonceStore(insertVideoJob: (job: VideoJobRecord) => void): PaymentNonceStore {
  const claims = new Map<string, PaymentNonceRecord>();
  /** The amount of each claim (not part of the record the store returns). */
  const amounts = new WeakMap<PaymentNonceRecord, bigint>();
  /** The payee of each claim marked unsure (not part of the record either). */
  const payees = new WeakMap<PaymentNonceRecord, string>();
  const openAmount = (network: string, payer: string, now: number, since: number, settledSince: number): bigint => {
    let sum = 0n;
    for (const c of claims.values()) {
      if (c.network !== network || c.payer !== payer) continue;
      const open = c.status === "claimed" ? c.expiresAt > now && c.claimedAt >= since : (c.settledAt ?? 0) >= settledSince;
      if (open) sum += amounts.get(c) ?? 0n;
    }
    return sum;
  };
  const held = (k: PaymentNonceKey & { requestId: string }): PaymentNonceRecord | undefined => {
    const claim = claims.get(keyOf(k));
    return claim && claim.status === "claimed" && claim.requestId === k.requestId ? claim : undefined;
  };
  return {
    async claimPaymentNonce(input) {
      const key = keyOf(input);
      if (claims.has(key)) return false;
      const payer = input.payer.toLowerCase();
      const amount = input.amount ?? 0n;
      if (
        input.maxOpen !== undefined &&
        openAmount(input.network, payer, input.now, input.openSince ?? 0, input.settledSince ?? Infinity) + amount > input.maxOpen
      )
        return false;
      const claim: PaymentNonceRecord = {
        network: input.network,
        payer,
        nonce: input.nonce.toLowerCase(),
        requestId: input.requestId,
        status: "claimed",
        claimedAt: input.now,
        expiresAt: input.expiresAt,
      };
      claims.set(key, claim);
      amounts.set(claim, amount);
      return true;
    },

    async releasePaymentNonce(input) {
      return held(input) ? claims.delete(keyOf(input)) : false;
    },

    async markPaymentNonceSettled(input) {
      const claim = held(input);
      if (!claim) return false;
      // First: a duplicate job id throws here, before the claim changes.
      if (input.videoJob) insertVideoJob(input.videoJob);
      claim.status = "settled";
      claim.txHash = input.txHash;
      claim.settledAt = input.now;
      return true;
    },

    async markPaymentNonceUnsure(input) {
      const claim = held(input);
      if (!claim) return false;
      claim.checkUntil = input.checkUntil;
      payees.set(claim, input.payTo.toLowerCase());
      return true;
    },

    async listUnsurePaymentNonces({ now, limit, after }) {
      const unsure: UnsurePaymentNonce[] = [];
      const order = (u: UnsurePaymentNonce) => [u.checkUntil, u.network, u.payer, u.nonce] as const;
      const before = (a: UnsurePaymentNonce, b: UnsurePaymentNonce) => {
        const [x, y] = [order(a), order(b)];
        for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
        return 0;
      };
      for (const c of claims.values())
        if (c.status === "claimed" && c.checkUntil !== undefined && c.checkUntil > now)
          unsure.push({
            network: c.network,
            payer: c.payer,
            nonce: c.nonce,
            requestId: c.requestId,
            amount: amounts.get(c) ?? 0n,
            payTo: payees.get(c) ?? "",
            checkUntil: c.checkUntil,
          });
      return unsure
        .sort(before)
        .filter((u) => !after || before(after, u) < 0)
        .slice(0, limit);
    },

    async getPaymentNonce(key) {
      const claim = claims.get(keyOf(key));
      return claim ? { ...claim } : null;
    },
  };
}
