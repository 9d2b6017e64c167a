/**
 * Settlement batches whose transfer's outcome is unknown, on a real anvil behind a JSON-RPC proxy
 * that loses, drops or delays answers: each group's transfer is signed and recorded on its charges
 * before it is sent, and a later batch finishes that very transaction. Whatever happens (an answer
 * lost, a transfer mined late, its nonce taken by a cancel, a speed-up of it, a receipt lagging
 * behind the nonce, two processes splitting a group), every charge reaches the treasury exactly once.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWalletClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { createGateway, createManualClock } from "@tollgate/core";
import { chainFaultsPerSuite, queueCharges, withGateway, type Harness } from "@tollgate/testing";
import { createSqliteStore } from "./store.js";
import { tempSqliteStores } from "./temp-stores.js";

const createStore = tempSqliteStores("settlement-unknown");
const SECRET = "unknown-outcomes-settlement-secret-01";
const LEASE_MS = 10_000;
const HASH = /0x[0-9a-f]{64}/;
const PREPARE = { service: "inference", action: "chat", resource: "https://x.test", method: "POST" };

describe("settlement transfers whose outcome is unknown", () => {
  const faults = chainFaultsPerSuite();
  const { anvil } = faults;
  /** With automine off for `fn`: sent transactions wait in the pool until `evm_mine`. */
  const manualMining = async <T>(fn: () => Promise<T>): Promise<T> => {
    await anvil("evm_setAutomine", [false]);
    try {
      return await fn();
    } finally {
      await anvil("evm_setAutomine", [true]);
    }
  };

  /**
   * A gateway (through the proxy) whose settlement spender is a fresh account, and a fresh payer
   * that approved it, with one paid call settled at each of `amounts`; `batch` runs one batch.
   */
  const settlement =
    (
      fn: (h: Harness, t: { treasury: string; spender: { privateKey: `0x${string}`; address: `0x${string}` }; batch: () => Promise<any> }) => Promise<void>,
      amounts = [400],
    ) =>
    async () => {
      const { spender, payer, treasury } = await faults.settlementParties();
      const chain = { ...faults.usdc.chain, rpcUrl: faults.proxy.url };
      const config = {
        internalSecret: SECRET,
        treasury,
        leaseMs: LEASE_MS,
        intervalMs: false as const,
        chains: [{ chainId: chain.chainId, spenderPrivateKey: spender.privateKey }],
      };
      await withGateway(
        { createStore },
        async (h) => {
          const key = await h.createKey({ purpose: "session", networkId: chain.chainId, budgetLimit: "100000" }, payer.address.toLowerCase());
          for (const amount of amounts) {
            const prepared = await h.prepare(key.token, { ...PREPARE, maxAmountWei: "500" }, { "x-network-id": String(chain.chainId) });
            expect(prepared.status, JSON.stringify(prepared.body)).toBe(200);
            expect((await h.settle({ paymentIntentId: prepared.body.paymentIntentId, finalAmountWei: String(amount) })).status).toBe(200);
          }
          const batch = async () => (await h.call("POST", "/api/settlement/batch", { headers: { "x-internal-secret": SECRET } })).body;
          await fn(h, { treasury, spender, batch });
        },
        { chains: [chain], settlement: config },
      );
    };

  it(
    "a send whose answer is lost moves the charge once; the next batch finds nothing queued",
    settlement(async (_h, { treasury, batch }) => {
      faults.proxy.state.lose = 1;
      expect((await batch()).results).toEqual([expect.objectContaining({ amountWei: "400", txHash: expect.stringMatching(HASH) })]);
      expect((await batch()).results).toEqual([]);
      expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
    }),
    60_000,
  );

  it(
    "a provider that passes our send to another node and answers nonce too low, its lookups lagging past the wait: the block that used the nonce shows this transfer, never signed again",
    settlement(async (h, { treasury, batch }) => {
      Object.assign(faults.proxy.state, { resend: 1, lag: 5 });
      // Settled when the second node answers "nonce too low"; a loaded anvil that has not mined the first
      // send yet answers "already known", which leaves it unknown, finished by the batch after the lease.
      const [first] = (await batch()).results;
      if (first.error !== undefined) {
        expect(first.error).toMatch(/outcome is unknown/);
        h.clock.advance(LEASE_MS);
        expect((await batch()).results).toEqual([expect.objectContaining({ amountWei: "400", txHash: expect.stringMatching(HASH) })]);
      } else expect(first).toMatchObject({ amountWei: "400", txHash: expect.stringMatching(HASH) });
      expect((await batch()).results).toEqual([]);
      expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
    }),
    60_000,
  );

  it(
    "a transfer still unmined when its receipt wait ends: later batches finish that same transaction once it lands, never a second one",
    settlement(async (h, { treasury, batch }) => {
      await manualMining(async () => {
        const first = (await batch()).results[0];
        expect(first.error).toMatch(/outcome is unknown/);
        const hash = HASH.exec(first.error)![0];
        // Within the lease the charge is held; after it, still unmined: unknown again, the same transaction.
        expect((await batch()).results).toEqual([]);
        h.clock.advance(LEASE_MS);
        const second = (await batch()).results[0];
        expect(second.error).toMatch(/outcome is unknown/);
        expect(HASH.exec(second.error)![0]).toBe(hash);
        await anvil("evm_mine");
        h.clock.advance(LEASE_MS);
        expect((await batch()).results).toEqual([expect.objectContaining({ amountWei: "400", txHash: hash })]);
      });
      expect((await batch()).results).toEqual([]);
      expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
    }),
    60_000,
  );

  it(
    "a send that never reached the node: the next batch after the lease sends the very same transaction, and the charge is paid once",
    settlement(async (h, { treasury, batch }) => {
      faults.proxy.state.drop = 2;
      const first = (await batch()).results[0];
      expect(first.error).toMatch(/outcome is unknown/);
      faults.proxy.state.drop = 0; // the transport may or may not have retried the send
      expect(await faults.usdc.balanceOf(treasury)).toBe(0n);
      h.clock.advance(LEASE_MS);
      expect((await batch()).results).toEqual([expect.objectContaining({ amountWei: "400", txHash: HASH.exec(first.error)![0] })]);
      h.clock.advance(LEASE_MS);
      expect((await batch()).results).toEqual([]);
      expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
    }),
    60_000,
  );

  it(
    "a send that never reached the node, whose nonce another transaction took: judged once 64 blocks deep, then queued again and paid once",
    settlement(async (h, { treasury, spender, batch }) => {
      faults.proxy.state.drop = 2;
      const first = (await batch()).results[0];
      expect(first.error).toMatch(/outcome is unknown/);
      faults.proxy.state.drop = 0;
      await anvil("anvil_impersonateAccount", [spender.address]);
      await anvil("eth_sendTransaction", [{ from: spender.address, to: spender.address, value: "0x0" }]);
      await anvil("anvil_stopImpersonatingAccount", [spender.address]);
      h.clock.advance(LEASE_MS);
      expect((await batch()).results[0].error).toMatch(/used less than 64 blocks ago/);
      await anvil("anvil_mine", ["0x40"]);
      h.clock.advance(LEASE_MS);
      const second = (await batch()).results[0];
      expect(second).toMatchObject({
        amountWei: "400",
        error: expect.stringMatching(/was used by transaction 0x[0-9a-f]{64}, another call, so this one can never land/),
      });
      expect(second.txHash).toBeUndefined();
      const third = (await batch()).results[0];
      expect(third).toMatchObject({ amountWei: "400", txHash: expect.stringMatching(HASH) });
      expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
    }),
    60_000,
  );

  it(
    "the operator cancels a transfer while its batch waits for the receipt: the batch sees the replacement, and the charge is paid by the next one",
    settlement(async (_h, { treasury, spender, batch }) => {
      const result = await manualMining(async () => {
        const running = batch();
        while (BigInt((await anvil("eth_getTransactionCount", [spender.address, "pending"])) as string) === 0n) await new Promise((r) => setTimeout(r, 50));
        await new Promise((r) => setTimeout(r, 700)); // the batch's receipt wait has seen its transaction pending
        const wallet = createWalletClient({ account: privateKeyToAccount(spender.privateKey), transport: http(faults.usdc.node.rpcUrl) });
        await wallet.sendTransaction({
          chain: null,
          to: spender.address,
          value: 0n,
          nonce: 0,
          gas: 21_000n,
          maxFeePerGas: 100_000_000_000n,
          maxPriorityFeePerGas: 50_000_000_000n,
        });
        await anvil("evm_mine");
        return (await running).results[0];
      });
      expect(result).toMatchObject({
        amountWei: "400",
        error: expect.stringMatching(/replaced by transaction 0x[0-9a-f]{64}, another call, so it can never land/),
      });
      // The wallet's transfer never ran: its keys are not frozen.
      expect(result.error).not.toContain("were cut");
      expect(result.txHash).toBeUndefined();
      expect((await batch()).results).toEqual([expect.objectContaining({ amountWei: "400", txHash: expect.stringMatching(HASH) })]);
      expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
    }),
    60_000,
  );

  it(
    "the operator speeds up a stuck transfer (the same call, a higher fee): the next batches settle the charge with the speed-up's hash, never pay it again",
    settlement(async (h, { treasury, spender, batch }) => {
      const spedUp = await manualMining(async () => {
        expect((await batch()).results[0].error).toMatch(/outcome is unknown/);
        const hash = await faults.speedUp(spender.privateKey);
        await anvil("evm_mine");
        return hash;
      });
      expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
      h.clock.advance(LEASE_MS);
      expect((await batch()).results[0].error).toMatch(/used less than 64 blocks ago/);
      await anvil("anvil_mine", ["0x40"]);
      h.clock.advance(LEASE_MS);
      expect((await batch()).results).toEqual([expect.objectContaining({ amountWei: "400", txHash: spedUp })]);
      h.clock.advance(LEASE_MS);
      expect((await batch()).results).toEqual([]);
      expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
    }),
    60_000,
  );

  it(
    "a transfer mined late whose receipt lags behind its nonce on the RPC: never taken for one that cannot land, and settled with its own hash",
    settlement(async (h, { treasury, batch }) => {
      const hash = await manualMining(async () => {
        const first = (await batch()).results[0];
        expect(first.error).toMatch(/outcome is unknown/);
        await anvil("evm_mine");
        return HASH.exec(first.error)![0];
      });
      expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
      h.clock.advance(LEASE_MS);
      faults.proxy.state.lagReceipts = 4;
      expect((await batch()).results[0].error).toMatch(/outcome is unknown/);
      await anvil("anvil_mine", ["0x40"]);
      h.clock.advance(LEASE_MS);
      faults.proxy.state.lagReceipts = 1; // the first look misses it; the block that used its nonce holds it
      expect((await batch()).results).toEqual([expect.objectContaining({ amountWei: "400", txHash: hash })]);
      expect(await faults.usdc.balanceOf(treasury)).toBe(400n);
    }),
    60_000,
  );

  it("two processes on one database and one spender: a group split while one of them signs is not marked, sends nothing, and every charge is paid once", async () => {
    const { spender, payer, treasury } = await faults.settlementParties();
    const filename = join(tmpdir(), `settlement-split-${process.pid}-${Date.now()}.db`);
    const config = (batchLimit: number) => ({
      internalSecret: SECRET,
      treasury,
      leaseMs: LEASE_MS,
      batchLimit,
      intervalMs: false as const,
      chains: [{ chainId: faults.usdc.chain.chainId, spenderPrivateKey: spender.privateKey }],
    });
    // Process A through the proxy, B straight to the node: one database, one spender.
    const [clockA, clockB] = [createManualClock(), createManualClock()];
    const a = createGateway({
      store: createSqliteStore({ filename }),
      clock: clockA,
      sweepIntervalMs: 0,
      internalSecret: SECRET,
      chains: [{ ...faults.usdc.chain, rpcUrl: faults.proxy.url }],
      settlement: config(500),
    });
    const b = createGateway({
      store: createSqliteStore({ filename }),
      clock: clockB,
      sweepIntervalMs: 0,
      internalSecret: SECRET,
      chains: [faults.usdc.chain],
      settlement: config(2),
    });
    try {
      await queueCharges(a, { secret: SECRET, payer: payer.address, chainId: faults.usdc.chain.chainId, amounts: [100, 100, 100], now: clockA.now() });
      // A claims the three charges (300); while it simulates its transfer its lease lapses, and B
      // (2 a batch) pays the two oldest. A's record of its transfer of 300 then marks nothing.
      clockB.set(clockA.now() + LEASE_MS + 1);
      const byB: any[] = [];
      faults.proxy.hooks.push({
        match: (body) => body.includes('"eth_call"') && body.includes("0x23b872dd"),
        run: async () => void byB.push(await b.services.settlement.runBatch()),
      });
      // Before A re-queues the charge it held, B runs again: it must find no transfer of A's (of 300) on it.
      faults.proxy.hooks.push({
        match: (body) => body.includes('"eth_call"') && (body.includes("0xdd62ed3e") || body.includes("0x70a08231")),
        run: async () => void byB.push(await b.services.settlement.runBatch()),
      });
      const byA = await a.services.settlement.runBatch();
      expect(byA.results).toEqual([
        expect.objectContaining({ amountWei: "300", error: expect.stringMatching(/no longer holds every one of the group's 3 charges; nothing was sent/) }),
      ]);
      // B's second batch took the third charge (A's lease had lapsed) without a transfer of A's on it, and paid it alone.
      expect(byB.map((r) => r.results.map((g: any) => [g.amountWei, HASH.test(g.txHash)]))).toEqual([[["200", true]], [["100", true]]]);
      clockB.set(clockB.now() + LEASE_MS);
      expect((await b.services.settlement.runBatch()).results).toEqual([]);
      expect(await faults.usdc.balanceOf(treasury)).toBe(300n);
    } finally {
      await b.close();
      await a.close();
    }
  }, 60_000);
});
