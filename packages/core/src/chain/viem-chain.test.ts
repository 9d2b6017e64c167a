import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPublicClient, createWalletClient, http } from "viem";
import { foundry } from "viem/chains";
import { privateKeyToAccount } from "viem/accounts";
import { approveUsdc, deployTestUsdc, mintUsdc, startAnvil, type AnvilNode } from "@tollgate/testing";
import {
  USDC_ABI,
  ChainError,
  createViemChain,
  isNonceConflict,
  isRefusal,
  randomNonce,
  signTransferAuthorization,
  verifyTransferAuthorization,
  type Address,
  type Chain,
  type TokenDomain,
  type TransferAuthorization,
} from "./index.js";

let node: AnvilNode;
let usdc: Address;
let chain: Chain; // the gateway wallet: account 1
let domain: TokenDomain;

const acct = (i: number) => {
  const a = node.accounts[i];
  if (!a) throw new Error(`no account ${i}`);
  return a;
};
const now = () => BigInt(Math.floor(Date.now() / 1000));

async function expectChainError(promise: Promise<unknown>, reason: RegExp): Promise<ChainError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a ChainError");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ChainError);
  expect((error as ChainError).reason).toMatch(reason);
  return error as ChainError;
}

beforeAll(async () => {
  node = await startAnvil();
  usdc = await deployTestUsdc(node);
  chain = createViemChain({ rpcUrl: node.rpcUrl, chainId: node.chainId, usdc, privateKey: acct(1).privateKey });
  domain = await chain.tokenDomain();
});

afterAll(async () => {
  await node?.stop();
});

