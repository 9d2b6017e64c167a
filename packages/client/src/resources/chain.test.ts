/**
 * The routes that move USDC, against a real gateway on a port and one anvil node with the test
 * USDC: `client.dispenser`, `client.settlement.batch`, and a media call paid with x402 — the
 * client exposes the decoded challenge of the 402, an official x402 client signs it, and the
 * signature is sent as `paymentSignature`.
 */
import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired as OfficialPaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { approveUsdc, startUsdcNode, type UsdcNode } from "@tollgate/testing";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthenticationError, BadRequestError, ConflictError, PaymentRequiredError, ServiceUnavailableError, type PaymentRequired, type TollgateClient } from "../index.js";
import { DAY, startGateway, thrown, wallet, type Seen, type TestGateway } from "../testing/harness.js";

type Client = TollgateClient & { calls: Seen[] };
const SECRET = "client-test-secret";
const EMBED = { model: "text-embedding-3-small", input: "paid with x402" };

let usdc: UsdcNode;
let gw: TestGateway;
let bare: TestGateway;
let treasury: string;
const account = (i: number) => usdc.node.accounts[i]!;

beforeAll(async () => {
  usdc = await startUsdcNode();
  treasury = wallet();
  const chainId = usdc.chain.chainId;
  [gw, bare] = await Promise.all([
    startGateway({
      chains: [usdc.chain],
      dispenser: { chains: [{ chainId, privateKey: account(1).privateKey }] },
      settlement: { internalSecret: SECRET, treasury, chains: [{ chainId, spenderPrivateKey: account(2).privateKey }] },
      x402: { payTo: account(3).address, networks: [{ chainId, facilitator: { type: "local", privateKey: account(4).privateKey } }] },
    }),
    startGateway(),
  ]);
  // One minter: its transactions go one after the other (nonces).
  for (const i of [1, 5, 6]) await usdc.mint(account(i).address, 10_000_000n);
});
afterAll(async () => {
  await Promise.all([gw?.close(), bare?.close()]);
  await usdc?.node.stop();
});

/** What a real x402 v2 client sends for a challenge: the official client signs EIP-3009 with the payer's key. */
async function sign(challenge: PaymentRequired, privateKey: `0x${string}`): Promise<string> {
  const signer = new x402Client();
  registerExactEvmScheme(signer, { signer: privateKeyToAccount(privateKey) });
  signer.setSpendControls({ allowedAssets: true }); // the test USDC is not one of the client's known assets
  return encodePaymentSignatureHeader(await signer.createPaymentPayload(challenge as unknown as OfficialPaymentRequired));
}

describe("dispenser", () => {
  it("claim sends 1.00 USDC once; the repeat is a ConflictError with the claim body, sent once; status, chainStatus, check", async () => {
    const client: Client = gw.client({ maxRetries: 2 });
    const chainId = usdc.chain.chainId;
    const address = wallet();
    const claim = await client.dispenser.claim({ address, chainId });
    expect(claim).toEqual({ success: true, claimAmount: 1_000_000, chainId, txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await usdc.balanceOf(address)).toBe(1_000_000n);

    const before = client.calls.length;
    const again = await thrown(() => client.dispenser.claim({ address, chainId }));
    expect(again).toBeInstanceOf(ConflictError);
    expect([again.status, again.code, again.type, again.headers.get("x-should-retry")]).toEqual([409, "already_claimed", "conflict_error", "false"]);
    expect(again.body).toMatchObject({ success: false, alreadyClaimed: true, claimAmount: 1_000_000 });
    expect(again.details).toMatchObject({ address, chainId, txHash: claim.txHash });
    expect(client.calls.length - before).toBe(1);
    expect(await usdc.balanceOf(address)).toBe(1_000_000n);

    const status = await client.dispenser.status();
    expect(status.claimAmount).toBe(1_000_000);
    expect(status.dispensers[0]).toMatchObject({ chainId, dispenserAddress: account(1).address, totalClaims: 1, isConfigured: true, isPaused: false });
    const one = await client.dispenser.chainStatus(chainId);
    expect(one.available && one.status.totalClaims).toBe(1);
    const { data: none, meta } = await client.dispenser.chainStatus(999).withResponse();
    expect([none, meta.status]).toEqual([{ available: false, reason: "No dispenser is configured on chain 999." }, 404]);
    expect(await client.dispenser.check(address.toUpperCase().replace("0X", "0x"))).toEqual({
      address,
      hasClaimed: true,
      claims: [{ chainId, claimedAt: gw.clock.now(), txHash: claim.txHash, status: "claimed" }],
    });

    const bad = await thrown(() => client.dispenser.claim({ address: "0x1234", chainId }));
    expect([bad.constructor, bad.param]).toEqual([BadRequestError, "address"]);
    const off: Client = bare.client({ maxRetries: 2 });
    const e = await thrown(() => off.dispenser.claim({ address, chainId }));
    expect(e).toBeInstanceOf(ServiceUnavailableError);
    expect([e.code, off.calls.length]).toEqual(["not_configured", 1]);
  });
});

describe("settlement", () => {
  it("a key beyond the wallet's allowance to the spender: PaymentRequiredError insufficient_funds with what the chain holds", async () => {
    const owner = await gw.signedIn({ networkId: usdc.chain.chainId });
    const e = await thrown(() => owner.keys.create({ budgetLimit: 5n, expiresAt: gw.clock.now() + DAY, purpose: "api" }));
    expect(e).toBeInstanceOf(PaymentRequiredError);
    expect([e.code, e.type, e.param]).toEqual(["insufficient_funds", "insufficient_quota", "budgetLimit"]);
    expect(e.details).toEqual({ chainId: usdc.chain.chainId, spender: account(2).address.toLowerCase(), allowance: "0", balance: "0", required: "5" });
    expect(await owner.keys.list()).toMatchObject({ keys: [] });
  });

  it("batch moves the queued charges with the internal secret; 401 without it or with a wrong one; 503 when off", async () => {
    const payerWallet = account(6);
    await approveUsdc(usdc.node, usdc.chain.usdc as `0x${string}`, payerWallet.privateKey, account(2).address, 1_000_000n);
    const chainId = usdc.chain.chainId;
    const owner = await gw.signedIn({ networkId: chainId }, privateKeyToAccount(payerWallet.privateKey));
    const key = await owner.keys.create({ budgetLimit: 100_000n, expiresAt: gw.clock.now() + DAY, purpose: "session" });
    const intent = await owner.payments.prepare({ service: "agent", action: "run", resource: "r", method: "POST", maxAmountWei: 500n }, { apiKey: key.token });
    await owner.payments.settle({ paymentIntentId: intent.paymentIntentId, finalAmountWei: 250n });
    expect(await owner.settlement.status()).toMatchObject({ hasActiveBudget: true, budget: { pendingWei: "250", pendingIntents: 1 } });

    const ops: Client = gw.client({ maxRetries: 2 });
    for (const secret of [undefined, "wrong-secret"]) {
      const e = await thrown(() => ops.settlement.batch(secret === undefined ? {} : { internalSecret: secret }));
      expect(e).toBeInstanceOf(AuthenticationError);
      expect([e.code, e.param]).toEqual(["unauthorized", "x-internal-secret"]);
    }
    expect(ops.calls).toHaveLength(2);
    const run = await ops.settlement.batch({ internalSecret: SECRET });
    expect(run).toMatchObject({ runId: expect.stringMatching(/^run_/), totalGroups: 1, totalIntents: 1, totalValueWei: "250", successCount: 1, failCount: 0 });
    expect(run.results).toEqual([{ wallet: payerWallet.address, chainId, amountWei: "250", intentCount: 1, txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) }]);
    expect(await usdc.balanceOf(treasury)).toBe(250n);
    expect(await owner.settlement.status()).toMatchObject({ budget: { pendingWei: "0", pendingIntents: 0 } });
    expect((await thrown(() => bare.client({ internalSecret: SECRET }).settlement.batch())).code).toBe("not_configured");
  });
});

