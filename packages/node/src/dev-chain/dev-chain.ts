/**
 * The dev chain: a local anvil with the test token, configured into the gateway exactly as a real
 * chain would be (`chains`, `x402` with the local facilitator, `dispenser`, `settlement`).
 *
 * Persistence: the chain lives in `<dir>/anvil-state.json` (anvil `--state`), beside the SQLite
 * ledger, because the ledger survives restarts: a fresh chain at every start would leave the
 * ledger's dispenser claims, x402 nonces and settled charges pointing at transfers that no longer
 * exist (an address that claimed could never claim again, yet would hold nothing). anvil writes
 * the file when it stops (SIGTERM/SIGINT) and every {@link STATE_INTERVAL_SECONDS} seconds, so
 * a crash loses at most that much chain history while the ledger keeps everything; deleting the
 * whole data directory resets both together. Without a `dir` (an in-memory ledger) nothing is kept.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { GatewayOptions } from "@tollgate/core";
import { getContractAddress } from "viem";
import { startAnvil, type AnvilAccount, type AnvilNode } from "./anvil.js";
import { provisionTestUsdc } from "./provision.js";
import { readDevChainRecord, writeDevChainRecord, RECORD_FILE, type DevChainRecord } from "./record.js";
import { stopStrayAnvil } from "./stray.js";

/** How often anvil writes its state file besides on stop. */
export const STATE_INTERVAL_SECONDS = 5;
/** The chain id of the dev chain (anvil's default). */
export const DEV_CHAIN_ID = 31337;

/** The dev accounts (by anvil index) in each role: one wallet per role, so no two signers race for nonces. */
const ROLE_INDEX = { deployer: 0, facilitator: 1, dispenser: 2, spender: 3, payee: 4 } as const;

/** Options of {@link startDevChain}. */
export interface StartDevChainOptions {
  /** Where the chain state and `dev-chain.json` live (created if missing); undefined: a throwaway chain. */
  readonly dir: string | undefined;
  /** The settlement secret to use; default: the one generated for `dir` before (kept in `dev-chain.json`), else a new one. */
  readonly internalSecret?: string | undefined;
}

/** A running dev chain. */
export interface DevChain {
  readonly rpcUrl: string;
  readonly chainId: number;
  /** The TestUSDC contract (lower-case). */
  readonly usdc: `0x${string}`;
  /** Addresses of the dev wallets: x402 facilitator, dispenser, settlement spender, payee (x402 payTo and settlement treasury). */
  readonly roles: { readonly facilitator: `0x${string}`; readonly dispenser: `0x${string}`; readonly spender: `0x${string}`; readonly payee: `0x${string}` };
  /** The dispenser's test USDC at start (atomic units). */
  readonly dispenserBalance: bigint;
  /** The settlement secret (`x-internal-secret`). */
  readonly internalSecret: string;
  /** Whether `internalSecret` was generated here (false: given by the caller). */
  readonly secretGenerated: boolean;
  /** Whether the chain was created now (false: loaded from the state file). */
  readonly fresh: boolean;
  /** The state file (undefined: nothing kept). */
  readonly statePath: string | undefined;
  /** `dev-chain.json` (undefined: nothing kept). */
  readonly recordPath: string | undefined;
  /** From spawning anvil to the token ready, in ms. */
  readonly readyMs: number;
  /** The gateway options of this chain: `chains`, `x402`, `dispenser` and `settlement`. */
  readonly gatewayOptions: Pick<GatewayOptions, "chains" | "x402" | "dispenser" | "settlement">;
  /** Stops anvil, which writes its state file first. Idempotent. */
  stop(): Promise<void>;
}

const role = (accounts: readonly AnvilAccount[], name: keyof typeof ROLE_INDEX): AnvilAccount => {
  const account = accounts[ROLE_INDEX[name]];
  if (!account) throw new Error(`anvil has no dev account ${ROLE_INDEX[name]} (the ${name})`);
  return account;
};

