/**
 * Which transaction paid a signed transfer: an `AuthorizationUsed` log and, as the very next log,
 * the `Transfer` of the signed value (the real chain path runs in x402/http-facilitator.test.ts).
 */
import { describe, expect, it } from "vitest";
import { pairedTransfer } from "./viem-chain.js";

const TX_A = `0x${"a".repeat(64)}` as const;
const TX_B = `0x${"b".repeat(64)}` as const;
const used = (transactionHash: `0x${string}`, logIndex: number) => ({ transactionHash, logIndex });
const moved = (transactionHash: `0x${string}`, logIndex: number, value: bigint) => ({ transactionHash, logIndex, args: { value } });

describe("pairedTransfer", () => {
  it("takes the transaction whose AuthorizationUsed log is followed by the Transfer of the signed value", () => {
    expect(pairedTransfer([used(TX_A, 4)], [moved(TX_A, 5, 1234n)], 1234n)).toBe(TX_A);
    expect(pairedTransfer([used(TX_B, 0), used(TX_A, 7)], [moved(TX_A, 8, 1234n)], 1234n)).toBe(TX_A);
  });

  it("refuses a nonce burned beside someone else's payment: one transfer in a transaction pays for one nonce", () => {
    // One transaction: nonce 1 paid honestly (logs 0, 1), nonces 2 and 3 burned on 0-value transfers to the payer (not in `moved`).
    const burns = [used(TX_A, 2), used(TX_A, 4)];
    expect(pairedTransfer(burns, [moved(TX_A, 1, 1234n)], 1234n)).toBeNull();
    expect(pairedTransfer([used(TX_A, 0), ...burns], [moved(TX_A, 1, 1234n)], 1234n)).toBe(TX_A);
  });

  it("refuses another value, another transaction, and logs without a place", () => {
    expect(pairedTransfer([used(TX_A, 4)], [moved(TX_A, 5, 1233n)], 1234n)).toBeNull();
    expect(pairedTransfer([used(TX_A, 4)], [moved(TX_B, 5, 1234n)], 1234n)).toBeNull();
    expect(pairedTransfer([{ transactionHash: TX_A, logIndex: null }], [moved(TX_A, 1, 1234n)], 1234n)).toBeNull();
    expect(pairedTransfer([used(TX_A, 4)], [], 1234n)).toBeNull();
  });
});
