/**
 * Test harness: a real local EVM node and the test USDC token. `startAnvil` is `@tollgate/node`'s
 * (the one the dev chain of `tollgate serve` uses): each call spawns its own anvil on an
 * OS-assigned loopback port, so parallel vitest files never collide. The contracts deployed here
 * are the build-time compiled ones `@tollgate/core` ships (`TEST_USDC_CONTRACT`,
 * `TEST_SMART_WALLET_CONTRACT`), so tests need no Solidity compiler.
 */
import { createPublicClient, createWalletClient, defineChain, http, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { TEST_SMART_WALLET_CONTRACT, TEST_USDC_CONTRACT, USDC_ABI } from "@tollgate/core";
import type { AnvilAccount, AnvilNode } from "@tollgate/node";

export { startAnvil, type AnvilAccount, type AnvilNode, type StartAnvilOptions } from "@tollgate/node";

/** The well-known anvil/hardhat dev keys ("test test ... junk", m/44'/60'/0'/0/i). */
const DEV_PRIVATE_KEYS: readonly Hex[] = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
  "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
  "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
  "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
  "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
  "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
];

/** The same ten accounts anvil funds by default (10 000 ETH each), known before any node starts. */
export const ANVIL_ACCOUNTS: readonly AnvilAccount[] = DEV_PRIVATE_KEYS.map((privateKey) => ({
  address: privateKeyToAccount(privateKey).address.toLowerCase() as Address,
  privateKey,
}));

function clients(node: AnvilNode, privateKey: Hex) {
  const chain = defineChain({
    id: node.chainId,
    name: "anvil",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [node.rpcUrl] } },
  });
  const transport = http(node.rpcUrl);
  const account = privateKeyToAccount(privateKey);
  return {
    publicClient: createPublicClient({ chain, transport, pollingInterval: 50 }),
    walletClient: createWalletClient({ chain, transport, account, pollingInterval: 50 }),
  };
}

function defaultKey(node: AnvilNode): Hex {
  const first = node.accounts[0];
  if (!first) throw new Error("anvil node has no accounts");
  return first.privateKey;
}

/** Deploys TestUSDC (deployer: account 0 unless given). Resolves with the lower-case token address. */
export async function deployTestUsdc(node: AnvilNode, options: { deployerKey?: Hex } = {}): Promise<Address> {
  const { abi, bytecode } = TEST_USDC_CONTRACT;
  const { publicClient, walletClient } = clients(node, options.deployerKey ?? defaultKey(node));
  const hash = await walletClient.deployContract({ abi, bytecode });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`TestUSDC deployment failed (${hash})`);
  return receipt.contractAddress.toLowerCase() as Address;
}

/** Deploys a TestSmartWallet (EIP-1271: valid when `owner` signed) and returns its address, lower-case. */
export async function deployTestSmartWallet(node: AnvilNode, owner: Address, options: { deployerKey?: Hex } = {}): Promise<Address> {
  const { abi, bytecode } = TEST_SMART_WALLET_CONTRACT;
  const { publicClient, walletClient } = clients(node, options.deployerKey ?? defaultKey(node));
  const hash = await walletClient.deployContract({ abi, bytecode, args: [owner] });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`TestSmartWallet deployment failed (${hash})`);
  return receipt.contractAddress.toLowerCase() as Address;
}

async function send(
  node: AnvilNode,
  privateKey: Hex,
  usdc: Address,
  call: { functionName: "mint" | "approve" | "transfer"; args: readonly [Address, bigint] },
): Promise<Hex> {
  const { publicClient, walletClient } = clients(node, privateKey);
  const hash = await walletClient.writeContract({ address: usdc, abi: USDC_ABI, ...call });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`${call.functionName} failed (${hash})`);
  return hash;
}

/** Mints `amount` atomic units of the test token to `to` (sent from account 0 unless `fromKey`). */
export function mintUsdc(node: AnvilNode, usdc: Address, to: Address, amount: bigint, options: { fromKey?: Hex } = {}): Promise<Hex> {
  return send(node, options.fromKey ?? defaultKey(node), usdc, { functionName: "mint", args: [to, amount] });
}

/** `approve(spender, amount)` from the owner of `ownerKey` (for `transferFrom` tests). */
export function approveUsdc(node: AnvilNode, usdc: Address, ownerKey: Hex, spender: Address, amount: bigint): Promise<Hex> {
  return send(node, ownerKey, usdc, { functionName: "approve", args: [spender, amount] });
}

/** Sets the node's next block timestamp and mines a block (for validAfter/validBefore tests). */
export async function setNextBlockTimestamp(node: AnvilNode, timestamp: bigint | number): Promise<void> {
  await anvilRpc(node, "evm_setNextBlockTimestamp", [Number(timestamp)]);
  await anvilRpc(node, "evm_mine", []);
}

/** One JSON-RPC call to the node (anvil's own methods too: `evm_mine`, `evm_setAutomine`, …); its result. Throws on an RPC error. */
export async function anvilRpc(node: AnvilNode, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(node.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** A fresh account (its key and address) that the node funds with 10 ETH for gas. */
export async function fundedAccount(node: AnvilNode): Promise<{ privateKey: Hex; address: Address }> {
  const privateKey = generatePrivateKey();
  const address = privateKeyToAccount(privateKey).address;
  await anvilRpc(node, "anvil_setBalance", [address, "0x8ac7230489e80000"]);
  return { privateKey, address };
}