describe("x402", () => {
  it("a 402 exposes the decoded PAYMENT-REQUIRED challenge; the signed payment is sent as paymentSignature and settles on-chain", async () => {
    const client: Client = gw.client();
    // The official client signs with the wall clock; the gateway checks the authorization's lifetime on its own.
    gw.clock.set(Date.now());
    const e = await thrown(() => client.embeddings.create(EMBED));
    expect(e).toBeInstanceOf(PaymentRequiredError);
    expect([e.status, e.code]).toEqual([402, "payment_required"]);
    const challenge: PaymentRequired = e.paymentRequired;
    expect(challenge).toEqual(e.body);
    expect(challenge.accepts[0]).toMatchObject({ scheme: "exact", network: `eip155:${usdc.chain.chainId}`, asset: usdc.chain.usdc, payTo: account(3).address });
    const price = BigInt(challenge.accepts[0]!.amount);

    const payer = account(5);
    const before = await usdc.balanceOf(payer.address);
    const { data, meta } = await client.embeddings.create(EMBED, { paymentSignature: await sign(challenge, payer.privateKey) }).withResponse();
    expect(data.data).toHaveLength(1);
    expect(client.calls.at(-1)!.headers["payment-signature"]).toEqual(expect.any(String));
    expect(meta.paymentResponse).toMatchObject({ success: true, network: `eip155:${usdc.chain.chainId}`, transaction: expect.stringMatching(/^0x/) });
    expect(meta.receipt).toEqual(data.receipt);
    expect(data.receipt).toMatchObject({ finalAmountWei: price.toString(), settlement: { status: "settled", txHash: meta.paymentResponse!.transaction } });
    expect(meta.budget).toBeUndefined();
    expect(before - (await usdc.balanceOf(payer.address))).toBe(price);
  });

  it("a key too poor for the call: 402 budget_exhausted with the x402 offer beside it", async () => {
    // A key's budget needs the wallet's allowance to the settlement spender: 1 atom of it here.
    await approveUsdc(usdc.node, usdc.chain.usdc as `0x${string}`, account(5).privateKey, account(2).address, 1n);
    const owner = await gw.signedIn({ networkId: usdc.chain.chainId }, privateKeyToAccount(account(5).privateKey));
    const key = await owner.keys.create({ budgetLimit: 1n, expiresAt: gw.clock.now() + DAY, purpose: "api" });
    const e = await thrown(() => gw.client({ apiKey: key.token }).embeddings.create(EMBED));
    expect(e).toBeInstanceOf(PaymentRequiredError);
    expect([e.code, e.type]).toEqual(["budget_exhausted", "insufficient_quota"]);
    expect(e.paymentRequired?.accepts[0]?.network).toBe(`eip155:${usdc.chain.chainId}`);
  });
});
