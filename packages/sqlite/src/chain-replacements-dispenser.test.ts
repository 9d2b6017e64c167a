/**
 * Dispenser claims whose transfer's nonce another transaction took, on a real anvil: a speed-up of
 * it (the same call under a new hash) is the claim's transfer, found however long ago it landed;
 * and two processes never release or complete each other's claims of one address.
 * (Settlement and x402: chain-replacements.test.ts.)
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeAbiParameters, keccak256 } from "viem";
import { describe, expect, it } from "vitest";
import { createGateway, createManualClock, createViemChain } from "@tollgate/core";
import { chainFaultsPerSuite, fundedAccount, withGateway } from "@tollgate/testing";
import { createSqliteStore } from "./store.js";
import { tempSqliteStores } from "./temp-stores.js";

const createStore = tempSqliteStores("chain-replacements-dispenser");
const SECRET = "chain-replacements-secret-00000001";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("dispenser transfers whose nonce another transaction took", () => {
  const faults = chainFaultsPerSuite();
  const { anvil, someone, pooled } = faults;

  const spedUp: [title: string, blocks: string][] = [
    ["dispenser: a claim whose transfer was sped up 64 blocks ago is claimed with the speed-up, once", "0x40"],
    // The address comes back an hour later on Base (1 000 blocks of 2 s; a claim is only finished when its address claims again).
    ["dispenser: a speed-up that landed 1,000 blocks before its address claims again is still found: claimed once", "0x3e8"],
  ];
  for (const [title, blocks] of spedUp)
    it(
      title,
      async () => {
        const wallet = await fundedAccount(faults.usdc.node);
        await faults.usdc.mint(wallet.address, 10_000_000n);
        const chain = { ...faults.usdc.chain, rpcUrl: faults.proxy.url };
        await withGateway(
          { createStore },
          async (h) => {
            const address = someone();
            await anvil("evm_setAutomine", [false]);
            // The node takes the send, but its answer is lost and the lookups lag: outcome unknown, claim pending.
            Object.assign(faults.proxy.state, { lose: 2, lag: 4 });
            const first = await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: faults.usdc.chain.chainId } });
            expect(first.status, JSON.stringify(first.body)).toBe(502);
            expect(first.body.error.details).toMatchObject({ outcomeUnknown: true });
            // The operator sees the dispenser's transfer stuck and speeds it up (the same call, a higher fee).
            await faults.speedUp(wallet.privateKey);
            await anvil("evm_mine");
            await anvil("evm_setAutomine", [true]);
            expect(await faults.usdc.balanceOf(address)).toBe(1_000_000n);
            await anvil("anvil_mine", [blocks]);
            h.clock.advance(3_600_000);
            const again = await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: faults.usdc.chain.chainId } });
            expect(await faults.usdc.balanceOf(address)).toBe(1_000_000n);
            expect(again.status, JSON.stringify(again.body)).toBe(409);
          },
          { chains: [chain], dispenser: { chains: [{ chainId: chain.chainId, privateKey: wallet.privateKey }] } },
        );
      },
      60_000,
    );

  it("dispenser, two processes: the original request, learning late that its transfer reverted, does not release the new claim a later request began; the address is paid once", async () => {
    const wallet = await fundedAccount(faults.usdc.node);
    await faults.usdc.mint(wallet.address, 10_000_000n);
    const filename = join(tmpdir(), `chain-replacements-dispenser-${process.pid}-${Date.now()}.db`);
    const [clockA, clockB] = [createManualClock(), createManualClock()];
    clockB.set(clockA.now() + 180_000); // B's request comes 3 minutes later (or B's clock runs ahead)
    const dispenser = { chains: [{ chainId: faults.usdc.chain.chainId, privateKey: wallet.privateKey }] };
    const a = createGateway({
      store: createSqliteStore({ filename }),
      clock: clockA,
      sweepIntervalMs: 0,
      internalSecret: SECRET,
      chains: [{ ...faults.usdc.chain, rpcUrl: faults.proxy.url }],
      dispenser,
    });
    const b = createGateway({
      store: createSqliteStore({ filename }),
      clock: clockB,
      sweepIntervalMs: 0,
      internalSecret: SECRET,
      chains: [faults.usdc.chain],
      dispenser,
    });
    const claim = async (g: typeof a, address: string) => {
      const res = await g.fetch(
        new Request("http://gateway.test/api/dispenser/claim", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ address, chainId: faults.usdc.chain.chainId }),
        }),
      );
      return { status: res.status, body: (await res.json()) as any };
    };
    // The storage slot of the wallet's token balance (to empty the dispenser, as transfers of another process would).
    const reader = createViemChain({ rpcUrl: faults.usdc.node.rpcUrl, chainId: faults.usdc.chain.chainId, usdc: faults.usdc.chain.usdc as `0x${string}` });
    const balance = await reader.balanceOf(wallet.address.toLowerCase() as `0x${string}`);
    let slot: `0x${string}` | undefined;
    for (let i = 0n; i < 16n && !slot; i++) {
      const s = keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [wallet.address, i]));
      if (BigInt((await anvil("eth_getStorageAt", [faults.usdc.chain.usdc, s, "latest"])) as string) === balance) slot = s;
    }
    expect(slot).toBeDefined();
    const setBalance = (v: bigint) => anvil("anvil_setStorageAt", [faults.usdc.chain.usdc, slot, `0x${v.toString(16).padStart(64, "0")}`]);
    const address = someone();
    try {
      await anvil("evm_setAutomine", [false]);
      // R1 (process A): claim taken, transfer signed, recorded and sent; A waits for the receipt.
      const r1 = claim(a, address);
      while (!(await pooled(wallet.address))) await sleep(20);
      const tx1 = (await pooled(wallet.address))!.hash;
      await sleep(700);
      // A's RPC is slow to answer its next receipt poll until B is well into its claim.
      let letAGo!: () => void;
      const aHeld = new Promise<void>((r) => (letAGo = r));
      faults.proxy.hooks.push({ match: (body) => body.includes("eth_getTransactionReceipt"), run: () => aHeld });
      // The dispenser ran dry before tx1 was mined: tx1 reverts. Then it is refilled.
      await setBalance(0n);
      await anvil("evm_mine");
      await setBalance(10_000_000n);
      // R2 (process B): the claim is 3 minutes old with a transfer recorded: finishStale sees tx1 reverted, releases, claims anew, sends tx2.
      const r2 = claim(b, address);
      while ((await pooled(wallet.address))?.hash === undefined || (await pooled(wallet.address))!.hash === tx1) await sleep(20);
      // Now A hears its receipt: reverted, so R1 releases "the" pending claim of the address: R2's.
      letAGo();
      expect((await r1).status).toBe(502); // its transfer reverted: the address may claim again, but the claim is no longer R1's
      await sleep(200);
      await anvil("evm_mine");
      expect((await r2).status).toBe(200);
      await anvil("evm_setAutomine", [true]);
      expect((await claim(b, address)).status).toBe(409);
      expect(await faults.usdc.balanceOf(address)).toBe(1_000_000n);
    } finally {
      await anvil("evm_setAutomine", [true]);
      await b.close();
      await a.close();
    }
  }, 60_000);
});
