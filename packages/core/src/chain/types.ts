/**
 * The Chain port: the few USDC operations the gateway performs on an EVM chain. Implemented with
 * viem (`createViemChain`); tested against a real anvil node with the test USDC token
 * (`packages/core/contracts/TestUSDC.sol`, EIP-3009 capable).
 */

/** A 0x-prefixed, checksummed or lower-case address. */
export type Address = `0x${string}`;
/** A 0x-prefixed hex string. */
export type Hex = `0x${string}`;

/** An EIP-3009 `transferWithAuthorization` authorization (the x402 `exact` EVM scheme payload). */
export interface TransferAuthorization {
  readonly from: Address;
  readonly to: Address;
  /** Atomic units. */
  readonly value: bigint;
  /** Unix seconds. */
  readonly validAfter: bigint;
  /** Unix seconds. */
  readonly validBefore: bigint;
  /** 32-byte random nonce. */
  readonly nonce: Hex;
}

/** The EIP-712 domain of the USDC token (needed to sign or verify an authorization). */
export interface TokenDomain {
  readonly name: string;
  readonly version: string;
  readonly chainId: number;
  readonly verifyingContract: Address;
}

/** A signed transaction: its bytes (`raw`, 0x hex), its hash, its sender and nonce. */
export interface SignedTransaction {
  readonly raw: Hex;
  readonly hash: Hex;
  readonly from: Address;
  readonly nonce: number;
}

/** Thrown when a transaction reverts or the node refuses it; `reason` is the revert reason when known. */
export class ChainError extends Error {
  readonly reason: string | undefined;
  /**
   * True when the write surely moved nothing and never can: it failed before its transaction was
   * sent (its simulation reverted, the RPC could not be read, no wallet), the node refused a
   * transaction it does not hold, or the transaction was mined and reverted. False: it may have been
   * sent and may still land (its answer or its receipt was lost), so it must not be sent again.
   */
  readonly nothingMoved: boolean;
  /** The hash of the transaction signed for the write, when one was (sent or maybe sent). */
  readonly txHash: Hex | undefined;
  /**
   * True when the contract itself refused the call: its simulation reverted with a reason, or the
   * transaction was mined and reverted (for a `transferFrom`: the wallet's allowance or balance did
   * not cover it when it ran). False for a node's refusal, a lost answer or an unreadable RPC.
   */
  readonly reverted: boolean;
  constructor(message: string, reason?: string, options?: { cause?: unknown; nothingMoved?: boolean; txHash?: Hex; reverted?: boolean }) {
    super(message, options);
    this.name = "ChainError";
    this.reason = reason;
    this.nothingMoved = options?.nothingMoved ?? false;
    this.txHash = options?.txHash;
    this.reverted = options?.reverted ?? false;
  }
}

/**
 * One chain with one USDC token and (optionally) one signing wallet. Write methods send a
 * transaction from the wallet, wait for its receipt, and resolve with the transaction hash;
 * they reject with {@link ChainError} on revert. Without a wallet, write methods reject.
 */
export interface Chain {
  readonly chainId: number;
  /** The USDC token address (lower-case). */
  readonly usdc: Address;
  /** The signing wallet's address (lower-case), when one is configured. */
  readonly account: Address | undefined;
  /** The token's EIP-712 domain (name and version read from the contract once, then cached). */
  tokenDomain(): Promise<TokenDomain>;
  balanceOf(owner: Address): Promise<bigint>;
  allowance(owner: Address, spender: Address): Promise<bigint>;
  /** Whether an EIP-3009 nonce of `authorizer` has been used (or cancelled) on-chain. */
  authorizationUsed(authorizer: Address, nonce: Hex): Promise<boolean>;
  /**
   * The transaction that used an EIP-3009 nonce of `authorizer` to move exactly `value` to `to`:
   * one that logged `AuthorizationUsed(authorizer, nonce)` and, as the very next log, `Transfer(authorizer, to,
   * value)`, among the most recent blocks (`AUTHORIZATION_LOOKBACK_BLOCKS`). Null when there is
   * none there: the nonce unused, cancelled (`AuthorizationCanceled`), used for another transfer
   * (a payer can spend its own authorization nonce on a transfer to itself), or older.
   */
  authorizedTransfer(authorizer: Address, nonce: Hex, to: Address, value: bigint): Promise<Hex | null>;
  /** `transfer(to, amount)` from the wallet; `beforeSend` as in {@link Chain.transferFrom}. */
  transfer(to: Address, amount: bigint, options?: { beforeSend?: (tx: SignedTransaction) => Promise<void> }): Promise<Hex>;
  /**
   * `transferFrom(from, to, amount)` with the wallet as spender (needs `from`'s allowance).
   * `beforeSend`, when given, gets the signed transaction before it is sent (again for each
   * re-signing after a nonce conflict): a caller records it there, so that a write whose outcome is
   * unknown is later finished with {@link Chain.resume} instead of being sent twice. If it throws,
   * nothing is sent and the write fails with `nothingMoved`.
   */
  transferFrom(from: Address, to: Address, amount: bigint, options?: { beforeSend?: (tx: SignedTransaction) => Promise<void> }): Promise<Hex>;
  /**
   * Finishes a transaction signed earlier by any wallet (`raw`, as `beforeSend` got it), whose
   * outcome was unknown: resolves with the hash it landed as once mined and succeeded (its own, or
   * that of a replacement with the same call: a "speed up"), sending the very same bytes again if
   * the node does not hold it and its nonce is still free (it can land at most once). Rejects with
   * `nothingMoved` when it was mined and reverted, or when a transaction with another call took its
   * nonce (it can never land; judged once that nonce is 64 blocks deep, from the node's past
   * state); otherwise (still unmined, too recent, the node unreachable or without past state) as a
   * write whose outcome is unknown.
   */
  resume(raw: Hex): Promise<Hex>;
  /** Submits `transferWithAuthorization` (the wallet pays gas; the funds move from `auth.from`). */
  transferWithAuthorization(auth: TransferAuthorization, signature: Hex): Promise<Hex>;
}
