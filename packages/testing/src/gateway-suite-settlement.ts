/**
 * The settlement route suite (docs/settlement.md "Settlement") through `gateway.fetch` on a real store:
 * the status view and the batch's credential and queue rules without a chain, then batches that
 * move USDC with `transferFrom` on a real anvil node. A store's test file runs it in one line:
 *
 * ```ts
 * runSettlementRouteSuite("sqlite", { createStore: () => createSqliteStore({ filename: tmpFile() }) });
 * ```
 */
import { describe, expect, it } from "vitest";
import type { AnvilAccount } from "./anvil.js";
import { approveUsdc } from "./anvil.js";
import type { GatewayOptions } from "@tollgate/core";
import { DEAD_CHAIN, freshAddress, SOME_KEY, usdcNodePerSuite } from "./gateway-suite-dispenser.js";
import { makeKey } from "./store-fixtures.js";
import { asWallet, bearer, CHAIN, DAY, expectError, OWNER, PREPARE, withGateway, type GatewaySuiteOptions, type Harness } from "./gateway-suite-fixtures.js";

const SECRET = "s3cret-s3cret-s3cret";
const STATUS = "/api/settlement/status";
const BATCH = "/api/settlement/batch";
const internal = (secret = SECRET) => ({ "x-internal-secret": secret });

/** Creates a session key for `owner` on `chainId` and runs one paid call per amount (prepare the amount + 50, settle the amount). */
async function paidCalls(h: Harness, owner: string, chainId: number, amounts: readonly number[]): Promise<any> {
  const key = await h.createKey({ purpose: "session", networkId: chainId, budgetLimit: "100000" }, owner);
  for (const amount of amounts) {
    const prepared = await h.prepare(key.token, { ...PREPARE, maxAmountWei: String(amount + 50) }, { "x-network-id": String(chainId) });
    expect(prepared.status, JSON.stringify(prepared.body)).toBe(200);
    const settled = await h.settle({ paymentIntentId: prepared.body.paymentIntentId, finalAmountWei: String(amount) });
    expect(settled.status, JSON.stringify(settled.body)).toBe(200);
    expect(settled.body.settlement).toEqual({ status: "queued" });
  }
  return key;
}

