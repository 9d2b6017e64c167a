/**
 * Transactions whose nonce another transaction took, on a real anvil: a wallet's speed-up (the same
 * call under a new hash) is the same transfer, landed; any other call (a cancel, another process's
 * transfer of other charges of the same owner and sum, another x402 authorization of the same
 * payer and price) is not. Found by finding the block that used the nonce, however long ago, on
 * RPCs that cap log ranges too; two processes never release or complete each other's claims.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { createGateway, createManualClock, createViemChain, randomNonce, signTransferAuthorization } from "@tollgate/core";
import { chainFaultsPerSuite, fundedAccount, queueCharges, startOtherRpcNode, withGateway } from "@tollgate/testing";
import { createSqliteStore } from "./store.js";
import { tempSqliteStores } from "./temp-stores.js";

const createStore = tempSqliteStores("chain-replacements");
const SECRET = "chain-replacements-secret-00000001";
const HASH = /0x[0-9a-f]{64}/;
const PREPARE = { service: "inference", action: "chat", resource: "https://x.test", method: "POST" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("transactions whose nonce another transaction took", () => {
  const faults = chainFaultsPerSuite();
  const { anvil, someone, pendingCount, pooled } = faults;

  it("settlement, two processes sharing the spender: B's transfer of other charges (same owner, same sum) takes A's nonce; A's group is not taken for settled", async () => {
    const { spender, payer, treasury } = await faults.settlementParties();
    const nodeB = await startOtherRpcNode(faults.usdc.node.rpcUrl, { hidePending: true, tipFactor: 20n });
    const filename = join(tmpdir(), `chain-replacements-twin-${process.pid}-${Date.now()}.db`);
    const config = {
      internalSecret: SECRET,
      treasury,
      leaseMs: 60_000,
      batchLimit: 1,
      intervalMs: false as const,
      chains: [{ chainId: faults.usdc.chain.chainId, spenderPrivateKey: spender.privateKey }],
    };
    const clock = createManualClock();
    const a = createGateway({
      store: createSqliteStore({ filename }),
      clock,
      sweepIntervalMs: 0,
      internalSecret: SECRET,
      chains: [faults.usdc.chain],
      settlement: config,
    });
    const b = createGateway({
      store: createSqliteStore({ filename }),
      clock,
      sweepIntervalMs: 0,
      internalSecret: SECRET,
      chains: [{ ...faults.usdc.chain, rpcUrl: nodeB.url }],
      settlement: config,
    });
    try {
      // Two paid calls of the same price (a flat-priced route): two charges of 100 of one owner.
      await queueCharges(a, { secret: SECRET, payer: payer.address, chainId: faults.usdc.chain.chainId, amounts: [100, 100], now: clock.now() });
      await anvil("evm_setAutomine", [false]);
      const nonce = await pendingCount(spender.address);
      // A takes the first charge and sends its transfer (nonce n) to node 1 ...
      const runA = a.services.settlement.runBatch();
      while ((await pendingCount(spender.address)) === nonce) await sleep(20);
      const txA = (await pooled(spender.address))!.hash;
      await sleep(700); // A's receipt wait has seen its transaction pending
      // ... B takes the second charge; its node has not seen A's transaction, so B signs nonce n too, with a higher fee: it wins the nonce.
      const runB = b.services.settlement.runBatch();
      while ((await pooled(spender.address))?.hash === txA) await sleep(20);
      await anvil("evm_mine");
      const [byA, byB] = await Promise.all([runA, runB]);
      await anvil("evm_setAutomine", [true]);
      const txB = byB.results[0]!.txHash;
      expect(txB).toMatch(HASH);
      // Only one transfer of 100 moved: A's charge must not be marked settled (its transaction can never land now).
      expect(await faults.usdc.balanceOf(treasury)).toBe(100n);
      expect(byA.results[0]!.txHash).toBeUndefined();
      // And whatever A reported, every charge must end paid once: a later batch collects A's charge.
      clock.advance(120_000);
      await a.services.settlement.runBatch();
      expect(await faults.usdc.balanceOf(treasury)).toBe(200n);
    } finally {
      await anvil("evm_setAutomine", [true]);
      await b.close();
      await a.close();
      await nodeB.close();
    }
  }, 60_000);

  it("x402 local facilitator, two processes sharing its key: another authorization of the same payer, payTo and price takes the nonce; the first settle does not report success", async () => {
    const facilitator = await fundedAccount(faults.usdc.node);
    const payer = await fundedAccount(faults.usdc.node);
    const payTo = someone();
    await faults.usdc.mint(payer.address, 1_000_000n);
    const nodeB = await startOtherRpcNode(faults.usdc.node.rpcUrl, { hidePending: true, tipFactor: 20n });
    const common = {
      chainId: faults.usdc.chain.chainId,
      usdc: faults.usdc.chain.usdc as `0x${string}`,
      privateKey: facilitator.privateKey,
      pollingIntervalMs: 50,
      receiptTimeoutMs: 15_000,
    };
    const chainA = createViemChain({ ...common, rpcUrl: faults.usdc.node.rpcUrl });
    const chainB = createViemChain({ ...common, rpcUrl: nodeB.url });
    try {
      const domain = await chainA.tokenDomain();
      const signer = privateKeyToAccount(payer.privateKey);
      const auth = () => ({
        from: payer.address.toLowerCase() as `0x${string}`,
        to: payTo,
        value: 10_000n,
        validAfter: 0n,
        validBefore: 4_000_000_000n,
        nonce: randomNonce(),
      });
      const [auth1, auth2] = [auth(), auth()];
      const [sig1, sig2] = [await signTransferAuthorization(signer, domain, auth1), await signTransferAuthorization(signer, domain, auth2)];
      await anvil("evm_setAutomine", [false]);
      const nonce = await pendingCount(facilitator.address);
      const settle1 = chainA.transferWithAuthorization(auth1, sig1);
      while ((await pendingCount(facilitator.address)) === nonce) await sleep(20);
      const tx1 = (await pooled(facilitator.address))!.hash;
      await sleep(300);
      const settle2 = chainB.transferWithAuthorization(auth2, sig2);
      while ((await pooled(facilitator.address))?.hash === tx1) await sleep(20);
      await anvil("evm_mine");
      const [r1] = await Promise.allSettled([settle1, settle2]);
      await anvil("evm_setAutomine", [true]);
      expect(await chainA.authorizationUsed(auth1.from, auth1.nonce)).toBe(false);
      expect(await chainA.authorizationUsed(auth2.from, auth2.nonce)).toBe(true);
      expect(await faults.usdc.balanceOf(payTo)).toBe(10_000n);
      // auth1 never moved a cent, so its settle must not succeed (the local facilitator would answer success: true and the call is served unpaid).
      expect(r1.status).toBe("rejected");
    } finally {
      await anvil("evm_setAutomine", [true]);
      await nodeB.close();
    }
  }, 60_000);
  it("settlement on an RPC that caps eth_getLogs at 500 blocks: a transfer whose nonce another transaction took is judged, and its charge collected", async () => {
    const { spender, payer, treasury } = await faults.settlementParties();
    await anvil("anvil_mine", ["0x400"]); // a chain older than the 900-block lookback
    const capped = await startOtherRpcNode(faults.proxy.url, { maxLogRange: 500n });
    const chain = { ...faults.usdc.chain, rpcUrl: capped.url };
    const config = {
      internalSecret: SECRET,
      treasury,
      leaseMs: 10_000,
      intervalMs: false as const,
      chains: [{ chainId: chain.chainId, spenderPrivateKey: spender.privateKey }],
    };
    try {
      await withGateway(
        { createStore },
        async (h) => {
          const key = await h.createKey({ purpose: "session", networkId: chain.chainId, budgetLimit: "100000" }, payer.address.toLowerCase());
          const prepared = await h.prepare(key.token, { ...PREPARE, maxAmountWei: "500" }, { "x-network-id": String(chain.chainId) });
          expect((await h.settle({ paymentIntentId: prepared.body.paymentIntentId, finalAmountWei: "400" })).status).toBe(200);
          const batch = async () => (await h.call("POST", "/api/settlement/batch", { headers: { "x-internal-secret": SECRET } })).body;
          faults.proxy.state.drop = 2;
          expect((await batch()).results[0].error).toMatch(/outcome is unknown/);
          faults.proxy.state.drop = 0;
          // The documented remedy: the operator cancels the nonce (a 0-value transaction to the spender itself).
          await anvil("anvil_impersonateAccount", [spender.address]);
          await anvil("eth_sendTransaction", [{ from: spender.address, to: spender.address, value: "0x0" }]);
          await anvil("anvil_stopImpersonatingAccount", [spender.address]);
          await anvil("anvil_mine", ["0x40"]);
          const seen: string[] = [];
          for (let i = 0; i < 3; i++) {
            h.clock.advance(10_000);
            const r = (await batch()).results[0];
            seen.push(r?.txHash ? `paid ${r.txHash}` : String(r?.error));
            if (r?.txHash) break;
            await anvil("anvil_mine", ["0x40"]);
          }
          expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
        },
        { chains: [chain], settlement: config },
      );
    } finally {
      await capped.close();
    }
  }, 60_000);
  it("settlement: a speed-up first seen 1,000 blocks later (10 minutes, the default interval, on a 0.6 s-block chain) settles the charge, never pays it again", async () => {
    const { spender, payer, treasury } = await faults.settlementParties();
    const chain = { ...faults.usdc.chain, rpcUrl: faults.proxy.url };
    const config = {
      internalSecret: SECRET,
      treasury,
      leaseMs: 10_000,
      intervalMs: false as const,
      chains: [{ chainId: chain.chainId, spenderPrivateKey: spender.privateKey }],
    };
    await withGateway(
      { createStore },
      async (h) => {
        const key = await h.createKey({ purpose: "session", networkId: chain.chainId, budgetLimit: "100000" }, payer.address.toLowerCase());
        const prepared = await h.prepare(key.token, { ...PREPARE, maxAmountWei: "500" }, { "x-network-id": String(chain.chainId) });
        expect((await h.settle({ paymentIntentId: prepared.body.paymentIntentId, finalAmountWei: "400" })).status).toBe(200);
        const batch = async () => (await h.call("POST", "/api/settlement/batch", { headers: { "x-internal-secret": SECRET } })).body;
        await anvil("evm_setAutomine", [false]);
        expect((await batch()).results[0].error).toMatch(/outcome is unknown/);
        await faults.speedUp(spender.privateKey);
        await anvil("evm_mine");
        await anvil("evm_setAutomine", [true]);
        expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
        await anvil("anvil_mine", ["0x3e8"]);
        h.clock.advance(600_000);
        expect((await batch()).results).toEqual([expect.objectContaining({ amountWei: "400", txHash: expect.stringMatching(HASH) })]);
        h.clock.advance(600_000);
        expect((await batch()).results).toEqual([]);
        expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
      },
      { chains: [chain], settlement: config },
    );
  }, 60_000);
});
