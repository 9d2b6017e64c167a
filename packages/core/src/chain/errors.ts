/**
 * How the viem Chain reads a node's refusals and viem's errors: a lasting refusal, a nonce taken
 * by another sender, and the mapping to {@link ChainError} with the revert reason.
 */
import { BaseError, ContractFunctionRevertedError, NonceTooLowError } from "viem";
import { ChainError, type Hex } from "./types.js";

/**
 * True when the node refused the transaction for a reason that holds it out for good: funds or
 * gas, its fee, its signature or chain. A generic error (a timeout it reports as -32000, an
 * internal error) is not a refusal: the transaction may have been taken before it.
 */
export function isRefusal(error: unknown): boolean {
  const text = error instanceof Error ? error.message : String(error);
  return /insufficient funds|intrinsic gas too low|exceeds block gas limit|gas limit reached|invalid (signature|sender|chain ?id)|fee cap (less|lower) than|max fee per gas less than|transaction underpriced|tip (higher|above) (than )?(the )?fee cap/i.test(
    text,
  );
}

/** How many times a send refused for a nonce conflict is signed again. */
const NONCE_RETRIES = 8;

/**
 * True when the node refused a send because its nonce was already used or is pending: from
 * another sender of the same wallet (another gateway process), or from this very transaction
 * passed on by a load-balanced RPC, which the block that used the nonce tells apart
 * (viem-chain.ts). "already known" (the very same signed transaction is in the pool) is
 * deliberately not a conflict: it was accepted.
 */
export function isNonceConflict(error: unknown): boolean {
  if (error instanceof BaseError && error.walk((e) => e instanceof NonceTooLowError) instanceof NonceTooLowError) return true;
  const text = error instanceof Error ? error.message : String(error);
  return /nonce too low|nonce provided .* lower than the current nonce|replacement transaction underpriced|nonce has already been used/i.test(text);
}

/** Runs `send` (simulate + sign + send), again after a short random pause when the nonce was taken. */
export async function sendWithNonceRetry(send: () => Promise<Hex>): Promise<Hex> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (attempt >= NONCE_RETRIES || error instanceof ChainError || !isNonceConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.floor(Math.random() * 80) * (attempt + 1)));
    }
  }
}

/** Maps a viem error to a ChainError, extracting the revert reason when there is one. */
export function toChainError(label: string, error: unknown): ChainError {
  if (error instanceof ChainError) return error;
  let reason: string | undefined;
  let detail = error instanceof Error ? error.message : String(error);
  if (error instanceof BaseError) {
    detail = error.shortMessage || error.message;
    const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError) {
      reason = reverted.reason ?? reverted.data?.errorName;
    }
  }
  if (reason === undefined) {
    const text = error instanceof Error ? error.message : String(error);
    const match = /reverted with (?:the following )?reason(?: string)?:?\s*'?([^'\n]+)'?/i.exec(text) ?? /execution reverted:\s*([^\n]+)/i.exec(text);
    reason = match?.[1]?.trim();
  }
  const message = reason !== undefined ? `${label} reverted: ${reason}` : `${label} failed: ${detail}`;
  return new ChainError(message, reason, { cause: error });
}
