/**
 * Writes whose answer is lost between the gateway and its RPC: a proxy in front of a real anvil
 * forwards `eth_sendRawTransaction` (anvil mines it at once) and answers the gateway 502, or drops
 * it without forwarding. A transfer that was taken is recognised as sent (its hash, known before
 * the send, is on the node), so the dispenser pays an address once; one whose fate is unknown keeps
 * its claim pending rather than paying again, until a later claim finishes that very transaction.
 * (Settlement batches: settlement-unknown-outcomes.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { chainFaultsPerSuite, withGateway, type Harness } from "@tollgate/testing";
import { tempSqliteStores } from "./temp-stores.js";

const createStore = tempSqliteStores("chain-lost-answers");

describe("chain writes whose answer is lost", () => {
  const faults = chainFaultsPerSuite();

  /** A test body on a gateway whose dispenser is anvil account `account`, through the proxy. */
  const dispenserGateway = (account: number, fn: Parameters<typeof withGateway>[1]) => async () => {
    const wallet = faults.usdc.node.accounts[account]!;
    const chain = { ...faults.usdc.chain, rpcUrl: faults.proxy.url };
    await faults.usdc.mint(wallet.address, 10_000_000n);
    await withGateway({ createStore }, fn, { chains: [chain], dispenser: { chains: [{ chainId: chain.chainId, privateKey: wallet.privateKey }] } });
  };
  const { anvil, someone } = faults;
  /** `POST /api/dispenser/claim` of `address` on the test chain. */
  const claim = (h: Harness, address: string) => h.call("POST", "/api/dispenser/claim", { body: { address, chainId: faults.usdc.chain.chainId } });

  it(
    "a send taken by the node whose answer is lost (and any retry's too): the claim succeeds with that transaction, and pays once",
    dispenserGateway(5, async (h) => {
      const address = someone();
      faults.proxy.state.lose = 2;
      const before = faults.proxy.state.forwarded;
      const first = await claim(h, address);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.txHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(faults.proxy.state.forwarded - before).toBeGreaterThanOrEqual(1);
      const again = await claim(h, address);
      expect(again.status).toBe(409);
      expect(await faults.usdc.balanceOf(address)).toBe(1_000_000n);
    }),
  );

  it(
    "a send that never reached the node: 502 with an unknown outcome, the claim stays pending, and nothing is paid twice",
    dispenserGateway(6, async (h) => {
      const address = someone();
      faults.proxy.state.drop = 2;
      const first = await claim(h, address);
      expect(first.status).toBe(502);
      expect(first.body.error.details).toMatchObject({ outcomeUnknown: true });
      expect(first.body.error.message).toMatch(/sent as 0x[0-9a-f]{64}; it may still land/);
      const again = await claim(h, address);
      expect(again.status).toBe(409);
      expect(await faults.usdc.balanceOf(address)).toBe(0n);
    }),
  );

  it(
    "a JSON-RPC error after the node took the send, its lookup lagging: not taken for a refusal; the address is paid once",
    dispenserGateway(9, async (h) => {
      const address = someone();
      Object.assign(faults.proxy.state, { rpcError: 1, lag: 2 });
      expect((await claim(h, address)).status).toBe(200);
      expect((await claim(h, address)).status).toBe(409);
      expect(await faults.usdc.balanceOf(address)).toBe(1_000_000n);
    }),
  );

  it(
    "a provider that resends our transaction answers nonce too low, its lookup lagging: not signed again; the address is paid once",
    dispenserGateway(4, async (h) => {
      const address = someone();
      Object.assign(faults.proxy.state, { resend: 1, lag: 2 });
      expect((await claim(h, address)).status).toBe(200);
      expect(await faults.usdc.balanceOf(address)).toBe(1_000_000n);
    }),
  );

  it(
    "the same with its lookups lagging past the wait: the block that used the nonce shows this transfer, so it is not signed again; the address is paid once",
    dispenserGateway(2, async (h) => {
      const address = someone();
      Object.assign(faults.proxy.state, { resend: 1, lag: 5 });
      // 200 when the second node answers "nonce too low"; a loaded anvil that has not mined the first
      // send yet answers "already known", which leaves the outcome unknown (502), finished by a later claim.
      const first = await claim(h, address);
      expect([200, 502]).toContain(first.status);
      if (first.status === 502) h.clock.advance(180_000);
      expect((await claim(h, address)).status).toBe(409);
      expect(await faults.usdc.balanceOf(address)).toBe(1_000_000n);
    }),
  );

  it(
    "a claim whose send never reached the node: the address's next claim after 3 minutes sends the very same transaction, and it is paid once",
    dispenserGateway(7, async (h) => {
      const address = someone();
      faults.proxy.state.drop = 2;
      expect((await claim(h, address)).status).toBe(502);
      faults.proxy.state.drop = 0; // the transport may or may not have retried the send
      // Too soon: its own request may still be waiting for it.
      h.clock.advance(170_000);
      expect((await claim(h, address)).status).toBe(409);
      expect(await faults.usdc.balanceOf(address)).toBe(0n);
      h.clock.advance(10_000);
      const again = await claim(h, address);
      expect(again.status).toBe(409);
      const check = await h.call("GET", `/api/dispenser/check/${address}`);
      expect(check.body.claims).toEqual([expect.objectContaining({ status: "claimed", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })]);
      expect(await faults.usdc.balanceOf(address)).toBe(1_000_000n);
    }),
  );

  it(
    "a claim whose send never reached the node and whose nonce went to another transaction: released, so the next claim pays once",
    dispenserGateway(8, async (h) => {
      const address = someone();
      faults.proxy.state.drop = 2;
      expect((await claim(h, address)).status).toBe(502);
      faults.proxy.state.drop = 0;
      const wallet = faults.usdc.node.accounts[8]!.address;
      await anvil("eth_sendTransaction", [{ from: wallet, to: wallet, value: "0x0" }]);
      h.clock.advance(180_000);
      // Judged only once the nonce is 64 blocks deep (before: a lagging node may not show the transfer yet).
      expect((await claim(h, address)).status).toBe(409);
      await anvil("anvil_mine", ["0x40"]);
      const again = await claim(h, address);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(await faults.usdc.balanceOf(address)).toBe(1_000_000n);
    }),
  );

  it(
    "a claim left pending with no transfer recorded (its process died before signing): the address's next claim after 3 minutes releases it and is paid once",
    dispenserGateway(3, async (h) => {
      const address = someone();
      const chainId = faults.usdc.chain.chainId;
      // What a process killed between taking the claim and recording its signed transfer leaves behind.
      expect((await h.gateway.services.store.beginDispenserClaim({ claim: { address, chainId, amount: 1_000_000n, createdAt: h.clock.now() } })).ok).toBe(true);
      h.clock.advance(170_000);
      expect((await claim(h, address)).status).toBe(409);
      h.clock.advance(10_000);
      const again = await claim(h, address);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect((await claim(h, address)).status).toBe(409);
      expect(await faults.usdc.balanceOf(address)).toBe(1_000_000n);
    }),
  );
});