describe("createViemChain against anvil + TestUSDC", () => {
  it("exposes lower-case addresses and the USDC EIP-712 domain", () => {
    expect(chain.chainId).toBe(31337);
    expect(chain.usdc).toBe(usdc.toLowerCase());
    expect(chain.account).toBe(acct(1).address.toLowerCase());
    expect(domain).toEqual({ name: "USD Coin", version: "2", chainId: 31337, verifyingContract: usdc });
  });

  it("balanceOf reflects mints", async () => {
    const who = acct(5).address;
    expect(await chain.balanceOf(who)).toBe(0n);
    await mintUsdc(node, usdc, who, 1_234_567n);
    expect(await chain.balanceOf(who)).toBe(1_234_567n);
  });

  it("transfer moves exactly the amount; overspending reverts with the reason", async () => {
    await mintUsdc(node, usdc, acct(1).address, 10_000_000n);
    const to = acct(6).address;
    const before = await chain.balanceOf(acct(1).address);
    const hash = await chain.transfer(to, 2_500_000n);
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await chain.balanceOf(to)).toBe(2_500_000n);
    expect(await chain.balanceOf(acct(1).address)).toBe(before - 2_500_000n);
    const overspent = await expectChainError(chain.transfer(to, 10n ** 18n), /ERC20: transfer amount exceeds balance/);
    // Its simulation reverted: nothing was sent, so nothing can land later.
    expect(overspent.nothingMoved).toBe(true);
  });

  it("transferFrom needs an allowance, then moves exactly the amount", async () => {
    const payer = acct(2);
    const to = acct(7).address;
    await mintUsdc(node, usdc, payer.address, 5_000_000n);
    const error = await expectChainError(chain.transferFrom(payer.address, to, 1_000_000n), /^ERC20: insufficient allowance$/);
    expect(error.message).toContain("transferFrom");
    await approveUsdc(node, usdc, payer.privateKey, acct(1).address, 3_000_000n);
    expect(await chain.allowance(payer.address, acct(1).address)).toBe(3_000_000n);
    await chain.transferFrom(payer.address, to, 1_000_000n);
    expect(await chain.balanceOf(to)).toBe(1_000_000n);
    expect(await chain.balanceOf(payer.address)).toBe(4_000_000n);
    expect(await chain.allowance(payer.address, acct(1).address)).toBe(2_000_000n);
  });

  describe("transferWithAuthorization (EIP-3009)", () => {
    const payerKey = () => acct(3).privateKey;
    const auth = (overrides: Partial<TransferAuthorization> = {}): TransferAuthorization => ({
      from: acct(3).address,
      to: acct(8).address,
      value: 750_000n,
      validAfter: 0n,
      validBefore: now() + 600n,
      nonce: randomNonce(),
      ...overrides,
    });

    beforeAll(async () => {
      await mintUsdc(node, usdc, acct(3).address, 100_000_000n);
    });

    it("moves exactly the value and marks the nonce used; a replay reverts", async () => {
      const a = auth();
      const signature = await signTransferAuthorization(privateKeyToAccount(payerKey()), domain, a);
      const fromBefore = await chain.balanceOf(a.from);
      const toBefore = await chain.balanceOf(a.to);
      expect(await chain.authorizationUsed(a.from, a.nonce)).toBe(false);
      await chain.transferWithAuthorization(a, signature);
      expect(await chain.balanceOf(a.from)).toBe(fromBefore - a.value);
      expect(await chain.balanceOf(a.to)).toBe(toBefore + a.value);
      expect(await chain.authorizationUsed(a.from, a.nonce)).toBe(true);
      const replay = await expectChainError(chain.transferWithAuthorization(a, signature), /used or canceled/);
      expect(replay.nothingMoved).toBe(true);
    });

    it("the token also accepts the bytes-signature overload (what some x402 facilitators call)", async () => {
      const a = auth();
      const signature = await signTransferAuthorization(privateKeyToAccount(payerKey()), domain, a);
      const transport = http(node.rpcUrl);
      const wallet = createWalletClient({ chain: foundry, transport, account: privateKeyToAccount(acct(4).privateKey) });
      const reader = createPublicClient({ chain: foundry, transport, pollingInterval: 50 });
      const toBefore = await chain.balanceOf(a.to);
      const hash = await wallet.writeContract({
        address: usdc,
        abi: USDC_ABI,
        functionName: "transferWithAuthorization",
        args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature],
      });
      expect((await reader.waitForTransactionReceipt({ hash })).status).toBe("success");
      expect(await chain.balanceOf(a.to)).toBe(toBefore + a.value);
      expect(await chain.authorizationUsed(a.from, a.nonce)).toBe(true);
      const replay = await expectChainError(chain.transferWithAuthorization(a, signature), /used or canceled/);
      expect(replay.nothingMoved).toBe(true);
    });

    it("rejects an expired authorization", async () => {
      const a = auth({ validBefore: now() - 60n });
      const signature = await signTransferAuthorization(privateKeyToAccount(payerKey()), domain, a);
      await expectChainError(chain.transferWithAuthorization(a, signature), /authorization is expired/);
    });

    it("rejects a not-yet-valid authorization", async () => {
      const a = auth({ validAfter: now() + 3_600n });
      const signature = await signTransferAuthorization(privateKeyToAccount(payerKey()), domain, a);
      await expectChainError(chain.transferWithAuthorization(a, signature), /not yet valid/);
    });

    it("rejects a signature by someone other than `from`", async () => {
      const a = auth();
      const signature = await signTransferAuthorization(privateKeyToAccount(acct(4).privateKey), domain, a);
      await expectChainError(chain.transferWithAuthorization(a, signature), /^FiatTokenV2: invalid signature$/);
      expect(await chain.authorizationUsed(a.from, a.nonce)).toBe(false);
    });

    it("verifyTransferAuthorization: true for the signer, false when tampered, other signer or garbage", async () => {
      const a = auth();
      const signature = await signTransferAuthorization(privateKeyToAccount(payerKey()), domain, a);
      expect(await verifyTransferAuthorization(domain, a, signature)).toBe(true);
      expect(await verifyTransferAuthorization(domain, { ...a, value: a.value + 1n }, signature)).toBe(false);
      expect(await verifyTransferAuthorization({ ...domain, chainId: 1 }, a, signature)).toBe(false);
      const other = await signTransferAuthorization(privateKeyToAccount(acct(4).privateKey), domain, a);
      expect(await verifyTransferAuthorization(domain, a, other)).toBe(false);
      expect(await verifyTransferAuthorization(domain, a, "0xdeadbeef")).toBe(false);
      expect(await verifyTransferAuthorization(domain, a, `0x${"00".repeat(65)}`)).toBe(false);
      expect(await verifyTransferAuthorization(domain, a, "0xnothex" as `0x${string}`)).toBe(false);
    });
  });

  it("serializes concurrent writes from one wallet (10 parallel transfers all land)", async () => {
    const sender = createViemChain({ rpcUrl: node.rpcUrl, chainId: node.chainId, usdc, privateKey: acct(9).privateKey });
    await mintUsdc(node, usdc, acct(9).address, 1_000n);
    const to = acct(0).address;
    const before = await sender.balanceOf(to);
    const hashes = await Promise.all(Array.from({ length: 10 }, (_, i) => sender.transfer(to, BigInt(i + 1))));
    expect(new Set(hashes).size).toBe(10);
    expect(await sender.balanceOf(to)).toBe(before + 55n);
    expect(await sender.balanceOf(acct(9).address)).toBe(1_000n - 55n);
  });

  it("several Chain instances sharing one wallet (several gateway processes) all land their writes", async () => {
    const senders = [0, 1, 2].map(() => createViemChain({ rpcUrl: node.rpcUrl, chainId: node.chainId, usdc, privateKey: acct(8).privateKey }));
    await mintUsdc(node, usdc, acct(8).address, 1_000n);
    const to = acct(7).address;
    const before = await senders[0]!.balanceOf(to);
    const funds = await senders[0]!.balanceOf(acct(8).address);
    const hashes = await Promise.all(Array.from({ length: 12 }, (_, i) => senders[i % 3]!.transfer(to, BigInt(i + 1))));
    expect(new Set(hashes).size).toBe(12);
    expect(await senders[0]!.balanceOf(to)).toBe(before + 78n);
    expect(await senders[0]!.balanceOf(acct(8).address)).toBe(funds - 78n);
  });

  it("isNonceConflict: nonce refusals are retried, an accepted duplicate or a revert is not", () => {
    expect(isNonceConflict(new Error("Nonce provided for the transaction (5) is lower than the current nonce of the account."))).toBe(true);
    expect(isNonceConflict(new Error("replacement transaction underpriced"))).toBe(true);
    expect(isNonceConflict(new Error("already known"))).toBe(false);
    expect(isNonceConflict(new Error("execution reverted: ERC20: transfer amount exceeds balance"))).toBe(false);
  });

  it("isRefusal: a node's lasting refusal (funds, gas, fee, signature) is one; a timeout, an internal error or an accepted duplicate is not", () => {
    for (const refused of [
      "insufficient funds for gas * price + value",
      "intrinsic gas too low",
      "max fee per gas less than block base fee",
      "transaction underpriced",
      "invalid sender",
    ])
      expect(isRefusal(new Error(refused)), refused).toBe(true);
    for (const unsure of ["request timed out", "internal error", "already known", "HTTP request failed. Status: 502", "nonce too low"])
      expect(isRefusal(new Error(unsure)), unsure).toBe(false);
  });

  it("a failed write does not block the queue", async () => {
    const results = await Promise.allSettled([chain.transfer(acct(6).address, 10n ** 18n), chain.transfer(acct(6).address, 1n)]);
    expect(results[0]?.status).toBe("rejected");
    expect(results[1]?.status).toBe("fulfilled");
  });

  it("a chain without a privateKey reads but rejects writes clearly", async () => {
    const readOnly = createViemChain({ rpcUrl: node.rpcUrl, chainId: node.chainId, usdc });
    expect(readOnly.account).toBeUndefined();
    expect(await readOnly.balanceOf(acct(5).address)).toBe(1_234_567n);
    await expect(readOnly.transfer(acct(6).address, 1n)).rejects.toThrow(/no signing wallet/);
    await expect(readOnly.transfer(acct(6).address, 1n)).rejects.toBeInstanceOf(ChainError);
  });

  it("an unreachable RPC becomes a ChainError", async () => {
    const dead = createViemChain({ rpcUrl: "http://127.0.0.1:1", chainId: 31337, usdc, timeoutMs: 500 });
    await expect(dead.balanceOf(acct(5).address)).rejects.toBeInstanceOf(ChainError);
  });
});