/**
 * Starts (or resumes) the dev chain of `dir`: stops an anvil a crashed server left behind, starts
 * anvil on 127.0.0.1 with a free port, deploys TestUSDC unless the loaded state has it, funds the
 * dispenser wallet, and writes `dev-chain.json`. Rejects (with anvil stopped) when any step fails,
 * or when another live server already runs the chain of `dir`.
 */
export async function startDevChain(options: StartDevChainOptions): Promise<DevChain> {
  const started = performance.now();
  const { dir } = options;
  const statePath = dir === undefined ? undefined : join(dir, "anvil-state.json");
  const record = dir === undefined ? undefined : readDevChainRecord(dir);
  if (dir !== undefined) mkdirSync(dir, { recursive: true });
  if (statePath !== undefined) {
    const stray = await stopStrayAnvil(record?.anvil, statePath);
    if (stray.kind === "in-use")
      throw new Error(
        `another server (pid ${stray.serverPid}) runs the dev chain of ${dir} (anvil pid ${stray.pid}); stop it, or give this one another --db directory`,
      );
  }

  const node: AnvilNode = await startAnvil({ chainId: DEV_CHAIN_ID, ...(statePath ? { statePath, stateIntervalSeconds: STATE_INTERVAL_SECONDS } : {}) });
  try {
    const accounts = node.accounts;
    const deployer = role(accounts, "deployer");
    const roles = {
      facilitator: role(accounts, "facilitator"),
      dispenser: role(accounts, "dispenser"),
      spender: role(accounts, "spender"),
      payee: role(accounts, "payee"),
    };
    const provisioned = await provisionTestUsdc({
      rpcUrl: node.rpcUrl,
      chainId: node.chainId,
      deployerKey: deployer.privateKey,
      dispenser: roles.dispenser.address,
      // Without a record, where the deployer's first transaction puts it: a chain resumed from its
      // state file then keeps its token even if dev-chain.json was deleted.
      knownUsdc: record?.chainId === node.chainId ? record.usdc : (getContractAddress({ from: deployer.address, nonce: 0n }).toLowerCase() as `0x${string}`),
    });
    // The record keeps the generated secret only: a secret given for one run is not remembered.
    const generatedSecret = record?.internalSecret ?? randomBytes(24).toString("base64url");
    const internalSecret = options.internalSecret ?? generatedSecret;
    const next: DevChainRecord = {
      version: 1,
      chainId: node.chainId,
      rpcUrl: node.rpcUrl,
      usdc: provisioned.usdc,
      internalSecret: generatedSecret,
      roles: { facilitator: roles.facilitator.address, dispenser: roles.dispenser.address, spender: roles.spender.address, payee: roles.payee.address },
      anvil: { pid: node.pid, serverPid: process.pid },
    };
    if (dir !== undefined) writeDevChainRecord(dir, next);
    const chainId = node.chainId;
    return {
      rpcUrl: node.rpcUrl,
      chainId,
      usdc: provisioned.usdc,
      roles: next.roles,
      dispenserBalance: provisioned.dispenserBalance,
      internalSecret,
      secretGenerated: options.internalSecret === undefined,
      fresh: provisioned.deployed,
      statePath,
      recordPath: dir === undefined ? undefined : join(dir, RECORD_FILE),
      readyMs: performance.now() - started,
      gatewayOptions: {
        chains: [{ chainId, name: "Tollgate dev chain (anvil)", rpcUrl: node.rpcUrl, usdc: provisioned.usdc }],
        x402: { payTo: roles.payee.address, networks: [{ chainId, facilitator: { type: "local", privateKey: roles.facilitator.privateKey } }] },
        dispenser: { chains: [{ chainId, privateKey: roles.dispenser.privateKey }] },
        settlement: { internalSecret, treasury: roles.payee.address, chains: [{ chainId, spenderPrivateKey: roles.spender.privateKey }] },
      },
      stop: () => node.stop(),
    };
  } catch (error) {
    await node.stop();
    throw error;
  }
}
