/**
 * Settlement against wallets that will not pay, on a real anvil chain with the real gateway and a
 * SQLite store: a wallet whose charges always fail must not keep the others out of every batch, nor
 * a charge that failed once; charges on a chain without a spender must not either; a wallet that
 * drops its allowance just before the batch's transfer and restores it just after (a same-block
 * sandwich) is frozen all the same, since the transfer reverted; and a token that refuses every
 * transfer (paused) freezes no one.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createWalletClient, http, parseAbi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anvilRpc, approveUsdc, startRpcProxy, startUsdcNode, withGateway, type Harness, type RpcProxy, type UsdcNode } from "@tollgate/testing";
import { createSqliteStore } from "./store.js";
import { tempSqliteStores } from "./temp-stores.js";

const createStore = tempSqliteStores("settlement-hostile");
const SECRET = "hostile-wallets-s3cret";
const INTERNAL = "suite-internal-secret-0123456789";
const DAY = 86_400_000;
const asWallet = (a: string) => ({ "x-session-user-address": a, "x-internal-secret": INTERNAL });

/**
 * Runtime code of a paused token: `transferFrom` reverts "Pausable: paused", every other call is
 * delegated to `impl` (the token's own code, moved there), so reads still answer.
 */
function pausedTransferFrom(impl: string): string {
  const msg = Buffer.from("Pausable: paused");
  const data = "08c379a0" + (32).toString(16).padStart(64, "0") + msg.length.toString(16).padStart(64, "0") + msg.toString("hex").padEnd(64, "0");
  const head = (revertAt: number, okAt: number) =>
    "600035" +
    "60e01c" +
    "6323b872dd14" +
    "60" +
    revertAt.toString(16).padStart(2, "0") +
    "57" +
    "36600060003760006000366000" +
    "73" +
    impl.slice(2).toLowerCase() +
    "5af4" +
    "3d600060003e" +
    "60" +
    okAt.toString(16).padStart(2, "0") +
    "57" +
    "3d6000fd" +
    "5b3d6000f3";
  const probe = head(0, 0);
  const okAt = probe.length / 2 - 5;
  const revertAt = probe.length / 2;
  const tail = (dataAt: number) => "5b" + "6064" + "61" + dataAt.toString(16).padStart(4, "0") + "600039" + "60646000fd";
  const dataAt = revertAt + tail(0).length / 2;
  return "0x" + head(revertAt, okAt) + tail(dataAt) + data;
}