const status = async (h: Harness, owner: string, headers: Record<string, string> = {}, query = "") => {
  const r = await h.call("GET", `${STATUS}${query}`, { headers: { ...asWallet(owner), ...headers } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};

/** Registers the settlement route suite for the store `name` in the current vitest file. */
export function runSettlementRouteSuite(name: string, options: GatewaySuiteOptions): void {
  const test = (title: string, extra: Partial<GatewayOptions>, fn: (h: Harness) => Promise<void>) => it(title, () => withGateway(options, fn, extra));
  const treasury = freshAddress();
  const offChain: Partial<GatewayOptions> = {
    chains: [DEAD_CHAIN],
    // Keys on a chain that cannot be read are refused when funding is required (gateway-suite-funding.ts): these tests queue charges there.
    settlement: { internalSecret: SECRET, treasury, chains: [{ chainId: DEAD_CHAIN.chainId, spenderPrivateKey: SOME_KEY }], requireFunding: false },
  };

  describe(`settlement routes: ${name}`, () => {
    test("status: the active session budget with its queued charges; none → hasActiveBudget false", {}, async (h) => {
      expect(await status(h, OWNER, { "x-chain-id": String(CHAIN) })).toEqual({ hasActiveBudget: false });
      await h.createKey({ purpose: "api" });
      expect(await status(h, OWNER, { "x-chain-id": String(CHAIN) })).toEqual({ hasActiveBudget: false });
      const key = await paidCalls(h, OWNER, CHAIN, [100, 250]);
      // One intent still open: reserved, not yet queued.
      expect((await h.prepare(key.token)).status).toBe(200);
      const expected = {
        hasActiveBudget: true,
        budget: { keyId: key.keyId, totalWei: "100000", lockedWei: "300", usedWei: "350", availableWei: "99350", pendingWei: "350", pendingIntents: 2, expiresAt: key.expiresAt },
      };
      expect(await status(h, OWNER.toUpperCase().replace("0X", "0x"), { "x-chain-id": String(CHAIN) })).toEqual(expected);
      // The chain from ?chainId, or x-network-id.
      expect(await status(h, OWNER, {}, `?chainId=${CHAIN}`)).toEqual(expected);
      expect(await status(h, OWNER, { "x-network-id": String(CHAIN) })).toEqual(expected);
      // Another chain, another wallet: nothing.
      expect(await status(h, OWNER, { "x-chain-id": "1" })).toEqual({ hasActiveBudget: false });
      expect(await status(h, freshAddress(), { "x-chain-id": String(CHAIN) })).toEqual({ hasActiveBudget: false });
      // A superseding session key is the active one; the queue is per wallet and chain.
      const next = await h.createKey({ purpose: "session", budgetLimit: "5000" });
      expect(await status(h, OWNER, { "x-chain-id": String(CHAIN) })).toEqual({
        hasActiveBudget: true,
        budget: { keyId: next.keyId, totalWei: "5000", lockedWei: "0", usedWei: "0", availableWei: "5000", pendingWei: "350", pendingIntents: 2, expiresAt: next.expiresAt },
      });
      // Revoked or expired: no active budget.
      expect((await h.call("DELETE", `/api/keys/${next.keyId}`, { headers: bearer(next.token) })).status).toBe(200);
      expect(await status(h, OWNER, { "x-chain-id": String(CHAIN) })).toEqual({ hasActiveBudget: false });
      await h.createKey({ purpose: "session" });
      h.clock.advance(DAY);
      expect(await status(h, OWNER, { "x-chain-id": String(CHAIN) })).toEqual({ hasActiveBudget: false });
    });

    test("status: the default chain is the first of options.chains", { chains: [{ ...DEAD_CHAIN, chainId: CHAIN }, DEAD_CHAIN] }, async (h) => {
      const key = await paidCalls(h, OWNER, CHAIN, [40]);
      expect(await status(h, OWNER)).toMatchObject({ hasActiveBudget: true, budget: { keyId: key.keyId, pendingWei: "40", pendingIntents: 1 } });
    });

    test("status: wallet header required, chain checked", {}, async (h) => {
      expectError(await h.call("GET", STATUS, { headers: { "x-chain-id": "1" } }), 401, "authentication_required", "x-session-user-address");
      // The header alone proves nothing.
      expectError(await h.call("GET", STATUS, { headers: { "x-session-user-address": OWNER, "x-chain-id": "1" } }), 401, "wallet_unverified", "x-session-user-address");
      expectError(await h.call("GET", STATUS, { headers: { ...asWallet("0x12"), "x-chain-id": "1" } }), 400, "invalid_request", "x-session-user-address");
      expectError(await h.call("GET", STATUS, { headers: { ...asWallet(OWNER), "x-chain-id": "abc" } }), 400, "invalid_request", "x-chain-id");
      expectError(await h.call("GET", `${STATUS}?chainId=0`, { headers: asWallet(OWNER) }), 400, "invalid_request", "chainId");
      // No header, no query and no options.chains: the header is optional, so no budget, not a 400.
      await paidCalls(h, OWNER, CHAIN, [40]);
      expect(await status(h, OWNER)).toEqual({ hasActiveBudget: false });
    });

    test("status: an expired intent is not shown as locked (release on read)", { intentTtlMs: 60_000 }, async (h) => {
      const key = await h.createKey({ purpose: "session", budgetLimit: "1000" });
      expect((await h.prepare(key.token)).status).toBe(200);
      expect((await status(h, OWNER, { "x-chain-id": String(CHAIN) })).budget).toMatchObject({ lockedWei: "300", availableWei: "700" });
      h.clock.advance(60_000);
      expect((await status(h, OWNER, { "x-chain-id": String(CHAIN) })).budget).toMatchObject({ lockedWei: "0", availableWei: "1000" });
    });

    test("GET /api/session: the active session key as ActiveSessionMetadata, never its token", { intentTtlMs: 60_000 }, async (h) => {
      const session = async (headers: Record<string, string> = { "x-chain-id": String(CHAIN) }, query = "") => {
        const r = await h.call("GET", `/api/session${query}`, { headers: { ...asWallet(OWNER), ...headers } });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body;
      };
      expect(await session()).toEqual({ hasSession: false, reason: expect.any(String) });
      await h.createKey({ purpose: "api" });
      expect((await session()).hasSession).toBe(false);
      const key = await h.createKey({ purpose: "session", budgetLimit: "3000", name: "laptop", expiresAt: h.clock.now() + 600_000 });
      expect((await h.prepare(key.token, { ...PREPARE, maxAmountWei: "1001" })).status).toBe(200);
      const view = await session();
      expect(view).toEqual({
        hasSession: true,
        keyId: key.keyId,
        budgetLimit: "3000",
        budgetUsed: "0",
        budgetLocked: "1001",
        budgetRemaining: "1999",
        expiresAt: key.expiresAt,
        chainId: CHAIN,
        name: "laptop",
        status: {
          isActive: true,
          isExpired: false,
          expiresInSeconds: 600,
          budgetPercentRemaining: 66.63, // 1999/3000 = 66.633…, floored to hundredths
          warnings: { budgetDepleted: false, budgetLow: false, expiringSoon: false, expired: false },
        },
      });
      expect(JSON.stringify(view)).not.toContain(key.token.slice(4));
      expect(await session({}, `?chainId=${CHAIN}`)).toEqual(view);
      expect(await session({ "x-network-id": String(CHAIN) })).toEqual(view);
      // A live key of the wallet proves it too.
      expect((await h.call("GET", "/api/session", { headers: { ...bearer(key.token), "x-chain-id": String(CHAIN) } })).body).toEqual(view);
      // The intent expires: released on read. Exactly 20 % left is not low; less is.
      h.clock.advance(60_000);
      expect(await session()).toMatchObject({ budgetLocked: "0", budgetRemaining: "3000", status: { budgetPercentRemaining: 100, expiresInSeconds: 540 } });
      expect((await h.call("POST", "/api/keys/settle", { headers: bearer(key.token), body: { amount: "2400" } })).status).toBe(200);
      expect((await session()).status).toMatchObject({ budgetPercentRemaining: 20, warnings: { budgetLow: false } });
      expect((await h.call("POST", "/api/keys/settle", { headers: bearer(key.token), body: { amount: "1" } })).status).toBe(200);
      expect((await session()).status).toMatchObject({ budgetPercentRemaining: 19.96, warnings: { budgetLow: true, budgetDepleted: false } });
      h.clock.advance(540_000 - 299_500);
      expect((await session()).status).toMatchObject({ expiresInSeconds: 299, warnings: { expiringSoon: true, expired: false } });
      expect((await h.call("POST", "/api/keys/settle", { headers: bearer(key.token), body: { amount: "599" } })).status).toBe(200);
      expect((await session()).status).toMatchObject({ isActive: false, budgetPercentRemaining: 0, warnings: { budgetDepleted: true, budgetLow: true } });
      // Other chain, no chain and no default, expired key: no session.
      expect((await session({ "x-chain-id": "1" })).hasSession).toBe(false);
      expect(await session({})).toEqual({ hasSession: false, reason: expect.stringContaining("x-chain-id") });
      h.clock.advance(300_000);
      expect((await session()).hasSession).toBe(false);
      // Proof and chain errors as for status.
      expectError(await h.call("GET", "/api/session", { headers: { "x-chain-id": "1" } }), 401, "authentication_required", "x-session-user-address");
      expectError(await h.call("GET", "/api/session", { headers: { "x-session-user-address": OWNER } }), 401, "wallet_unverified", "x-session-user-address");
      expectError(await h.call("GET", "/api/session", { headers: { ...asWallet(OWNER), "x-chain-id": "abc" } }), 400, "invalid_request", "x-chain-id");
    });

    test("batch: 503 when not configured, whatever the secret", {}, async (h) => {
      expectError(await h.call("POST", BATCH), 503, "not_configured");
      expectError(await h.call("POST", BATCH, { headers: internal() }), 503, "not_configured");
    });

    test("batch: a missing or wrong x-internal-secret is 401 unauthorized", offChain, async (h) => {
      expectError(await h.call("POST", BATCH), 401, "unauthorized", "x-internal-secret");
      expectError(await h.call("POST", BATCH, { headers: internal("") }), 401, "unauthorized", "x-internal-secret");
      expectError(await h.call("POST", BATCH, { headers: internal(`${SECRET}x`) }), 401, "unauthorized", "x-internal-secret");
      expectError(await h.call("POST", BATCH, { headers: internal(SECRET.slice(1)) }), 401, "unauthorized", "x-internal-secret");
      expectError(await h.call("GET", BATCH, { headers: internal() }), 405, "method_not_allowed");
      const empty = await h.call("POST", BATCH, { headers: internal() });
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ runId: expect.stringMatching(/^run_/), startedAt: h.clock.now(), finishedAt: h.clock.now(), totalGroups: 0, totalIntents: 0, totalValueWei: "0", successCount: 0, failCount: 0, results: [] });
    });

    test("batch: charges of a chain without a spender stay queued out of every batch; a group whose transfer fails stays queued as failed", offChain, async (h) => {
      // Charges of a key from before settlement covered its chain (a new key there is refused).
      const legacy = makeKey({ owner: OWNER, chainId: CHAIN, purpose: "session", budgetLimit: 100_000n, expiresAt: h.clock.now() + DAY });
      await h.gateway.services.store.insertKey(legacy);
      for (const amount of [100n, 200n]) await h.gateway.services.keys.chargeDirect(legacy, amount);
      await paidCalls(h, OWNER, DEAD_CHAIN.chainId, [7]);
      const r = await h.call("POST", BATCH, { headers: internal() });
      expect(r.status).toBe(200);
      // Only the chain with a spender is claimed: the others would fail at the head of every batch.
      expect(r.body).toMatchObject({ totalGroups: 1, totalIntents: 1, totalValueWei: "7", successCount: 0, failCount: 1 });
      expect(r.body.results[0]).toEqual({ wallet: OWNER, chainId: 7, amountWei: "7", intentCount: 1, error: expect.stringContaining("transferFrom failed") });
      expect(await status(h, OWNER, { "x-chain-id": String(CHAIN) })).toMatchObject({ budget: { pendingWei: "300", pendingIntents: 2 } });
      // Re-queued at once: the next batch takes the failed group again.
      const again = await h.gateway.services.settlement.runBatch();
      expect(again).toMatchObject({ totalGroups: 1, totalIntents: 1, failCount: 1 });
      const queued = await h.gateway.services.store.listQueuedCharges({ limit: 10 });
      expect(queued.map((c) => [c.chainId, c.error ?? null]).sort()).toEqual([
        [7, expect.stringContaining("transferFrom failed")],
        [CHAIN, null],
        [CHAIN, null],
      ]);
    });

    describe("on anvil", () => {
      const usdc = usdcNodePerSuite();
      const spender = () => usdc().node.accounts[1]!;
      const onChain = (treasuryAddress: string, batchLimit?: number): Partial<GatewayOptions> => ({
        chains: [usdc().chain],
        settlement: {
          internalSecret: SECRET,
          treasury: treasuryAddress,
          chains: [{ chainId: usdc().chain.chainId, spenderPrivateKey: spender().privateKey }],
          ...(batchLimit === undefined ? {} : { batchLimit }),
        },
      });
      const run = (title: string, fn: (h: Harness, treasury: string) => Promise<void>, batchLimit?: number) =>
        it(title, () => {
          const to = freshAddress();
          return withGateway(options, (h) => fn(h, to), onChain(to, batchLimit));
        });
      const fund = async (wallet: AnvilAccount, allowance: bigint) => {
        await usdc().mint(wallet.address, 10_000_000n);
        if (allowance > 0n) await approveUsdc(usdc().node, usdc().chain.usdc as `0x${string}`, wallet.privateKey, spender().address, allowance);
      };
      const batch = async (h: Harness) => {
        const r = await h.call("POST", BATCH, { headers: internal() });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body;
      };

      run("a batch moves exactly the sum of a wallet's charges with one transferFrom; a second batch moves nothing", async (h, to) => {
        const wallet = usdc().node.accounts[2]!;
        await fund(wallet, 1_000_000n);
        await paidCalls(h, wallet.address, usdc().chain.chainId, [100, 250, 1]);
        const before = await usdc().balanceOf(wallet.address);
        const first = await batch(h);
        expect(first).toMatchObject({ totalGroups: 1, totalIntents: 3, totalValueWei: "351", successCount: 1, failCount: 0 });
        expect(first.results).toEqual([{ wallet: wallet.address, chainId: usdc().chain.chainId, amountWei: "351", intentCount: 3, txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) }]);
        expect(await usdc().balanceOf(to)).toBe(351n);
        expect(await usdc().balanceOf(wallet.address)).toBe(before - 351n);
        const charges = await h.gateway.services.store.listQueuedCharges({ limit: 10 });
        expect(charges).toEqual([]);
        expect(await status(h, wallet.address, { "x-chain-id": String(usdc().chain.chainId) })).toMatchObject({ budget: { usedWei: "351", pendingWei: "0", pendingIntents: 0 } });
        const second = await batch(h);
        expect(second).toMatchObject({ totalGroups: 0, totalIntents: 0, totalValueWei: "0", results: [] });
        expect(await usdc().balanceOf(to)).toBe(351n);
      });

      run("a wallet without allowance fails and stays queued while another wallet's group settles", async (h, to) => {
        const [good, broke] = [usdc().node.accounts[3]!, usdc().node.accounts[4]!];
        await fund(good, 1_000_000n);
        // The key needs the allowance when it is created; the wallet withdraws it after spending.
        await fund(broke, 100_000n);
        await paidCalls(h, good.address, usdc().chain.chainId, [500, 20]);
        await paidCalls(h, broke.address, usdc().chain.chainId, [300]);
        await approveUsdc(usdc().node, usdc().chain.usdc as `0x${string}`, broke.privateKey, spender().address, 0n);
        const r = await batch(h);
        expect(r).toMatchObject({ totalGroups: 2, totalIntents: 3, totalValueWei: "820", successCount: 1, failCount: 1 });
        const byWallet = Object.fromEntries(r.results.map((g: any) => [g.wallet, g]));
        expect(byWallet[good.address]).toEqual({ wallet: good.address, chainId: usdc().chain.chainId, amountWei: "520", intentCount: 2, txHash: expect.stringMatching(/^0x/) });
        expect(byWallet[broke.address]).toEqual({ wallet: broke.address, chainId: usdc().chain.chainId, amountWei: "300", intentCount: 1, error: expect.stringContaining("insufficient allowance") });
        expect(await usdc().balanceOf(to)).toBe(520n);
        expect(await status(h, broke.address, { "x-chain-id": String(usdc().chain.chainId) })).toMatchObject({ budget: { pendingWei: "300", pendingIntents: 1 } });
        // Once the wallet approves, the next batch settles it.
        await approveUsdc(usdc().node, usdc().chain.usdc as `0x${string}`, broke.privateKey, spender().address, 300n);
        expect(await batch(h)).toMatchObject({ totalGroups: 1, successCount: 1, totalValueWei: "300" });
        expect(await usdc().balanceOf(to)).toBe(820n);
      });

      // batchLimit 4: three concurrent batches split the 12 charges, a wallet's charges across batches.
      run("batches run at once settle every charge exactly once", async (h, to) => {
        const wallets = [usdc().node.accounts[5]!, usdc().node.accounts[6]!];
        let total = 0n;
        for (const [i, wallet] of wallets.entries()) {
          await fund(wallet, 1_000_000n);
          const amounts = Array.from({ length: 6 }, (_, j) => 10 * (i + 1) + j);
          await paidCalls(h, wallet.address, usdc().chain.chainId, amounts);
          total += amounts.reduce((s, a) => s + BigInt(a), 0n);
        }
        const results = await Promise.all([batch(h), h.gateway.services.settlement.runBatch(), batch(h)]);
        const moved = results.reduce((s, r) => s + r.results.filter((g: any) => g.txHash).reduce((t: bigint, g: any) => t + BigInt(g.amountWei), 0n), 0n);
        expect(results.map((r) => r.totalIntents)).toEqual([4, 4, 4]);
        expect(results.reduce((s, r) => s + r.failCount, 0)).toBe(0);
        expect(moved).toBe(total);
        expect(await usdc().balanceOf(to)).toBe(total);
        expect(await h.gateway.services.store.listQueuedCharges({ limit: 100 })).toEqual([]);
      }, 4);
    });
  });
}
