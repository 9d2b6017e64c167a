/**
 * The funding suite (docs/settlement.md "Keys are backed by the wallet's funds") through
 * `gateway.fetch` on a real store and a real anvil node: a key's budget on a settlement chain
 * needs the wallet's allowance to the spender and its balance; queued charges and the other live
 * keys count; a batch that cannot collect freezes the wallet's keys at what they committed. A
 * store's test file runs it in one line:
 *
 * ```ts
 * runFundingRouteSuite("sqlite", { createStore: () => createSqliteStore({ filename: tmpFile() }) });
 * ```
 */
import { describe, expect, it } from "vitest";
import { EXPIRY_SLACK_MS, type GatewayOptions } from "@tollgate/core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { approveUsdc, type AnvilAccount } from "./anvil.js";
import { DEAD_CHAIN, freshAddress, SOME_KEY, usdcNodePerSuite } from "./gateway-suite-dispenser.js";
import { asWallet, bearer, DAY, expectError, PREPARE, withGateway, type GatewaySuiteOptions, type Harness, type Reply } from "./gateway-suite-fixtures.js";

const SECRET = "funding-s3cret-s3cret";

/** Registers the funding suite for the store `name` in the current vitest file. */
export function runFundingRouteSuite(name: string, options: GatewaySuiteOptions): void {
  describe(`key funding: ${name}`, () => {
    it("a key on a settlement chain whose RPC does not answer is 503 chain_unavailable; requireFunding false extends the credit", async () => {
      const settlement = { internalSecret: SECRET, treasury: freshAddress(), chains: [{ chainId: DEAD_CHAIN.chainId, spenderPrivateKey: SOME_KEY }] };
      const body = { budgetLimit: "100", expiresAt: 0, networkId: DEAD_CHAIN.chainId, purpose: "api" };
      await withGateway(
        options,
        async (h) => {
          const r = await h.call("POST", "/api/keys", { headers: asWallet(), body: { ...body, expiresAt: h.clock.now() + DAY } });
          expect(expectError(r, 503, "chain_unavailable").message).toContain(`chain ${DEAD_CHAIN.chainId}`);
          expect((await h.call("GET", "/api/keys", { headers: asWallet() })).body.keys).toEqual([]);
        },
        { chains: [DEAD_CHAIN], settlement },
      );
      await withGateway(options, async (h) => void (await h.createKey({ budgetLimit: "100", networkId: DEAD_CHAIN.chainId })), {
        chains: [DEAD_CHAIN],
        settlement: { ...settlement, requireFunding: false },
      });
    });

    describe("on anvil", () => {
      const usdc = usdcNodePerSuite();
      const spender = () => usdc().node.accounts[1]!;
      const onChain = (): Partial<GatewayOptions> => ({
        chains: [usdc().chain],
        settlement: { internalSecret: SECRET, treasury: freshAddress(), chains: [{ chainId: usdc().chain.chainId, spenderPrivateKey: spender().privateKey }] },
      });
      const run = (title: string, fn: (h: Harness) => Promise<void>) => it(title, () => withGateway(options, fn, onChain()));
      const approve = (wallet: AnvilAccount, amount: bigint) =>
        approveUsdc(usdc().node, usdc().chain.usdc as `0x${string}`, wallet.privateKey, spender().address, amount);
      const chainId = () => usdc().chain.chainId;
      /** Dev account `index`, minted `balance` test USDC, with `allowance` approved to the spender. */
      const funded = async (index: number, balance: bigint, allowance: bigint): Promise<AnvilAccount> => {
        const wallet = usdc().node.accounts[index]!;
        await usdc().mint(wallet.address, balance);
        await approve(wallet, allowance);
        return wallet;
      };
      /** A new wallet with gas for its approvals (the node's dev accounts are taken by the other tests). */
      const freshWallet = async (): Promise<AnvilAccount> => {
        const privateKey = generatePrivateKey();
        const address = privateKeyToAccount(privateKey).address.toLowerCase() as `0x${string}`;
        const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setBalance", params: [address, "0x8ac7230489e80000"] });
        expect((await fetch(usdc().node.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body })).status).toBe(200);
        return { address, privateKey };
      };
      const create = (h: Harness, owner: string, fields: Record<string, unknown>) =>
        h.call("POST", "/api/keys", {
          headers: asWallet(owner),
          body: { budgetLimit: "100", expiresAt: h.clock.now() + DAY, networkId: chainId(), purpose: "api", ...fields },
        });
      const refused = (r: Reply, funds: { allowance: bigint; balance: bigint; required: bigint }, param = "budgetLimit") => {
        const e = expectError(r, 402, "insufficient_funds", param);
        expect(e.details).toEqual({
          chainId: chainId(),
          spender: spender().address.toLowerCase(),
          allowance: `${funds.allowance}`,
          balance: `${funds.balance}`,
          required: `${funds.required}`,
        });
      };
      const keysOf = async (h: Harness, owner: string) => (await h.call("GET", "/api/keys", { headers: asWallet(owner) })).body.keys as any[];
      /** Prepare `reserve`, then settle `spend` of it (no settle when `spend` is undefined: the reservation stays open). */
      const pay = async (h: Harness, token: string, reserve: number, spend?: number) => {
        const prepared = await h.prepare(token, { ...PREPARE, maxAmountWei: String(reserve) }, { "x-network-id": String(chainId()) });
        expect(prepared.status, JSON.stringify(prepared.body)).toBe(200);
        if (spend === undefined) return prepared.body.paymentIntentId as string;
        const settled = await h.settle({ paymentIntentId: prepared.body.paymentIntentId, finalAmountWei: String(spend) });
        expect(settled.status, JSON.stringify(settled.body)).toBe(200);
        return prepared.body.paymentIntentId as string;
      };
      const batch = async (h: Harness) => {
        const r = await h.call("POST", "/api/settlement/batch", { headers: { "x-internal-secret": SECRET } });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body;
      };

      run("creating a key needs min(allowance, balance) to cover every live key's budget; refused writes nothing", async (h) => {
        const poor = freshAddress();
        refused(await create(h, poor, { budgetLimit: "1" }), { allowance: 0n, balance: 0n, required: 1n });
        const wallet = usdc().node.accounts[2]!;
        await usdc().mint(wallet.address, 1_000n);
        refused(await create(h, wallet.address, { budgetLimit: "500" }), { allowance: 0n, balance: 1_000n, required: 500n });
        expect(await keysOf(h, wallet.address)).toEqual([]);
        await approve(wallet, 600n);
        expect((await create(h, wallet.address, { budgetLimit: "500" })).status).toBe(201);
        refused(await create(h, wallet.address, { budgetLimit: "101" }), { allowance: 600n, balance: 1_000n, required: 601n });
        expect((await create(h, wallet.address, { budgetLimit: "100" })).status).toBe(201);
        // The balance binds too: a large allowance does not cover what the wallet does not hold.
        await approve(wallet, 5_000n);
        refused(await create(h, wallet.address, { budgetLimit: "401" }), { allowance: 5_000n, balance: 1_000n, required: 1_001n });
        // A revoked or expired key no longer counts; a new session key replaces the live one.
        const keys = await keysOf(h, wallet.address);
        expect(keys).toHaveLength(2);
        expect((await h.call("DELETE", `/api/keys/${keys.find((k) => k.budgetLimit === "100").keyId}`, { headers: asWallet(wallet.address) })).status).toBe(
          200,
        );
        expect((await create(h, wallet.address, { budgetLimit: "500", purpose: "session" })).status).toBe(201);
        expect((await create(h, wallet.address, { budgetLimit: "500", purpose: "session" })).status).toBe(201);
        refused(await create(h, wallet.address, { budgetLimit: "1" }), { allowance: 5_000n, balance: 1_000n, required: 1_001n });
        // A chain without a settlement spender is refused outright: nothing would ever collect what a key there spends.
        expectError(await create(h, wallet.address, { budgetLimit: "1000000", networkId: 8453 }), 400, "invalid_request", "chainId");
      });

      run("creates at once cannot both take the same headroom", async (h) => {
        const wallet = await funded(3, 1_000n, 1_000n);
        const results = await Promise.all(Array.from({ length: 8 }, () => create(h, wallet.address, { budgetLimit: "300" })));
        expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 402, 402, 402, 402, 402]);
        expect(await keysOf(h, wallet.address)).toHaveLength(3);
      });

      run("queued charges count until settled; a raise or a revived key needs the funds; a batch frees what it collected", async (h) => {
        const wallet = await funded(4, 10_000n, 1_000n);
        const first = (await create(h, wallet.address, { budgetLimit: "600" })).body;
        await pay(h, first.token, 500, 400);
        // Exposure: 200 unspent + 400 queued.
        refused(await create(h, wallet.address, { budgetLimit: "401" }), { allowance: 1_000n, balance: 10_000n, required: 1_001n });
        const second = (await create(h, wallet.address, { budgetLimit: "400", expiresAt: h.clock.now() + 1_000 })).body;
        const patch = (keyId: string, body: Record<string, unknown>) => h.call("PATCH", `/api/keys/${keyId}`, { headers: asWallet(wallet.address), body });
        refused(await patch(first.keyId, { budgetLimit: "700" }), { allowance: 1_000n, balance: 10_000n, required: 1_100n });
        // Lowering, renaming and a same-size change need nothing.
        expect((await patch(first.keyId, { name: "renamed", budgetLimit: "600" })).status).toBe(200);
        h.clock.advance(2_000 + EXPIRY_SLACK_MS);
        // The second key expired (a minute ago: a prepare begun before may still reserve up to then):
        // its budget no longer counts, and reviving it needs the funds again.
        expect((await patch(first.keyId, { budgetLimit: "700" })).status).toBe(200);
        refused(await patch(second.keyId, { expiresAt: h.clock.now() + DAY }), { allowance: 1_000n, balance: 10_000n, required: 1_100n }, "expiresAt");
        // The batch collects the 400: the allowance falls by as much as the queue, so the headroom stays.
        expect(await batch(h)).toMatchObject({ successCount: 1, totalValueWei: "400" });
        refused(await patch(second.keyId, { expiresAt: h.clock.now() + DAY }), { allowance: 600n, balance: 9_600n, required: 700n }, "expiresAt");
        expect((await patch(first.keyId, { budgetLimit: "1000" })).status).toBe(200);
        // A budget period's fresh window is new spending power too.
        refused(await patch(first.keyId, { budgetPeriod: "daily" }), { allowance: 600n, balance: 9_600n, required: 1_000n }, "budgetPeriod");
      });

      run("a batch that cannot collect freezes the wallet's keys at what they committed, recorded; raising them again needs the funds", async (h) => {
        const wallet = await funded(5, 10_000n, 2_000n);
        const key = (await create(h, wallet.address, { budgetLimit: "1000", budgetPeriod: "daily" })).body;
        const other = (await create(h, wallet.address, { budgetLimit: "500" })).body;
        await pay(h, key.token, 300, 300);
        const open = await pay(h, key.token, 50);
        // The wallet withdraws its allowance after spending.
        await approve(wallet, 0n);
        const failed = await batch(h);
        expect(failed).toMatchObject({ totalGroups: 1, successCount: 0, failCount: 1 });
        expect(failed.results[0].error).toContain("insufficient allowance");
        expect(failed.results[0].error).toContain("allowance 0, balance 10000; its 2 live keys");
        const inspect = async (k: { keyId: string; token: string }) => (await h.call("GET", `/api/keys/${k.keyId}`, { headers: bearer(k.token) })).body;
        const frozen = await inspect(key);
        expect(frozen).toMatchObject({ budgetLimit: "350", budgetUsed: "300", budgetReserved: "50", budgetRemaining: "0" });
        expect(frozen.budgetPeriod).toBeUndefined();
        expect(await inspect(other)).toMatchObject({ budgetLimit: "0", budgetRemaining: "0" });
        // Nothing new fits; the reservation already held still settles.
        expectError(await h.prepare(other.token, { ...PREPARE, maxAmountWei: "1" }, { "x-network-id": String(chainId()) }), 402, "budget_exhausted");
        expectError(await h.prepare(key.token, { ...PREPARE, maxAmountWei: "1" }, { "x-network-id": String(chainId()) }), 402, "budget_exhausted");
        expect((await h.settle({ paymentIntentId: open, finalAmountWei: "50" })).status).toBe(200);
        const events = (await h.call("GET", `/api/keys/${key.keyId}/events`, { headers: asWallet(wallet.address) })).body.events;
        expect(events[0]).toMatchObject({
          actor: `settlement:${failed.runId}`,
          changes: { budgetLimit: { from: "1000", to: "350" }, budgetPeriod: { from: "daily", to: null } },
        });
        // Raising needs the funds: the queue (350) and the other keys count.
        const raise = (limit: string) => h.call("PATCH", `/api/keys/${key.keyId}`, { headers: asWallet(wallet.address), body: { budgetLimit: limit } });
        refused(await raise("400"), { allowance: 0n, balance: 10_000n, required: 400n });
        await approve(wallet, 1_000n);
        expect(await batch(h)).toMatchObject({ successCount: 1, totalValueWei: "350" });
        expect((await raise("1000")).status).toBe(200);
        refused(await raise("1001"), { allowance: 650n, balance: 9_650n, required: 651n });
        // Operators see both on /metrics.
        const metrics = await (await h.gateway.fetch(new Request("http://gateway.test/metrics"))).text();
        expect(metrics).toMatch(/^tollgate_frozen_wallets_total 1$/m);
        expect(metrics).toMatch(/^tollgate_frozen_keys_total 2$/m);
        expect(metrics).toMatch(/^tollgate_funding_refusals_total 2$/m);
      });

      run("a budget window that lapsed counts its whole limit again, and a freeze cuts it to the new window's use", async (h) => {
        const wallet = await funded(7, 10_000n, 1_000n);
        const key = (await create(h, wallet.address, { budgetLimit: "600", budgetPeriod: "daily", expiresAt: h.clock.now() + 7 * DAY })).body;
        await pay(h, key.token, 600, 600);
        // Today: 0 unspent + 600 queued.
        expect((await create(h, wallet.address, { budgetLimit: "400" })).status).toBe(201);
        const spare = (await keysOf(h, wallet.address)).find((k) => k.budgetLimit === "400");
        expect((await h.call("DELETE", `/api/keys/${spare.keyId}`, { headers: asWallet(wallet.address) })).status).toBe(200);
        h.clock.advance(DAY);
        // Tomorrow the key may spend 600 again, beside the 600 still queued.
        refused(await create(h, wallet.address, { budgetLimit: "1", expiresAt: h.clock.now() + DAY }), {
          allowance: 1_000n,
          balance: 10_000n,
          required: 1_201n,
        });
        await pay(h, key.token, 100, 100);
        await approve(wallet, 0n);
        expect(await batch(h)).toMatchObject({ failCount: 1 });
        // Frozen at today's 100, not at yesterday's 600.
        expect((await h.call("GET", `/api/keys/${key.keyId}`, { headers: bearer(key.token) })).body).toMatchObject({
          budgetLimit: "100",
          budgetUsed: "100",
          budgetRemaining: "0",
        });
      });

      run("a payment outlives its key: the open reservations of revoked and expired keys still count", async (h) => {
        const wallet = await funded(8, 10_000n, 2_000n);
        const first = (await create(h, wallet.address, { budgetLimit: "1000" })).body;
        const held = await pay(h, first.token, 600);
        expect((await h.call("DELETE", `/api/keys/${first.keyId}`, { headers: asWallet(wallet.address) })).status).toBe(200);
        refused(await create(h, wallet.address, { budgetLimit: "1401" }), { allowance: 2_000n, balance: 10_000n, required: 2_001n });
        const second = (await create(h, wallet.address, { budgetLimit: "1400", expiresAt: h.clock.now() + 1_000 })).body;
        await pay(h, second.token, 400);
        h.clock.advance(2_000 + EXPIRY_SLACK_MS);
        // The second key expired holding 400; the first key's 600 is still open.
        refused(await create(h, wallet.address, { budgetLimit: "1001" }), { allowance: 2_000n, balance: 10_000n, required: 2_001n });
        // Settling moves the 600 from the reservation to the queue: still counted once.
        expect((await h.settle({ paymentIntentId: held, finalAmountWei: "600" })).status).toBe(200);
        refused(await create(h, wallet.address, { budgetLimit: "1001" }), { allowance: 2_000n, balance: 10_000n, required: 2_001n });
        expect((await create(h, wallet.address, { budgetLimit: "1000" })).status).toBe(201);
      });

      run("a create racing an abort of the wallet's reservation counts the amount in one place or the other, never in neither", async (h) => {
        const wallet = await freshWallet();
        await usdc().mint(wallet.address, 10_000n);
        await approve(wallet, 20_000n);
        const key = (await create(h, wallet.address, { budgetLimit: "10000" })).body;
        // The key's whole budget counts whether it is reserved or not: an abort only moves it back.
        // Each round starts the abort a few more ticks into the create, to land between its reads.
        const later = async <T>(ticks: number, fn: () => Promise<T>): Promise<T> => {
          for (let i = 0; i < ticks; i++) await Promise.resolve();
          return fn();
        };
        for (let round = 0; round < 60; round++) {
          const held = await pay(h, key.token, 10_000);
          const [created, aborted] = await Promise.all([
            create(h, wallet.address, { budgetLimit: "1" }),
            later(round, () => h.call("POST", "/api/payments/abort", { body: { paymentIntentId: held } })),
          ]);
          expect(aborted.status, JSON.stringify(aborted.body)).toBe(200);
          refused(created, { allowance: 20_000n, balance: 10_000n, required: 10_001n });
        }
        expect(await keysOf(h, wallet.address)).toHaveLength(1);
      });

      run("two changes of one key at once are judged one after the other, each from the key as stored", async (h) => {
        const wallet = await funded(9, 10_000n, 2_000n);
        const key = (await create(h, wallet.address, { budgetLimit: "1000" })).body;
        await pay(h, key.token, 900, 900);
        const patch = (body: Record<string, unknown>) => h.call("PATCH", `/api/keys/${key.keyId}`, { headers: asWallet(wallet.address), body });
        // Each alone fits (a fresh window: 1000 + 900 queued; a limit of 2000: 1100 + 900); both would be 2000 + 900.
        const results = await Promise.all([patch({ budgetPeriod: "daily" }), patch({ budgetLimit: "2000" })]);
        expect(results.map((r) => r.status).sort()).toEqual([200, 402]);
        // The loser names the field it changed: whichever of the two came second.
        const loser = results.find((r) => r.status === 402)!;
        expect(["budgetLimit", "budgetPeriod"]).toContain(expectError(loser, 402, "insufficient_funds").param);
      });

      run("a batch that fails for a funded wallet freezes nothing", async (h) => {
        const wallet = await funded(6, 1_000n, 1_000n);
        const key = (await create(h, wallet.address, { budgetLimit: "500" })).body;
        await pay(h, key.token, 100, 100);
        // The spender has no gas: the transfer fails although the wallet could pay.
        await fetch(usdc().node.rpcUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setBalance", params: [spender().address, "0x0"] }),
        });
        try {
          const failed = await batch(h);
          expect(failed).toMatchObject({ failCount: 1 });
          expect(failed.results[0].error).not.toContain("were cut");
          expect((await h.call("GET", `/api/keys/${key.keyId}`, { headers: bearer(key.token) })).body).toMatchObject({ budgetLimit: "500" });
        } finally {
          await fetch(usdc().node.rpcUrl, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setBalance", params: [spender().address, "0x3635c9adc5dea00000"] }),
          });
        }
      });
    });
  });
}
