/**
 * The whole paid flow against `npm start`'s dev chain, offline, as a user's own script would do it:
 *
 *   1. claim test USDC from the dispenser for a fresh wallet;
 *   2. pay an embeddings call with x402, using the official client (`@x402/fetch` + `@x402/evm`);
 *   3. sign in with Ethereum, approve the settlement spender for the key's budget, create a service
 *      key and make a key-billed embeddings call;
 *   4. run a settlement batch, which moves the key's charges on-chain.
 *
 *   npm start                                  # in one terminal
 *   npx tsx examples/dev-chain-walk.ts         # in another: [gateway URL] [dev-chain.json]
 *
 * Defaults: http://127.0.0.1:8787 and ./data/dev-chain/dev-chain.json (the dev chain writes its RPC
 * URL, token address, spender and generated internal secret there; TOLLGATE_INTERNAL_SECRET wins
 * when the server was given one).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { createPublicClient, createTestClient, createWalletClient, defineChain, erc20Abi, http, parseEther, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";

/** What the walk needs from `dev-chain.json`. */
interface DevChainInfo {
  chainId: number;
  rpcUrl: string;
  usdc: Hex;
  internalSecret: string;
  roles: { spender: Hex; payee: Hex };
}

/** Options of {@link walkDevChain}. */
export interface WalkOptions {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8787`. */
  gatewayUrl: string;
  /** The dev chain's `dev-chain.json`. */
  devChainFile: string;
  /** The settlement secret, when the server was given one (else the generated one in `dev-chain.json`). */
  internalSecret?: string | undefined;
  /** Progress lines. @default nothing */
  log?: (line: string) => void;
}

/** The `x-request-id` each step sent (the gateway echoes it and logs it), and what each step returned. */
export interface WalkResult {
  wallet: Hex;
  requestIds: { claim: string; x402: string; key: string; keyCall: string; batch: string };
  claim: { txHash: string; balance: bigint };
  x402: { price: bigint; txHash: string; balance: bigint; embeddings: number };
  key: { keyId: string; budgetUsed: bigint };
  batch: { runId: string; successCount: number; failCount: number; results: { wallet: string; amountWei: string; txHash?: string; error?: string }[] };
  balanceAfterBatch: bigint;
}

const EMBEDDING = { model: "text-embedding-3-small", input: "a toll gate on a quiet road" };

/** Runs the four steps for a fresh wallet; throws on the first step that does not answer as expected. */
export async function walkDevChain(options: WalkOptions): Promise<WalkResult> {
  const log = options.log ?? (() => {});
  const gw = options.gatewayUrl.replace(/\/$/, "");
  const info = JSON.parse(readFileSync(options.devChainFile, "utf8")) as DevChainInfo;
  const secret = options.internalSecret ?? info.internalSecret;
  const tag = Math.random().toString(36).slice(2, 10);
  const requestIds = {
    claim: `walk-claim-${tag}`,
    x402: `walk-x402-${tag}`,
    key: `walk-key-${tag}`,
    keyCall: `walk-keycall-${tag}`,
    batch: `walk-batch-${tag}`,
  };
  const chain = defineChain({
    id: info.chainId,
    name: "dev chain",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [info.rpcUrl] } },
  });
  const publicClient = createPublicClient({ chain, transport: http(info.rpcUrl), pollingInterval: 50 });
  const account = privateKeyToAccount(generatePrivateKey());
  const wallet = account.address.toLowerCase() as Hex;
  const balance = () => publicClient.readContract({ address: info.usdc, abi: erc20Abi, functionName: "balanceOf", args: [account.address] });
  /** POSTs JSON with an `x-request-id`; throws unless the status is `expected`. */
  const call = async (path: string, init: { body: string; requestId: string; headers?: Record<string, string> }, expected: number) => {
    const headers = { "content-type": "application/json", "x-request-id": init.requestId, ...init.headers };
    const res = await fetch(`${gw}${path}`, { method: "POST", headers, body: init.body });
    const body = (await res.json()) as any;
    if (res.status !== expected) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(body)}`);
    return { res, body };
  };
  log(`wallet ${wallet} (fresh)`);

  // 1. The dispenser sends 1 test USDC (no gas needed from the wallet).
  const claimed = await call("/api/dispenser/claim", { body: JSON.stringify({ address: wallet, chainId: info.chainId }), requestId: requestIds.claim }, 200);
  const claim = { txHash: claimed.body.txHash as string, balance: await balance() };
  log(`1. dispenser: ${claimed.body.claimAmount} atomic units, tx ${claim.txHash}; balance ${claim.balance}`);

  // 2. x402: the official client answers the 402 with an EIP-3009 authorization (signed, gasless); the facilitator settles it.
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  client.setSpendControls({ allowedAssets: true }); // TestUSDC is not one of the client's known assets
  const pay = wrapFetchWithPayment(fetch, client);
  const before = claim.balance;
  const paid = await pay(`${gw}/v1/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-id": requestIds.x402 },
    body: JSON.stringify(EMBEDDING),
  });
  const paidBody = (await paid.json()) as any;
  if (paid.status !== 200) throw new Error(`x402 embeddings: ${paid.status} ${JSON.stringify(paidBody)}`);
  const settled = JSON.parse(Buffer.from(paid.headers.get("payment-response") ?? "", "base64").toString("utf8")) as { success: boolean; transaction: string };
  const x402 = {
    price: BigInt(paidBody.receipt.finalAmountWei),
    txHash: settled.transaction,
    balance: await balance(),
    embeddings: paidBody.data.length as number,
  };
  log(`2. x402: paid ${x402.price} atomic units for ${x402.embeddings} embedding(s), tx ${x402.txHash}; balance ${x402.balance}`);
  if (before - x402.balance !== x402.price) throw new Error(`x402 moved ${before - x402.balance}, not the price ${x402.price}`);

  // 3. A wallet session (Sign-In with Ethereum), a service key, and a call billed to the key.
  const nonce = await call(
    "/api/auth/nonce",
    { body: JSON.stringify({ address: account.address, chainId: info.chainId }), requestId: `walk-nonce-${tag}` },
    200,
  );
  const message = createSiweMessage({
    domain: new URL(gw).host,
    address: account.address,
    uri: `${gw}/`,
    version: "1",
    chainId: info.chainId,
    nonce: nonce.body.nonce,
    issuedAt: new Date(),
  });
  const session = await call(
    "/api/auth/verify",
    { body: JSON.stringify({ message, signature: await account.signMessage({ message }) }), requestId: `walk-verify-${tag}` },
    200,
  );
  const keyBody = { budgetLimit: "500000", expiresAt: Date.now() + 3_600_000, networkId: info.chainId, purpose: "session", name: "dev-chain walk" };
  // A key's budget is credit against the wallet's allowance to the settlement spender (and its
  // balance): approve the spender first, or the gateway refuses the key with 402 insufficient_funds.
  // Dev chain only: anvil_setBalance gives the fresh wallet gas for its approve (on a real chain it holds ETH).
  await createTestClient({ mode: "anvil", chain, transport: http(info.rpcUrl) }).setBalance({ address: account.address, value: parseEther("0.1") });
  const walletClient = createWalletClient({ chain, transport: http(info.rpcUrl), account, pollingInterval: 50 });
  const approveTx = await walletClient.writeContract({
    address: info.usdc,
    abi: erc20Abi,
    functionName: "approve",
    args: [info.roles.spender, BigInt(keyBody.budgetLimit)],
  });
  await publicClient.waitForTransactionReceipt({ hash: approveTx });
  const created = await call(
    "/api/keys",
    {
      headers: { authorization: `Bearer ${session.body.token}`, "x-session-user-address": wallet },
      body: JSON.stringify(keyBody),
      requestId: requestIds.key,
    },
    201,
  );
  const keyCall = await call(
    "/v1/embeddings",
    { headers: { authorization: `Bearer ${created.body.token}` }, body: JSON.stringify(EMBEDDING), requestId: requestIds.keyCall },
    200,
  );
  const key = { keyId: created.body.keyId as string, budgetUsed: BigInt(keyCall.res.headers.get("x-key-budget-used") ?? "0") };
  log(`3. key ${key.keyId}: a key-billed call charged ${key.budgetUsed} atomic units (queued for settlement)`);

  // 4. A batch moves the key's queued charges on-chain, with the allowance approved in step 3.
  const ran = await call("/api/settlement/batch", { headers: { "x-internal-secret": secret }, body: "{}", requestId: requestIds.batch }, 200);
  const batch = ran.body as WalkResult["batch"];
  const mine = batch.results.find((r) => r.wallet === wallet);
  log(
    `4. settlement batch ${batch.runId}: ${batch.successCount} settled, ${batch.failCount} failed; this wallet: ${mine ? `${mine.amountWei} atomic units, tx ${mine.txHash ?? mine.error}` : "nothing queued"}`,
  );
  return { wallet, requestIds, claim, x402, key, batch, balanceAfterBatch: await balance() };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const [gatewayUrl = "http://127.0.0.1:8787", devChainFile = "data/dev-chain/dev-chain.json"] = process.argv.slice(2);
  walkDevChain({ gatewayUrl, devChainFile, internalSecret: process.env["TOLLGATE_INTERNAL_SECRET"] || undefined, log: (line) => console.log(line) }).then(
    () => console.log("done: every step answered as expected"),
    (error: unknown) => {
      console.error(`dev-chain walk failed: ${(error as Error).message}`);
      process.exitCode = 1;
    },
  );
}
