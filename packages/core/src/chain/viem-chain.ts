/**
 * The viem implementation of the {@link Chain} port.
 *
 * Writes run `simulateContract` (so a revert is reported with its reason and no gas is spent), then
 * sign the transaction (its hash known before it is sent; a transfer's call tagged with 32 random
 * bytes, see ./finish.ts), hand it to the caller's `beforeSend` to record, send it, and wait for
 * its receipt. Reverts and node refusals become {@link ChainError} with the revert reason when viem
 * can decode one.
 */
import {
  createPublicClient,
  concat,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  http,
  keccak256,
  parseSignature,
  parseTransaction,
  recoverTransactionAddress,
  size,
  TransactionNotFoundError,
  type PrivateKeyAccount,
  type PublicClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { ChainError, type Address, type Chain, type Hex, type SignedTransaction, type TokenDomain, type TransferAuthorization } from "./types.js";
import { USDC_ABI } from "./usdc-abi.js";
import { isNonceConflict, isRefusal, sendWithNonceRetry, toChainError } from "./errors.js";
import { callOf, createFinisher, type Call } from "./finish.js";
import { randomBytes, toHex } from "../ids.js";

export { isNonceConflict, isRefusal, toChainError } from "./errors.js";

export interface ViemChainOptions {
  /** JSON-RPC endpoint (HTTP). */
  readonly rpcUrl: string;
  readonly chainId: number;
  /** The USDC token address. */
  readonly usdc: Address;
  /** The signing wallet (pays gas; the `from` of `transfer`, the spender of `transferFrom`). */
  readonly privateKey?: Hex;
  /** Per-RPC-request timeout (default 10 000 ms). */
  readonly timeoutMs?: number;
  /** How long a write waits for its receipt (default 120 000 ms). */
  readonly receiptTimeoutMs?: number;
  /** Block / receipt polling interval (default 500 ms; anvil automines so receipts come at once). */
  readonly pollingIntervalMs?: number;
}

export function createViemChain(options: ViemChainOptions): Chain {
  const { rpcUrl, chainId } = options;
  const usdc = options.usdc.toLowerCase() as Address;
  const timeout = options.timeoutMs ?? 10_000;
  const receiptTimeout = options.receiptTimeoutMs ?? 120_000;
  const pollingInterval = options.pollingIntervalMs ?? 500;

  // A minimal chain object so any chain id works (Base, Base Sepolia, anvil, ...).
  const chain = defineChain({
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl, { timeout, retryCount: 1 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval });
  const account: PrivateKeyAccount | undefined = options.privateKey ? privateKeyToAccount(options.privateKey) : undefined;
  const walletClient = account ? createWalletClient({ chain, transport, account, pollingInterval }) : undefined;
  const finisher = createFinisher(publicClient as PublicClient, { timeout: receiptTimeout, pollingInterval });

  /*
   * Write queue. Every write from this wallet runs strictly one after another, and the next one
   * starts only after the previous one's receipt. Why: viem picks the nonce of a new transaction
   * with `eth_getTransactionCount(account, "pending")`; two concurrent writes would read the same
   * count and the second would be rejected ("nonce too low") or replace the first. Waiting for the
   * receipt (not just the send) also keeps us correct on load-balanced RPCs whose "pending" view
   * lags. The cost is throughput (one write per block); callers that need more batch on-chain.
   * Separate Chain instances sharing one key (several gateway processes) are coordinated only by
   * the node: a send it refuses for a taken nonce is signed again with a fresh one
   * (`sendWithNonceRetry`) once the block that used the nonce shows another call there
   * ({@link takenNonce}): a load-balanced RPC may have passed this very transaction to another of
   * its nodes, and answer "nonce too low" from one that saw it mined but cannot show it yet.
   */
  let queue: Promise<unknown> = Promise.resolve();
  function enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  }

  async function write(label: string, request: WriteRequest, beforeSend?: (tx: SignedTransaction) => Promise<void>): Promise<Hex> {
    if (!account || !walletClient) {
      throw new ChainError(`Cannot ${label}: this chain has no signing wallet (no privateKey configured)`, undefined, { nothingMoved: true });
    }
    return enqueue(async () => {
      const raw = await sendWithNonceRetry(() => signAndSend(label, request, beforeSend)).catch((error: unknown) => {
        if (error instanceof ChainError) throw error;
        // Refused for a taken nonce on every try: never accepted.
        const failed = toChainError(label, error);
        throw new ChainError(failed.message, failed.reason, { cause: error, nothingMoved: true });
      });
      return finisher.mined(label, keccak256(raw), callOf(raw));
    });
  }

  /** {@link Chain.resume}: see there. Runs in the write queue, so this wallet's own sends stay in nonce order. */
  async function resume(raw: Hex): Promise<Hex> {
    const hash = keccak256(raw);
    const label = `finish transaction ${hash}`;
    let tx: { from: Address; nonce: number };
    try {
      const from = await recoverTransactionAddress({ serializedTransaction: raw as Parameters<typeof recoverTransactionAddress>[0]["serializedTransaction"] });
      tx = { from: from.toLowerCase() as Address, nonce: parseTransaction(raw).nonce ?? 0 };
    } catch (error) {
      // A record that does not parse cannot be judged: the transaction it stood for may have landed.
      throw new ChainError(`${label}: the recorded transaction cannot be read (${(error as Error).message})`, undefined, { cause: error, txHash: hash });
    }
    const call = callOf(raw);
    return enqueue(async () => {
      const found = await finisher.receiptOf(hash);
      if (found) return finisher.outcome(label, hash, found, call);
      const used = await read(`${label}: read the nonce of ${tx.from}`, () => publicClient.getTransactionCount({ address: tx.from, blockTag: "latest" }));
      // The nonce is taken: by this transaction (its receipt lagging), by a replacement of it, or by another one.
      if (used > tx.nonce) return finisher.consumed(label, hash, tx, call);
      try {
        await publicClient.sendRawTransaction({ serializedTransaction: raw });
      } catch (error) {
        // Refused or lost: unless the node holds it now, its fate is still open (its nonce is free).
        if ((await lookup(hash)) !== "held") {
          const failed = toChainError(`${label} (sent again; it may still land)`, error);
          throw new ChainError(failed.message, failed.reason, { cause: error, txHash: hash });
        }
      }
      return finisher.mined(label, hash, call);
    });
  }

  /**
   * Simulates, signs and sends one transaction. Its hash is known before it is sent, so a send
   * whose answer is lost (a timeout, a 502 from a proxy, a dropped connection: the node may have
   * taken it) is checked on the node: known there, it was sent. A failure before the send, or the
   * node's own refusal of a transaction it does not hold, moved nothing (`nothingMoved`); any other
   * failure may still land, and says so (not `nothingMoved`, with the hash). Resolves with the
   * signed bytes of the transaction sent.
   */
  async function signAndSend(label: string, request: WriteRequest, beforeSend?: (tx: SignedTransaction) => Promise<void>): Promise<Hex> {
    let serialized: Hex;
    let sent: { from: Address; nonce: number };
    try {
      // A transfer's call is made unique (see ./finish.ts): 32 random bytes after its arguments, which the token ignores.
      const tag = request.functionName === "transferWithAuthorization" ? undefined : (`0x${toHex(randomBytes(32))}` as Hex);
      const { request: prepared } = await publicClient.simulateContract({ account, address: usdc, abi: USDC_ABI, ...request, dataSuffix: tag } as Parameters<
        typeof publicClient.simulateContract
      >[0]);
      const call = encodeFunctionData({ abi: USDC_ABI, functionName: request.functionName, args: request.args } as Parameters<typeof encodeFunctionData>[0]);
      const data = tag ? concat([call, tag]) : call;
      const tx = await walletClient!.prepareTransactionRequest({ account: account!, chain, to: usdc, data, gas: (prepared as { gas?: bigint }).gas });
      // A quarter more gas than estimated: state that changes before the transaction runs (a first
      // write to a balance slot costs ~17k more) must not make it run out and revert.
      if (typeof tx.gas === "bigint") tx.gas = tx.gas + tx.gas / 4n;
      serialized = await walletClient!.signTransaction(tx as Parameters<NonNullable<typeof walletClient>["signTransaction"]>[0]);
      sent = { from: account!.address.toLowerCase() as Address, nonce: tx.nonce as number };
      await beforeSend?.(Object.assign({ raw: serialized, hash: keccak256(serialized) }, sent));
    } catch (error) {
      const failed = toChainError(label, error);
      throw new ChainError(failed.message, failed.reason, { cause: error, nothingMoved: true, reverted: failed.reason !== undefined });
    }
    const hash = keccak256(serialized);
    try {
      await walletClient!.sendRawTransaction({ serializedTransaction: serialized });
      return serialized;
    } catch (error) {
      const found = await lookup(hash);
      if (found === "held") return serialized;
      // Another sender's transaction holds the nonce: signed again with a fresh one; this one: sent.
      if (found === "absent" && isNonceConflict(error)) {
        if (await takenNonce(label, hash, sent, callOf(serialized))) return serialized;
        throw error;
      }
      const refused = found === "absent" && isRefusal(error);
      const failed = toChainError(refused ? label : `${label} (sent as ${hash}; it may still land)`, error);
      throw new ChainError(failed.message, failed.reason, { cause: error, nothingMoved: refused, txHash: hash });
    }
  }

  /**
   * After a send refused for a taken nonce, the transaction that took it, waiting (as for a
   * receipt) while the nonce is only pending: true when it is this one (it landed), false when it is
   * another call (this one can never land, so signing anew pays once). Throws the unknown outcome
   * when the chain does not tell within the receipt timeout.
   */
  async function takenNonce(label: string, hash: Hex, tx: { from: Address; nonce: number }, call: Call): Promise<boolean> {
    const deadline = Date.now() + receiptTimeout;
    for (;;) {
      try {
        await finisher.consumed(`${label} (sent as ${hash}; refused for its nonce, it may still land)`, hash, tx, call, 0n);
        return true;
      } catch (error) {
        if (error instanceof ChainError && error.nothingMoved) return false;
        if (Date.now() + pollingInterval > deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, pollingInterval));
    }
  }

  /**
   * Whether the node holds the transaction (pending or mined): "held"; "absent" when it answered
   * that it does not, every time over ~1 s (a load-balanced RPC may not show a transaction another
   * of its nodes took at once); "unknown" when a lookup failed.
   */
  async function lookup(hash: Hex): Promise<"held" | "absent" | "unknown"> {
    let unknown = false;
    for (let attempt = 0; attempt < LOOKUPS; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, LOOKUP_GAP_MS));
      try {
        await publicClient.getTransaction({ hash });
        return "held";
      } catch (error) {
        if (!(error instanceof TransactionNotFoundError)) unknown = true;
      }
    }
    return unknown ? "unknown" : "absent";
  }

  async function read<T>(label: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw toChainError(label, error);
    }
  }

  let domain: Promise<TokenDomain> | undefined;

  return {
    chainId,
    usdc,
    account: account ? (account.address.toLowerCase() as Address) : undefined,

    tokenDomain() {
      if (!domain) {
        domain = read("read the token's EIP-712 domain", async () => {
          const [name, version] = await Promise.all([
            publicClient.readContract({ address: usdc, abi: USDC_ABI, functionName: "name" }),
            publicClient.readContract({ address: usdc, abi: USDC_ABI, functionName: "version" }),
          ]);
          return { name, version, chainId, verifyingContract: usdc };
        });
        domain.catch(() => {
          domain = undefined; // do not cache failures
        });
      }
      return domain;
    },

    balanceOf(owner) {
      return read("read balanceOf", () => publicClient.readContract({ address: usdc, abi: USDC_ABI, functionName: "balanceOf", args: [owner] }));
    },

    allowance(owner, spender) {
      return read("read allowance", () => publicClient.readContract({ address: usdc, abi: USDC_ABI, functionName: "allowance", args: [owner, spender] }));
    },

    authorizationUsed(authorizer, nonce) {
      return read("read authorizationState", () =>
        publicClient.readContract({
          address: usdc,
          abi: USDC_ABI,
          functionName: "authorizationState",
          args: [authorizer, nonce],
        }),
      );
    },

    authorizedTransfer(authorizer, nonce, to, value) {
      return read("read AuthorizationUsed and Transfer logs", async () => {
        const latest = await publicClient.getBlockNumber({ cacheTime: 0 });
        const search = async (blocks: bigint) => {
          const range = { address: usdc, abi: USDC_ABI, fromBlock: latest > blocks ? latest - blocks : 0n, toBlock: latest } as const;
          const [used, moved] = await Promise.all([
            publicClient.getContractEvents({ ...range, eventName: "AuthorizationUsed", args: { authorizer, nonce } }),
            publicClient.getContractEvents({ ...range, eventName: "Transfer", args: { from: authorizer, to } }),
          ]);
          return pairedTransfer(used, moved, value);
        };
        // An RPC that limits log ranges below the lookback still answers for the last 100 blocks.
        return search(AUTHORIZATION_LOOKBACK_BLOCKS).catch(() => search(100n));
      });
    },

    transfer(to, amount, options) {
      return write("transfer", { functionName: "transfer", args: [to, amount] }, options?.beforeSend);
    },

    transferFrom(from, to, amount, options) {
      return write("transferFrom", { functionName: "transferFrom", args: [from, to, amount] }, options?.beforeSend);
    },

    resume,

    transferWithAuthorization(auth: TransferAuthorization, signature: Hex) {
      const base = [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce] as const;
      // 65-byte EOA signatures use the (v, r, s) overload, which every FiatToken version has;
      // anything else (EIP-1271 smart-wallet signatures) needs the `bytes signature` overload (v2.2+).
      let args: readonly unknown[];
      try {
        if (size(signature) === 65) {
          const { r, s, v, yParity } = parseSignature(signature);
          args = [...base, Number(v ?? BigInt(yParity + 27)), r, s];
        } else {
          args = [...base, signature];
        }
      } catch (error) {
        return Promise.reject(new ChainError("transferWithAuthorization: malformed signature", "invalid signature", { cause: error }));
      }
      return write("transferWithAuthorization", { functionName: "transferWithAuthorization", args });
    },
  };
}