/** The key and charge steps of a test, through the gateway's own routes. */
function steps(h: Harness, chainId: number) {
  return {
    async create(owner: string, fields: Record<string, unknown> = {}) {
      const r = await h.call("POST", "/api/keys", {
        headers: asWallet(owner),
        body: { budgetLimit: "1000", expiresAt: h.clock.now() + 30 * DAY, networkId: chainId, purpose: "api", ...fields },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body as { keyId: string; token: string };
    },
    charge: (token: string, amount: string) => h.call("POST", "/api/keys/settle", { headers: { authorization: `Bearer ${token}` }, body: { amount } }),
    async batch() {
      const r = await h.call("POST", "/api/settlement/batch", { headers: { "x-internal-secret": SECRET } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as { totalGroups: number; failCount: number; results: { wallet: string; error?: string; txHash?: string }[] };
    },
    view: async (key: { keyId: string; token: string }) =>
      (await h.call("GET", `/api/keys/${key.keyId}`, { headers: { authorization: `Bearer ${key.token}` } })).body,
  };
}

describe("settlement against wallets that will not pay (anvil, SQLite)", () => {
  let usdc: UsdcNode;
  let proxy: RpcProxy;
  const dirs: string[] = [];
  beforeAll(async () => {
    usdc = await startUsdcNode();
    proxy = await startRpcProxy(usdc.node.rpcUrl);
  });
  afterAll(async () => {
    await proxy?.close();
    await usdc?.node.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const spender = () => usdc.node.accounts[1]!;
  const settlement = (treasury: string) => ({
    internalSecret: SECRET,
    treasury,
    chains: [{ chainId: usdc.chain.chainId, spenderPrivateKey: spender().privateKey }],
    intervalMs: false as const,
  });
  const approve = (w: { privateKey: `0x${string}` }, n: bigint) => approveUsdc(usdc.node, usdc.chain.usdc as `0x${string}`, w.privateKey, spender().address, n);
  type Wallet = { address: `0x${string}`; privateKey: `0x${string}` };
  /** Mints `amount` to `w` and approves the spender for it. */
  const fund = async (w: Wallet, amount: bigint) => {
    await usdc.mint(w.address, amount);
    await approve(w, amount);
  };
  /** A wallet funded for 1000 atoms that makes `n` charges of 1 atom, then withdraws its allowance. */
  const dustThenRevoke = async (s: ReturnType<typeof steps>, w: Wallet, n: number) => {
    await fund(w, 1_000n);
    const key = await s.create(w.address);
    for (let i = 0; i < n; i++) expect((await s.charge(key.token, "1")).status).toBe(200);
    await approve(w, 0n);
  };

  it(
    "a wallet with a whole batch of dust charges and no allowance delays the others by one batch at most; each underfunded wallet is frozen",
    { timeout: 120_000 },
    async () => {
      const treasury = "0x000000000000000000000000000000000000beef";
      await withGateway(
        { createStore },
        async (h) => {
          const s = steps(h, usdc.chain.chainId);
          // A: funded for 1000 atoms, makes 500 charges of 1 atom (a whole batch), then revokes its allowance.
          const attacker = usdc.node.accounts[2]!;
          await dustThenRevoke(s, attacker, 500);
          // B pays; C spends a daily window and withdraws its allowance.
          const honest = usdc.node.accounts[3]!;
          await fund(honest, 10_000n);
          const b = await s.create(honest.address);
          h.clock.advance(1);
          expect((await s.charge(b.token, "400")).status).toBe(200);
          const accomplice = usdc.node.accounts[4]!;
          await fund(accomplice, 100n);
          const c = await s.create(accomplice.address, { budgetLimit: "100", budgetPeriod: "daily" });
          expect((await s.charge(c.token, "100")).status).toBe(200);
          await approve(accomplice, 0n);

          const first = await s.batch();
          expect(first.results.map((r) => r.wallet)).toEqual([attacker.address.toLowerCase()]);
          expect(first.results[0]!.error).toContain("were cut");
          h.clock.advance(DAY);
          // The next batch takes the others first (A's failed charges only fill the room they leave):
          // B is collected, C is found underfunded and frozen.
          const second = await s.batch();
          const settled = new Map(second.results.map((r) => [r.wallet, r]));
          expect(settled.get(honest.address.toLowerCase())?.txHash).toMatch(/^0x/);
          expect(settled.get(accomplice.address.toLowerCase())?.error).toContain("were cut");
          expect(await usdc.balanceOf(treasury)).toBe(400n);
          expect(await usdc.balanceOf(honest.address)).toBe(9_600n);
          expect((await s.view(c)).budgetPeriod ?? null).toBeNull();
          // C cannot spend another day's window.
          h.clock.advance(DAY);
          expect((await s.charge(c.token, "100")).status).toBe(402);
        },
        { chains: [usdc.chain], settlement: settlement(treasury) },
      );
    },
  );

  it("charges queued on a chain without a spender (made before settlement was on) are left out of every batch", { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-settlement-hostile-"));
    dirs.push(dir);
    const file = join(dir, "gateway.db");
    const treasury = "0x000000000000000000000000000000000000f00d";
    // Before settlement: 500 charges on chain 8453, the operator's own credit.
    await withGateway({ createStore: () => createSqliteStore({ filename: file }) }, async (h) => {
      const s = steps(h, 8453);
      const k = await s.create("0x00000000000000000000000000000000000000a1");
      for (let i = 0; i < 500; i++) expect((await s.charge(k.token, "1")).status).toBe(200);
    });
    await withGateway(
      { createStore: () => createSqliteStore({ filename: file }) },
      async (h) => {
        const s = steps(h, usdc.chain.chainId);
        const honest = usdc.node.accounts[7]!;
        await fund(honest, 10_000n);
        h.clock.advance(DAY);
        const k = await s.create(honest.address);
        expect((await s.charge(k.token, "400")).status).toBe(200);
        const result = await s.batch();
        expect(result.results.map((r) => [r.wallet, r.error])).toEqual([[honest.address.toLowerCase(), undefined]]);
        expect(await usdc.balanceOf(treasury)).toBe(400n);
      },
      { chains: [usdc.chain], settlement: settlement(treasury) },
    );
  });

  it("a wallet that drops its allowance around the batch's transfer (it reverts) is frozen, though it can pay again after", { timeout: 60_000 }, async () => {
    const treasury = "0x000000000000000000000000000000000000cafe";
    await withGateway(
      { createStore },
      async (h) => {
        const s = steps(h, usdc.chain.chainId);
        const wallet = usdc.node.accounts[5]!;
        await usdc.mint(wallet.address, 10_000n);
        await approve(wallet, 1_000n);
        const key = await s.create(wallet.address, { budgetLimit: "500", budgetPeriod: "daily" });
        expect((await s.charge(key.token, "500")).status).toBe(200);
        // approve(0) right before the spender's transferFrom is mined, approve(10000) right after.
        proxy.hooks.push({
          match: (body) => body.includes("eth_sendRawTransaction"),
          run: async () => {
            await approve(wallet, 0n);
            proxy.hooks.push({ match: (body) => body.includes("eth_getTransactionReceipt"), run: async () => void (await approve(wallet, 10_000n)) });
          },
        });
        const r = await s.batch();
        expect(r.failCount).toBe(1);
        expect(r.results[0]!.error).toContain("reverted");
        expect(r.results[0]!.error).toContain("could not pay when the transfer ran");
        const view = await s.view(key);
        expect([view.budgetLimit, view.budgetPeriod ?? null]).toEqual(["500", null]);
        h.clock.advance(DAY);
        expect((await s.charge(key.token, "500")).status).toBe(402);
        expect(await usdc.balanceOf(treasury)).toBe(0n);
      },
      { chains: [{ ...usdc.chain, rpcUrl: proxy.url }], settlement: settlement(treasury) },
    );
  });

  it("a charge that failed once for no fault of its own is not kept out by an older wallet that keeps failing", { timeout: 120_000 }, async () => {
    const treasury = "0x000000000000000000000000000000000000d00d";
    const lease = 120_000;
    await withGateway(
      { createStore },
      async (h) => {
        const s = steps(h, usdc.chain.chainId);
        // A: three dust charges (a whole batch of 3), then no allowance.
        const attacker = usdc.node.accounts[6]!;
        await dustThenRevoke(s, attacker, 3);
        // B: honest and funded, one charge made after A's.
        const honest = usdc.node.accounts[8]!;
        await fund(honest, 10_000n);
        h.clock.advance(1);
        const b = await s.create(honest.address);
        expect((await s.charge(b.token, "400")).status).toBe(200);
        expect((await s.batch()).results.map((r) => r.wallet)).toEqual([attacker.address.toLowerCase()]);
        // B is claimed with two of A's, and time runs short in that batch: B never failed, so its
        // group runs before A's, and a group the batch has no time for keeps its place.
        proxy.hooks.push({ match: () => true, run: async () => void h.clock.advance(lease / 2) });
        const second = await s.batch();
        expect(second.results.find((r) => r.wallet === honest.address.toLowerCase())?.error ?? "").not.toContain("transferFrom");
        for (let i = 0; i < 2 && (await usdc.balanceOf(treasury)) === 0n; i++) {
          h.clock.advance(lease);
          await s.batch();
        }
        expect(await usdc.balanceOf(treasury)).toBe(400n);
      },
      { chains: [{ ...usdc.chain, rpcUrl: proxy.url }], settlement: { ...settlement(treasury), batchLimit: 3 } },
    );
  });

  it("a paused token (every transfer reverts, reads answer) freezes no wallet", { timeout: 60_000 }, async () => {
    const treasury = "0x000000000000000000000000000000000000abcd";
    const token = usdc.chain.usdc;
    await withGateway(
      { createStore },
      async (h) => {
        const s = steps(h, usdc.chain.chainId);
        const wallet = usdc.node.accounts[9]!;
        await fund(wallet, 10_000n);
        const key = await s.create(wallet.address, { budgetPeriod: "daily" });
        expect((await s.charge(key.token, "400")).status).toBe(200);
        const original = (await anvilRpc(usdc.node, "eth_getCode", [token, "latest"])) as string;
        const impl = "0x00000000000000000000000000000000000c0de1";
        await anvilRpc(usdc.node, "anvil_setCode", [impl, original]);
        await anvilRpc(usdc.node, "anvil_setCode", [token, pausedTransferFrom(impl)]);
        let result: { error?: string };
        try {
          result = (await s.batch()).results[0]!;
        } finally {
          await anvilRpc(usdc.node, "anvil_setCode", [token, original]);
        }
        expect(result.error).toContain("Pausable: paused");
        expect(result.error).not.toContain("were cut");
        const view = await s.view(key);
        expect([view.budgetLimit, view.budgetPeriod ?? null]).toEqual(["1000", "daily"]);
      },
      { chains: [usdc.chain], settlement: settlement(treasury) },
    );
  });

  it("on a slow RPC, a batch runs the groups that never failed before the failing ones: an honest charge is collected", { timeout: 120_000 }, async () => {
    const treasury = "0x000000000000000000000000000000000000a002";
    const lease = 120_000;
    await withGateway(
      { createStore },
      async (h) => {
        const s = steps(h, usdc.chain.chainId);
        for (const a of [usdc.node.accounts[3]!, usdc.node.accounts[4]!, usdc.node.accounts[5]!, usdc.node.accounts[6]!]) await dustThenRevoke(s, a, 1);
        const honest = usdc.node.accounts[7]!;
        await fund(honest, 10_000n);
        h.clock.advance(1);
        const b = await s.create(honest.address);
        expect((await s.charge(b.token, "400")).status).toBe(200);
        // Every RPC call costs lease/24 of the batch's time (as ~500 wallets at ~40 ms a call would).
        let slow = true;
        const hook = {
          match: () => slow,
          run: async () => {
            h.clock.advance(lease / 24);
            if (slow) proxy.hooks.push(hook);
          },
        };
        proxy.hooks.push(hook);
        try {
          for (let i = 0; i < 2 && (await usdc.balanceOf(treasury)) === 0n; i++) {
            await s.batch();
            h.clock.advance(lease);
          }
        } finally {
          slow = false;
          proxy.hooks.splice(0, proxy.hooks.length);
        }
        expect(await usdc.balanceOf(treasury)).toBe(400n);
      },
      { chains: [{ ...usdc.chain, rpcUrl: proxy.url }], settlement: settlement(treasury) },
    );
  });

  it("a transfer that runs out of gas (the treasury swept its balance while it was in flight) freezes no wallet", { timeout: 60_000 }, async () => {
    const treasuryAccount = usdc.node.accounts[0]!;
    const treasury = treasuryAccount.address;
    const sweeper = createWalletClient({ account: privateKeyToAccount(treasuryAccount.privateKey), transport: http(usdc.node.rpcUrl) });
    await withGateway(
      { createStore },
      async (h) => {
        const s = steps(h, usdc.chain.chainId);
        const wallet = usdc.node.accounts[2]!;
        await fund(wallet, 10_000n);
        const key = await s.create(wallet.address, { budgetPeriod: "daily" });
        expect((await s.charge(key.token, "400")).status).toBe(200);
        // The treasury holds earlier revenue when the transfer's gas is estimated, and sweeps it before the transfer runs.
        await usdc.mint(treasury, 5n);
        proxy.hooks.push({
          match: (body) => body.includes("eth_sendRawTransaction"),
          run: async () => {
            const abi = parseAbi(["function transfer(address,uint256) returns (bool)"]);
            await sweeper.writeContract({
              chain: null,
              address: usdc.chain.usdc as `0x${string}`,
              abi,
              functionName: "transfer",
              args: ["0x00000000000000000000000000000000000c01d0", await usdc.balanceOf(treasury)],
            });
          },
        });
        const result = (await s.batch()).results[0]!;
        // The gas headroom lets it through; had it run out, that is not the wallet's refusal.
        if (result.error !== undefined) expect(result.error).toContain("ran out of gas");
        expect(result.error ?? "").not.toContain("were cut");
        const view = await s.view(key);
        expect([view.budgetLimit, view.budgetPeriod ?? null]).toEqual(["1000", "daily"]);
      },
      { chains: [{ ...usdc.chain, rpcUrl: proxy.url }], settlement: settlement(treasury) },
    );
  });
});
