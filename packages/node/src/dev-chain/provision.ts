/**
 * Puts the test token on a dev chain: deploys TestUSDC from the checked-in bytecode (unless the
 * chain already holds it, e.g. loaded from its state file) and keeps the dispenser wallet funded.
 */
import { TEST_USDC_CONTRACT } from "@tollgate/core";
import { createPublicClient, createWalletClient, defineChain, http, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { rpcCall } from "./anvil.js";

/** What the dispenser wallet is given: 1 000 000 test USDC (a million 1-USDC claims). */
export const DISPENSER_FUNDS = 1_000_000_000_000n;
/** Below this (1 000 test USDC) the dispenser is topped up to {@link DISPENSER_FUNDS} at start. */
export const DISPENSER_LOW_WATER = 1_000_000_000n;

/** Options of {@link provisionTestUsdc}. */
export interface ProvisionOptions {
  readonly rpcUrl: string;
  readonly chainId: number;
  /** Deploys the token and mints (TestUSDC minting is open); needs gas. */
  readonly deployerKey: Hex;
  /** The dispenser wallet to fund. */
  readonly dispenser: `0x${string}`;
  /** Where the token was last time: reused when the chain still has code there. */
  readonly knownUsdc?: `0x${string}` | undefined;
}

/** The outcome of {@link provisionTestUsdc}. */
export interface Provisioned {
  /** Lower-case token address. */
  readonly usdc: `0x${string}`;
  /** Whether the token was deployed now (false: found on the chain). */
  readonly deployed: boolean;
  /** The dispenser's balance after any top-up (atomic units). */
  readonly dispenserBalance: bigint;
}

/** Deploys (or finds) TestUSDC and tops the dispenser up. Rejects when a transaction fails. */
export async function provisionTestUsdc(options: ProvisionOptions): Promise<Provisioned> {
  const chain = defineChain({
    id: options.chainId,
    name: "Tollgate dev chain",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [options.rpcUrl] } },
  });
  const transport = http(options.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 20 });
  const walletClient = createWalletClient({ chain, transport, account: privateKeyToAccount(options.deployerKey), pollingInterval: 20 });
  const mined = async (hash: Hex, what: string) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== "success") throw new Error(`${what} failed on the dev chain (transaction ${hash})`);
    return receipt;
  };

  let usdc = options.knownUsdc;
  const found = usdc !== undefined && (await rpcCall<string>(options.rpcUrl, "eth_getCode", [usdc, "latest"])) !== "0x";
  if (!found) {
    const receipt = await mined(
      await walletClient.deployContract({ abi: TEST_USDC_CONTRACT.abi, bytecode: TEST_USDC_CONTRACT.bytecode }),
      "deploying TestUSDC",
    );
    if (!receipt.contractAddress) throw new Error("deploying TestUSDC produced no contract address");
    usdc = receipt.contractAddress.toLowerCase() as `0x${string}`;
  }
  const token = { address: usdc!, abi: TEST_USDC_CONTRACT.abi } as const;
  let balance = await publicClient.readContract({ ...token, functionName: "balanceOf", args: [options.dispenser] });
  if (balance < DISPENSER_LOW_WATER) {
    await mined(
      await walletClient.writeContract({ ...token, functionName: "mint", args: [options.dispenser, DISPENSER_FUNDS - balance] }),
      "funding the dispenser",
    );
    balance = DISPENSER_FUNDS;
  }
  return { usdc: usdc!, deployed: !found, dispenserBalance: balance };
}