/** A log's place: its transaction and its index in the block. */
interface LogPlace {
  readonly transactionHash: Hex | null;
  readonly logIndex: number | null;
}

/**
 * The transaction of an `AuthorizationUsed` log whose very next log (EIP-3009's
 * `transferWithAuthorization` emits the two back to back) is the `Transfer` of exactly `value`;
 * null when none is. A Transfer elsewhere in the same transaction does not count: a transaction
 * that burns several nonces and pays once pays for one of them.
 */
export function pairedTransfer(used: readonly LogPlace[], moved: readonly (LogPlace & { readonly args: { readonly value?: bigint } })[], value: bigint): Hex | null {
  const transfers = new Set(moved.filter((log) => log.args.value === value && log.logIndex !== null).map((log) => `${log.transactionHash}:${log.logIndex}`));
  const paid = used.find((log) => log.logIndex !== null && transfers.has(`${log.transactionHash}:${log.logIndex + 1}`));
  return paid?.transactionHash ?? null;
}

/** How far back `authorizedTransfer` looks: ~30 min of 2-second blocks, within most RPCs' log-range limits. */
export const AUTHORIZATION_LOOKBACK_BLOCKS = 900n;

interface WriteRequest {
  readonly functionName: "transfer" | "transferFrom" | "transferWithAuthorization";
  readonly args: readonly unknown[];
}

/** Lookups of a transaction whose send failed, and the pause between them. */
const LOOKUPS = 4;
const LOOKUP_GAP_MS = 300;
