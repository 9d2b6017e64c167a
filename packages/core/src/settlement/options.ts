/** Options of the settlement capability (`createGateway({ settlement: … })`). */
import { isAddress } from "viem";
import { z } from "zod";
import { privateKeySchema, type ChainConfig } from "../chain/options.js";
import { ChainError, type Chain } from "../chain/types.js";
import { createViemChain, type ViemChainOptions } from "../chain/viem-chain.js";

/** One chain's spender wallet: wallets approve this address, and it pays the gas of `transferFrom`. */
export const settlementChainSchema = z.strictObject({
  /** Must be one of `options.chains` (where its RPC URL and USDC address come from). */
  chainId: z.number().int().positive(),
  spenderPrivateKey: privateKeySchema,
});

/** The zod schema of `options.settlement`. Cross-checks against `options.chains` run in the service. */
export const settlementOptionsSchema = z
  .strictObject({
    /** The `x-internal-secret` of `POST /api/settlement/batch` (at least 16 characters). */
    internalSecret: z.string().min(16, "must be at least 16 characters"),
    /** Where the batched charges go. */
    treasury: z
      .string()
      .refine((v) => isAddress(v, { strict: false }), "must be a 0x-prefixed 20-byte address")
      .transform((v) => v.toLowerCase() as `0x${string}`),
    chains: z.array(settlementChainSchema),
    /** How long a batch holds the charges it claimed, in ms; a crashed batch's charges are free again after it. @default 120000 */
    leaseMs: z.number().int().min(10_000).max(3_600_000).optional(),
    /** Most charges one batch claims. @default 500 */
    batchLimit: z.number().int().min(1).max(10_000).optional(),
    /**
     * How long the charges of a group whose transfer failed wait before a batch takes them again, in
     * ms. Batches take charges that never failed before those that did, so a wallet that cannot pay
     * never keeps the others out; this spares the chain its retries too. @default 0 (the next batch)
     */
    retryAfterMs: z.number().int().min(0).max(7 * 86_400_000).optional(),
    /**
     * Run a batch every `intervalMs` ms in the background (one at a time), so what a key spends is
     * collected, and a wallet that moved its funds away is found and frozen, within this long.
     * `false`: only on request (`POST /api/settlement/batch`, `tollgate settle` from a cron job).
     * @default 600000 (10 min)
     */
    intervalMs: z.union([z.literal(false), z.number().int().min(1000).max(86_400_000)]).optional(),
    /**
     * Back every key on a settlement chain with the wallet's funds: creating a key or raising its
     * budget needs the wallet's allowance to the spender and its balance to cover its live keys'
     * remaining budgets plus its queued charges (402 `insufficient_funds`), and a batch that cannot
     * collect from an underfunded wallet cuts its keys' budgets to what they have committed.
     * `false` extends unbacked credit. @default true
     */
    requireFunding: z.boolean().optional(),
  })
  .optional();
export type SettlementOptions = z.output<typeof settlementOptionsSchema>;

/** One configured chain with a signing wallet, as the dispenser and settlement services use it. */
export interface WalletChain {
  readonly config: ChainConfig;
  readonly chain: Chain;
}

/**
 * Connects each `{chainId, privateKey}` entry to its `options.chains` entry with a viem
 * {@link Chain} (no network traffic until used). Entries whose chain is not in `options.chains`,
 * or listed twice, become one issue line each, prefixed with `path` (e.g. `dispenser.chains`).
 */
export function resolveWalletChains(
  chains: readonly ChainConfig[] | undefined,
  entries: readonly { chainId: number; privateKey: `0x${string}` }[],
  path: string,
  makeChain: (options: ViemChainOptions) => Chain = createViemChain,
): { wallets: Map<number, WalletChain>; issues: string[] } {
  const wallets = new Map<number, WalletChain>();
  const issues: string[] = [];
  entries.forEach((entry, i) => {
    const config = chains?.find((c) => c.chainId === entry.chainId);
    if (!config) issues.push(`${path}.${i}.chainId: chain ${entry.chainId} is not in options.chains (add { chainId, rpcUrl, usdc } there)`);
    else if (wallets.has(entry.chainId)) issues.push(`${path}.${i}.chainId: chain ${entry.chainId} is listed twice`);
    else wallets.set(entry.chainId, { config, chain: makeChain({ rpcUrl: config.rpcUrl, chainId: config.chainId, usdc: config.usdc, privateKey: entry.privateKey }) });
  });
  return { wallets, issues };
}

/**
 * Whether a failed write may still land on-chain, so that it must not be retried at once (or the
 * funds could move twice): everything but a {@link ChainError} that says nothing moved (its
 * simulation reverted, the node refused it, it was mined and reverted). A send whose answer was
 * lost, a receipt that never came, any error the Chain port did not classify: unknown.
 */
export function outcomeUnknown(error: unknown): boolean {
  return !(error instanceof ChainError && error.nothingMoved);
}
