/**
 * How the viem Chain learns what became of a transaction it signed: its receipt (waited for, or
 * read once), and, when another transaction took its nonce, which transaction that was.
 *
 * A transaction is known by its call (`to` and calldata), not only by its hash: a wallet's
 * "speed up" re-sends the same call under a new hash and moves the same funds, while any other
 * call (a cancel, another process's transfer) moves none of ours. Every `transfer` and
 * `transferFrom` the gateway signs carries 32 random bytes after its arguments (the token ignores
 * them), so no two of its writes share a call, even for equal amounts to one treasury.
 */
import { parseTransaction, TransactionReceiptNotFoundError, type PublicClient, type TransactionReceipt } from "viem";
import { toChainError } from "./errors.js";
import { ChainError, type Address, type Hex } from "./types.js";

/**
 * How deep a nonce must have been used before the transaction that used it is looked for: by then
 * every node behind a load-balanced RPC shows that block and its receipts.
 */
export const NONCE_CONFIRMATIONS = 64n;

/** A transaction's call: its recipient and calldata, lower-case. */
export interface Call {
  readonly to: string;
  readonly input: string;
}

/** The call of the signed transaction `raw`. */
export function callOf(raw: Hex): Call {
  const tx = parseTransaction(raw);
  return { to: (tx.to ?? "").toLowerCase(), input: (tx.data ?? "0x").toLowerCase() };
}

const sameCall = (tx: { to: string | null; input: string }, call: Call) => (tx.to ?? "").toLowerCase() === call.to && tx.input.toLowerCase() === call.input;

/** The receipt readers of one chain's public client (see the module). */
export function createFinisher(client: PublicClient, wait: { timeout: number; pollingInterval: number }) {
  /** The receipt of `hash`, or null when the node has none (not mined, or unknown to it). */
  async function receiptOf(hash: Hex): Promise<TransactionReceipt | null> {
    try {
      return await client.getTransactionReceipt({ hash });
    } catch (error) {
      if (error instanceof TransactionReceiptNotFoundError) return null;
      throw unknown(`read the receipt of ${hash}`, hash, error);
    }
  }

  /**
   * The hash the call of `hash` landed as, from a receipt of its sender's nonce: its own (it
   * succeeded), or that of a replacement with the same call that succeeded (a "speed up").
   * `nothingMoved` when it reverted, or a replacement with another call took its nonce.
   */
  async function outcome(label: string, hash: Hex, receipt: TransactionReceipt, call: Call): Promise<Hex> {
    const mined = receipt.transactionHash;
    if (mined.toLowerCase() !== hash.toLowerCase()) {
      let other;
      try {
        other = await client.getTransaction({ hash: mined });
      } catch (error) {
        throw unknown(`${label}: read its replacement ${mined}`, hash, error);
      }
      if (!sameCall(other, call))
        throw new ChainError(`${label}: replaced by transaction ${mined}, another call, so it can never land`, undefined, { nothingMoved: true, txHash: hash });
    }
    if (receipt.status !== "success") {
      // A transaction that used all its gas ran out of it (the estimate fell short): not the contract's refusal.
      let gas: bigint | undefined;
      try {
        gas = (await client.getTransaction({ hash: mined })).gas;
      } catch {
        gas = undefined;
      }
      const refused = gas !== undefined && receipt.gasUsed < gas;
      throw new ChainError(`${label} reverted on-chain (transaction ${mined})${refused ? "" : "; it ran out of gas, or its gas could not be read"}`, undefined, {
        nothingMoved: true,
        txHash: hash,
        reverted: refused,
      });
    }
    return mined;
  }

  /** Waits for the receipt of `hash` (viem's wait also ends when another transaction of its nonce is mined: see {@link outcome}); unknown when none came. */
  async function mined(label: string, hash: Hex, call: Call): Promise<Hex> {
    let receipt;
    try {
      receipt = await client.waitForTransactionReceipt({ hash, timeout: wait.timeout, pollingInterval: wait.pollingInterval });
    } catch (error) {
      throw unknown(`${label} (waiting for receipt of ${hash})`, hash, error);
    }
    return outcome(label, hash, receipt, call);
  }

  /**
   * `hash` (nonce `nonce` of `from`) shows no receipt, and the nonce is used. Once it was used
   * `confirmations` blocks ago (default {@link NONCE_CONFIRMATIONS}; before that: unknown), finds the block that used it
   * (halving between a block where the nonce was free and one where it was used, from the node's
   * past state) and the transaction of that nonce in it: this one or one with its call landed (see
   * {@link outcome}); another call, `nothingMoved`. A node that cannot serve that past state, or
   * shows no such transaction, leaves it unknown.
   */
  async function consumed(label: string, hash: Hex, tx: { from: Address; nonce: number }, call: Call, confirmations = NONCE_CONFIRMATIONS): Promise<Hex> {
    let used;
    try {
      const count = (blockNumber: bigint) => client.getTransactionCount({ address: tx.from, blockNumber });
      const latest = await client.getBlockNumber({ cacheTime: 0 });
      let hi = latest > confirmations ? latest - confirmations : 0n;
      if ((await count(hi)) <= tx.nonce)
        throw new ChainError(`${label}: nonce ${tx.nonce} of ${tx.from} was used less than ${confirmations} blocks ago; judged once it is deeper`, undefined, { txHash: hash });
      // Back, doubling the step, to a block where the nonce was still free (block 0 always is)…
      let lo = hi;
      for (let step = NONCE_CONFIRMATIONS; ; step *= 2n) {
        lo = hi > step ? hi - step : 0n;
        if (lo === 0n || (await count(lo)) <= tx.nonce) break;
        hi = lo;
      }
      // …then halve to the first block where it was used.
      while (hi - lo > 1n) {
        const mid = (lo + hi) / 2n;
        if ((await count(mid)) > tx.nonce) hi = mid;
        else lo = mid;
      }
      const block = await client.getBlock({ blockNumber: hi, includeTransactions: true });
      used = block.transactions.find((t) => t.from.toLowerCase() === tx.from && t.nonce === tx.nonce);
      if (!used) throw new ChainError(`${label}: block ${hi} shows no transaction of nonce ${tx.nonce} of ${tx.from}; judged later`, undefined, { txHash: hash });
    } catch (error) {
      throw error instanceof ChainError ? error : unknown(`${label}: find the transaction of nonce ${tx.nonce} of ${tx.from}`, hash, error);
    }
    if (used.hash.toLowerCase() !== hash.toLowerCase() && !sameCall(used, call))
      throw new ChainError(`${label}: nonce ${tx.nonce} of ${tx.from} was used by transaction ${used.hash}, another call, so this one can never land`, undefined, {
        nothingMoved: true,
        txHash: hash,
      });
    const receipt = await receiptOf(used.hash);
    if (!receipt) throw new ChainError(`${label}: transaction ${used.hash} of its nonce shows no receipt yet; judged later`, undefined, { txHash: hash });
    return outcome(label, used.hash, receipt, call);
  }

  return { receiptOf, outcome, mined, consumed };
}

/** A failure after which `hash` may still land (not `nothingMoved`). */
function unknown(label: string, hash: Hex, error: unknown): ChainError {
  const failed = toChainError(label, error);
  return new ChainError(failed.message, failed.reason, { cause: error, txHash: hash });
}
