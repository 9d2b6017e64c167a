/**
 * Test harness: a real local EVM node (anvil, from the `@foundry-rs/anvil` npm package) and the
 * test USDC token. Each call to `startAnvil` spawns its own anvil on its own OS-assigned port
 * (`--port 0`; the bound port is parsed from anvil's "Listening on" line), so parallel vitest files
 * never collide. Children are killed on `stop()` and when the process exits.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createPublicClient, createWalletClient, defineChain, http, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { USDC_ABI } from "@tollgate/core";
import { compileTestContract, compileTestUsdc } from "./test-usdc.js";

export interface AnvilAccount {
  /** Lower-case address. */
  readonly address: Address;
  readonly privateKey: Hex;
}

export interface AnvilNode {
  readonly rpcUrl: string;
  readonly chainId: number;
  readonly port: number;
  /** anvil's 10 default dev accounts (test mnemonic), each funded with 10 000 ETH. */
  readonly accounts: readonly AnvilAccount[];
  stop(): Promise<void>;
}

export interface StartAnvilOptions {
  /** Default 31337. */
  readonly chainId?: number;
  /** Block time in seconds; default: automine (a block per transaction). */
  readonly blockTime?: number;
  /** Extra anvil CLI arguments. */
  readonly args?: readonly string[];
  /** How long to wait for the node to answer (default 20 000 ms). */
  readonly startTimeoutMs?: number;
}

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

export const ANVIL_ACCOUNTS: readonly AnvilAccount[] = DEV_PRIVATE_KEYS.map((privateKey) => ({
  address: privateKeyToAccount(privateKey).address.toLowerCase() as Address,
  privateKey,
}));

/**
 * The anvil binary: the platform package's `bin/anvil` (what `@foundry-rs/anvil/bin.mjs` runs),
 * else `node_modules/.bin/anvil` (the JS wrapper), else `ANVIL_BIN`, else `anvil` on PATH.
 */
export function anvilBinaryPath(): string {
  if (process.env["ANVIL_BIN"]) return process.env["ANVIL_BIN"];
  const require = createRequire(import.meta.url);
  const exe = process.platform === "win32" ? "anvil.exe" : "anvil";
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  try {
    const bin = join(dirname(require.resolve(`${pkg}/package.json`)), "bin", exe);
    if (existsSync(bin)) return bin;
  } catch {
    // platform package not resolvable from here
  }
  try {
    const wrapperDir = dirname(require.resolve("@foundry-rs/anvil/package.json"));
    const bin = join(wrapperDir, "..", ".bin", exe);
    if (existsSync(bin)) return bin;
  } catch {
    // wrapper package not resolvable
  }
  return exe;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const child of running) child.kill("SIGKILL");
  });
}

/** Starts a fresh anvil on 127.0.0.1 with an OS-assigned port; resolves once `eth_chainId` answers. */
export async function startAnvil(options: StartAnvilOptions = {}): Promise<AnvilNode> {
  const chainId = options.chainId ?? 31337;
  const startTimeout = options.startTimeoutMs ?? 20_000;
  const args = ["--host", "127.0.0.1", "--port", "0", "--chain-id", String(chainId), "--accounts", "10"];
  if (options.blockTime !== undefined) args.push("--block-time", String(options.blockTime));
  args.push(...(options.args ?? []));

  installExitHook();
  const child = spawn(anvilBinaryPath(), args, { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  exited.then(() => running.delete(child));

  let output = "";
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 2_000);
      await exited;
      clearTimeout(timer);
    })());

  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`anvil did not start within ${startTimeout} ms:\n${output}`)), startTimeout);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /Listening on [^\s:]+:(\d+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      };
      child.stdout!.on("data", onData);
      child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(new Error(`could not spawn anvil (${anvilBinaryPath()}): ${error.message}`));
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`anvil exited early (code ${code}, signal ${signal}):\n${output}`));
      });
    });
    // Keep draining stdout so anvil never blocks on a full pipe; drop what it says after start.
    child.stdout!.removeAllListeners("data");
    child.stderr!.removeAllListeners("data");
    child.stdout!.resume();
    child.stderr!.resume();

    const rpcUrl = `http://127.0.0.1:${port}`;
    await waitForRpc(rpcUrl, chainId, startTimeout);
    return { rpcUrl, chainId, port, accounts: ANVIL_ACCOUNTS, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForRpc(rpcUrl: string, chainId: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
        signal: AbortSignal.timeout(1_000),
      });
      const body = (await response.json()) as { result?: string };
      if (body.result !== undefined && Number(body.result) === chainId) return;
      lastError = new Error(`unexpected eth_chainId answer: ${JSON.stringify(body)}`);
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`anvil RPC at ${rpcUrl} did not answer eth_chainId: ${String(lastError)}`);
}

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
  const { abi, bytecode } = compileTestUsdc();
  const { publicClient, walletClient } = clients(node, options.deployerKey ?? defaultKey(node));
  const hash = await walletClient.deployContract({ abi, bytecode });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`TestUSDC deployment failed (${hash})`);
  return receipt.contractAddress.toLowerCase() as Address;
}

/** Deploys a TestSmartWallet (EIP-1271: valid when `owner` signed) and returns its address, lower-case. */
export async function deployTestSmartWallet(node: AnvilNode, owner: Address, options: { deployerKey?: Hex } = {}): Promise<Address> {
  const { abi, bytecode } = compileTestContract("TestSmartWallet");
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
  const rpc = async (method: string, params: unknown[]) => {
    const response = await fetch(node.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const body = (await response.json()) as { error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
  };
  await rpc("evm_setNextBlockTimestamp", [Number(timestamp)]);
  await rpc("evm_mine", []);
}
