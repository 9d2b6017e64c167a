/**
 * How the viem Chain learns what became of a transaction it signed: its receipt (waited for, or
 * read once), judged by the transfer it makes ({@link TransferEffect}), and, when another
 * transaction took its nonce, whether one of that nonce made the same transfer.
 */
import { TransactionReceiptNotFoundError, type PublicClient, type TransactionReceipt } from "viem";
import { logsEffect, type TransferEffect } from "./transfer-effect.js";
import { ChainError, type Address, type Hex } from "./types.js";
import { USDC_ABI } from "./usdc-abi.js";
import { toChainError } from "./errors.js";

/**
 * How deep a nonce must have been used before a transaction of it that shows nowhere is judged
 * never to land: by then every node behind a load-balanced RPC shows its receipts and logs.
 */
export const NONCE_CONFIRMATIONS = 64n;

/** How far back the logs are searched for a transaction of the same nonce that made the same transfer. */
export const REPLACEMENT_LOOKBACK_BLOCKS = 900n;

/** The receipt readers of one chain's public client (see the module). */
export function createFinisher(client: PublicClient, usdc: Address, wait: { timeout: number; pollingInterval: number }) {
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
   * The hash the transfer of `hash` landed as, from a receipt of its sender's nonce: its own (it
   * succeeded), or a replacement's that logged the same transfer (a "speed up"). `nothingMoved`
   * when it reverted, or a replacement that does not make the transfer took its nonce.
   */
  function outcome(label: string, hash: Hex, receipt: TransactionReceipt, effect: TransferEffect | undefined): Hex {
    if (receipt.transactionHash.toLowerCase() !== hash.toLowerCase()) {
      if (receipt.status === "success" && effect && logsEffect(receipt.logs, usdc, effect)) return receipt.transactionHash;
      throw new ChainError(`${label}: replaced by transaction ${receipt.transactionHash}, which does not make this transfer, so it can never land`, undefined, {
        nothingMoved: true,
        txHash: hash,
      });
    }
    if (receipt.status !== "success") throw new ChainError(`${label} reverted on-chain (transaction ${hash})`, undefined, { nothingMoved: true, txHash: hash });
    return hash;
  }

  /**
   * Waits for the receipt of `hash` (viem's wait also resolves when another transaction of its
   * nonce is mined: then judged by its effect, see {@link outcome}); unknown when none came.
   */
  async function mined(label: string, hash: Hex, effect: TransferEffect | undefined): Promise<Hex> {
    let receipt;
    try {
      receipt = await client.waitForTransactionReceipt({ hash, timeout: wait.timeout, pollingInterval: wait.pollingInterval });
    } catch (error) {
      throw unknown(`${label} (waiting for receipt of ${hash})`, hash, error);
    }
    return outcome(label, hash, receipt, effect);
  }

  /**
   * `hash` (nonce `nonce` of `from`) shows no receipt, and the nonce is used. Judged only once it
   * was used {@link NONCE_CONFIRMATIONS} blocks ago (before that: unknown). Its receipt then, or a
   * transaction of `from` with that nonce that logged the same transfer in the last
   * {@link REPLACEMENT_LOOKBACK_BLOCKS} blocks, means it landed; neither, that another transaction
   * took the nonce (`nothingMoved`).
   */
  async function consumed(label: string, hash: Hex, tx: { from: Address; nonce: number }, effect: TransferEffect | undefined): Promise<Hex> {
    try {
      const latest = await client.getBlockNumber({ cacheTime: 0 });
      const deep = latest > NONCE_CONFIRMATIONS ? latest - NONCE_CONFIRMATIONS : 0n;
      if ((await client.getTransactionCount({ address: tx.from, blockNumber: deep })) <= tx.nonce)
        throw new ChainError(
          `${label}: nonce ${tx.nonce} of ${tx.from} was used less than ${NONCE_CONFIRMATIONS} blocks ago; judged once it is deeper (it may have landed)`,
          undefined,
          { txHash: hash },
        );
      const late = await receiptOf(hash);
      if (late) return outcome(label, hash, late, effect);
      if (!effect)
        throw new ChainError(`${label}: nonce ${tx.nonce} of ${tx.from} is used and this transaction makes no transfer to look for`, undefined, {
          txHash: hash,
        });
      const fromBlock = latest > REPLACEMENT_LOOKBACK_BLOCKS ? latest - REPLACEMENT_LOOKBACK_BLOCKS : 0n;
      const logs = await client.getContractEvents({
        address: usdc,
        abi: USDC_ABI,
        eventName: "Transfer",
        args: { from: effect.from, to: effect.to },
        fromBlock,
        toBlock: latest,
      });
      for (const log of logs) {
        if (log.args.value !== effect.value || !log.transactionHash) continue;
        const other = await client.getTransaction({ hash: log.transactionHash });
        if (other.from.toLowerCase() === tx.from && other.nonce === tx.nonce) return log.transactionHash;
      }
    } catch (error) {
      throw error instanceof ChainError ? error : unknown(`${label}: look for the transaction of nonce ${tx.nonce} of ${tx.from}`, hash, error);
    }
    throw new ChainError(
      `${label}: nonce ${tx.nonce} of ${tx.from} was used by another transaction, and none of that nonce made this transfer in the last ${REPLACEMENT_LOOKBACK_BLOCKS} blocks, so it can never land`,
      undefined,
      { nothingMoved: true, txHash: hash },
    );
  }

  return { receiptOf, outcome, mined, consumed };
}

/** A failure after which `hash` may still land (not `nothingMoved`). */
function unknown(label: string, hash: Hex, error: unknown): ChainError {
  const failed = toChainError(label, error);
  return new ChainError(failed.message, failed.reason, { cause: error, txHash: hash });
}
