/**
 * Chain tests against a real anvil behind a fault-injecting JSON-RPC proxy: the node, the proxy,
 * another "node" of a load-balanced RPC, and the few anvil calls those tests share.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Gateway } from "@tollgate/core";
import { afterAll, afterEach, beforeAll } from "vitest";
import { anvilRpc, approveUsdc, fundedAccount } from "./anvil.js";

/** An account the node funded with gas. */
type FundedAccount = Awaited<ReturnType<typeof fundedAccount>>;
import { startUsdcNode, type UsdcNode } from "./gateway-suite-dispenser.js";
import { startRpcProxy, type RpcProxy } from "./rpc-proxy.js";

/**
 * A JSON-RPC proxy that stands for ANOTHER node of a load-balanced RPC: it has not seen the
 * transaction another gateway process just sent to the first node (its "pending" nonce is the
 * "latest" one), and it suggests its own, higher priority fee (`tipFactor`). Optionally caps eth_getLogs ranges.
 */
export async function startOtherRpcNode(target: string, opts: { tipFactor?: bigint; hidePending?: boolean; maxLogRange?: bigint } = {}) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const msg = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: unknown; method: string; params: any[] };
      msg.params ??= [];
      const reply = (v: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(v));
      if (opts.hidePending && msg.method === "eth_getTransactionCount" && msg.params[1] === "pending") msg.params[1] = "latest";
      if (opts.maxLogRange !== undefined && msg.method === "eth_getLogs") {
        const f = msg.params[0] as { fromBlock?: string; toBlock?: string };
        if (f.fromBlock && f.toBlock && BigInt(f.toBlock) - BigInt(f.fromBlock) > opts.maxLogRange)
          return reply({ jsonrpc: "2.0", id: msg.id, error: { code: -32005, message: `query exceeds max block range ${opts.maxLogRange}` } });
      }
      const upstream = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(msg) });
      const text = await upstream.text();
      let body: { result?: unknown };
      try {
        body = JSON.parse(text) as { result?: unknown };
      } catch {
        return void res.writeHead(upstream.status, { "content-type": "text/plain" }).end(text);
      }
      const times = (hex: string) => `0x${(BigInt(hex) * opts.tipFactor!).toString(16)}`;
      if (opts.tipFactor && msg.method === "eth_maxPriorityFeePerGas" && typeof body.result === "string") body.result = times(body.result);
      // viem >= 2.5x fills nonce and fees with eth_fillTransaction: this node fills them from ITS view.
      if (msg.method === "eth_fillTransaction" && body.result && typeof body.result === "object") {
        const tx = (body.result as { tx: Record<string, string> }).tx;
        if (opts.hidePending) {
          const latest = await fetch(target, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getTransactionCount", params: [tx.from, "latest"] }),
          });
          tx.nonce = ((await latest.json()) as { result: string }).result;
          // anvil estimated the gas on its pending state (the first transfer already credited the payee): B's node estimates without it.
          tx.gas = `0x${(BigInt(tx.gas!) * 2n).toString(16)}`;
        }
        if (opts.tipFactor) {
          tx.maxFeePerGas = times(tx.maxFeePerGas!);
          tx.maxPriorityFeePerGas = times(tx.maxPriorityFeePerGas!);
        }
      }
      reply(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A transaction waiting in anvil's pool. */
export interface PooledTransaction {
  readonly hash: `0x${string}`;
  readonly to: `0x${string}`;
  readonly input: `0x${string}`;
  readonly nonce: string;
  readonly gas: string;
}

/** What {@link chainFaultsPerSuite} gives its tests. */
export interface ChainFaults {
  /** The USDC node (started by `beforeAll`). */
  readonly usdc: UsdcNode;
  /** The fault proxy in front of it; its faults and hooks are reset after each test (and automine turned back on). */
  readonly proxy: RpcProxy;
  /** One JSON-RPC call straight to anvil. */
  anvil(method: string, params?: unknown[]): Promise<unknown>;
  /** A fresh random address, lower-case. */
  someone(): `0x${string}`;
  /** The `pending` transaction count of `address`. */
  pendingCount(address: string): Promise<bigint>;
  /** The first transaction of `sender` waiting in the pool, if any. */
  pooled(sender: string): Promise<PooledTransaction | undefined>;
  /**
   * A settlement's three parties: a fresh spender with gas, a fresh payer holding 10 USDC that
   * approved the spender for 1 USDC, and a fresh treasury address.
   */
  settlementParties(): Promise<{ spender: FundedAccount; payer: FundedAccount; treasury: `0x${string}` }>;
  /** A wallet's "speed up": the pooled transaction of the key's account sent again (same call and nonce) at 100 gwei; its hash. */
  speedUp(privateKey: Hex): Promise<Hex>;
}

/**
 * Queues charges through `gateway.fetch` as a second process would: a session key of `payer` on
 * `chainId` (made with the internal `secret`, expiring a day after `now`, the gateway's clock),
 * then one paid call settled at each of `amounts`.
 */
export async function queueCharges(
  gateway: Gateway,
  { secret, payer, chainId, amounts, now }: { secret: string; payer: string; chainId: number; amounts: readonly number[]; now: number },
): Promise<void> {
  const call = async (path: string, headers: Record<string, string>, body: unknown) => {
    const res = await gateway.fetch(
      new Request(`http://gateway.test${path}`, {
        method: "POST",
        headers: Object.assign({ "content-type": "application/json" }, headers),
        body: JSON.stringify(body),
      }),
    );
    return { status: res.status, body: (await res.json()) as { token?: string; paymentIntentId?: string } };
  };
  const key = await call(
    "/api/keys",
    { "x-session-user-address": payer.toLowerCase(), "x-internal-secret": secret },
    { budgetLimit: "100000", expiresAt: now + 86_400_000, networkId: chainId, purpose: "session" },
  );
  if (key.status !== 201) throw new Error(`queueCharges: key creation answered ${key.status}`);
  for (const amount of amounts) {
    const intent = { service: "inference", action: "chat", resource: "https://x.test", method: "POST", maxAmountWei: String(amount + 100) };
    const prepared = await call("/api/payments/prepare", { authorization: `Bearer ${key.body.token}`, "x-network-id": String(chainId) }, intent);
    const settled = await call("/api/payments/settle", {}, { paymentIntentId: prepared.body.paymentIntentId, finalAmountWei: String(amount) });
    if (settled.status !== 200) throw new Error(`queueCharges: settle answered ${settled.status}`);
  }
}

/** Registers the hooks of a chain-fault suite in the current describe block (see {@link ChainFaults}). */
export function chainFaultsPerSuite(): ChainFaults {
  let usdc: UsdcNode | undefined;
  let proxy: RpcProxy | undefined;
  beforeAll(async () => {
    usdc = await startUsdcNode();
    proxy = await startRpcProxy(usdc.node.rpcUrl);
  }, 60_000);
  afterEach(async () => {
    Object.assign(proxy!.state, { lose: 0, drop: 0, rpcError: 0, resend: 0, lag: 0, lagReceipts: 0 });
    proxy!.hooks.length = 0;
    await anvilRpc(usdc!.node, "evm_setAutomine", [true]);
  });
  afterAll(async () => {
    await proxy?.close();
    await usdc?.node.stop();
  });
  const anvil = (method: string, params: unknown[] = []) => anvilRpc(usdc!.node, method, params);
  const pooled = async (sender: string): Promise<PooledTransaction | undefined> => {
    const pool = (await anvil("txpool_content")) as { pending: Record<string, Record<string, PooledTransaction>> };
    const own = Object.entries(pool.pending).find(([from]) => from.toLowerCase() === sender.toLowerCase())?.[1];
    return Object.values(own ?? {})[0];
  };
  return {
    get usdc() {
      if (!usdc) throw new Error("the USDC node is started by beforeAll; read it inside a test");
      return usdc;
    },
    get proxy() {
      if (!proxy) throw new Error("the proxy is started by beforeAll; read it inside a test");
      return proxy;
    },
    anvil,
    someone: () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as `0x${string}`,
    pendingCount: async (address) => BigInt((await anvil("eth_getTransactionCount", [address, "pending"])) as string),
    pooled,
    async settlementParties() {
      const [spender, payer] = [await fundedAccount(usdc!.node), await fundedAccount(usdc!.node)];
      await usdc!.mint(payer.address, 10_000_000n);
      await approveUsdc(usdc!.node, usdc!.chain.usdc as `0x${string}`, payer.privateKey, spender.address, 1_000_000n);
      return { spender, payer, treasury: privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as `0x${string}` };
    },
    async speedUp(privateKey) {
      const account = privateKeyToAccount(privateKey);
      const stuck = await pooled(account.address);
      if (!stuck) throw new Error(`speedUp: no transaction of ${account.address} waits in the pool`);
      const wallet = createWalletClient({ account, transport: http(usdc!.node.rpcUrl) });
      const fees = { maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 50_000_000_000n };
      return wallet.sendTransaction(
        Object.assign({ chain: null, to: stuck.to, data: stuck.input, nonce: Number(BigInt(stuck.nonce)), gas: BigInt(stuck.gas) }, fees),
      );
    },
  };
}
