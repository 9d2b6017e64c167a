/**
 * Writes whose answer is lost between the gateway and its RPC: a proxy in front of a real anvil
 * forwards `eth_sendRawTransaction` (anvil mines it at once) and answers the gateway 502, or drops
 * it without forwarding. A transfer that was taken is recognised as sent (its hash, known before
 * the send, is on the node), so the dispenser pays an address once and a settlement batch moves a
 * charge once; one whose fate is unknown keeps its claim pending rather than paying again.
 */
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { approveUsdc, startRpcProxy, startUsdcNode, withGateway, type RpcProxy, type UsdcNode } from "@tollgate/testing";
import { tempSqliteStores } from "./temp-stores.js";

const createStore = tempSqliteStores("chain-lost-answers");
const SECRET = "lost-answers-settlement-secret-0123";

describe("chain writes whose answer is lost", () => {
  let usdc: UsdcNode;
  let proxy: RpcProxy;
  beforeAll(async () => {
    usdc = await startUsdcNode();
    proxy = await startRpcProxy(usdc.node.rpcUrl);
  }, 60_000);
  afterEach(() => {
    // What a test's transport did not consume (it may or may not retry a failed send) must not leak into the next.
    Object.assign(proxy.state, { lose: 0, drop: 0, rpcError: 0, resend: 0, lag: 0 });
  });
  afterAll(async () => {
    await proxy?.close();
    await usdc?.node.stop();
  });

  /** A test body on a gateway whose dispenser is anvil account `account`, through the proxy. */
  const dispenserGateway = (account: number, fn: Parameters<typeof withGateway>[1]) => async () => {
    const wallet = usdc.node.accounts[account]!;
    const chain = { ...usdc.chain, rpcUrl: proxy.url };
    await usdc.mint(wallet.address, 10_000_000n);
    await withGateway({ createStore }, fn, { chains: [chain], dispenser: { chains: [{ chainId: chain.chainId, privateKey: wallet.privateKey }] } });
  };
  const someone = () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase();

  it(
    "a send taken by the node whose answer is lost (and any retry's too): the claim succeeds with that transaction, and pays once",
    dispenserGateway(5, async (h) => {
      const address = someone();
      proxy.state.lose = 2;
      const before = proxy.state.forwarded;
      const first = await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: usdc.chain.chainId } });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.txHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(proxy.state.forwarded - before).toBeGreaterThanOrEqual(1);
      const again = await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: usdc.chain.chainId } });
      expect(again.status).toBe(409);
      expect(await usdc.balanceOf(address)).toBe(1_000_000n);
    }),
  );

  it(
    "a send that never reached the node: 502 with an unknown outcome, the claim stays pending, and nothing is paid twice",
    dispenserGateway(6, async (h) => {
      const address = someone();
      proxy.state.drop = 2;
      const first = await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: usdc.chain.chainId } });
      expect(first.status).toBe(502);
      expect(first.body.error.details).toMatchObject({ outcomeUnknown: true });
      expect(first.body.error.message).toMatch(/sent as 0x[0-9a-f]{64}; it may still land/);
      const again = await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: usdc.chain.chainId } });
      expect(again.status).toBe(409);
      expect(await usdc.balanceOf(address)).toBe(0n);
    }),
  );

  it(
    "a JSON-RPC error after the node took the send, its lookup lagging: not taken for a refusal; the address is paid once",
    dispenserGateway(9, async (h) => {
      const address = someone();
      Object.assign(proxy.state, { rpcError: 1, lag: 2 });
      expect((await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: usdc.chain.chainId } })).status).toBe(200);
      expect((await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: usdc.chain.chainId } })).status).toBe(409);
      expect(await usdc.balanceOf(address)).toBe(1_000_000n);
    }),
  );

  it(
    "a provider that resends our transaction answers nonce too low, its lookup lagging: not signed again; the address is paid once",
    dispenserGateway(4, async (h) => {
      const address = someone();
      Object.assign(proxy.state, { resend: 1, lag: 2 });
      expect((await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: usdc.chain.chainId } })).status).toBe(200);
      expect(await usdc.balanceOf(address)).toBe(1_000_000n);
    }),
  );

  it(
    "a claim whose send never reached the node: the address's next claim after 3 minutes sends the very same transaction, and it is paid once",
    dispenserGateway(7, async (h) => {
      const address = someone();
      proxy.state.drop = 2;
      expect((await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: usdc.chain.chainId } })).status).toBe(502);
      proxy.state.drop = 0; // the transport may or may not have retried the send
      // Too soon: its own request may still be waiting for it.
      h.clock.advance(170_000);
      expect((await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: usdc.chain.chainId } })).status).toBe(409);
      expect(await usdc.balanceOf(address)).toBe(0n);
      h.clock.advance(10_000);
      const again = await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: usdc.chain.chainId } });
      expect(again.status).toBe(409);
      const check = await h.call("GET", `/api/dispenser/check/${address}`);
      expect(check.body.claims).toEqual([expect.objectContaining({ status: "claimed", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })]);
      expect(await usdc.balanceOf(address)).toBe(1_000_000n);
    }),
  );

  it(
    "a claim whose send never reached the node and whose nonce went to another transaction: released, so the next claim pays once",
    dispenserGateway(8, async (h) => {
      const address = someone();
      proxy.state.drop = 2;
      expect((await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: usdc.chain.chainId } })).status).toBe(502);
      proxy.state.drop = 0;
      const wallet = usdc.node.accounts[8]!.address;
      await anvil("eth_sendTransaction", [{ from: wallet, to: wallet, value: "0x0" }]);
      h.clock.advance(180_000);
      const again = await h.call("POST", "/api/dispenser/claim", { body: { address, chainId: usdc.chain.chainId } });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(await usdc.balanceOf(address)).toBe(1_000_000n);
    }),
  );

  /** A JSON-RPC call straight to anvil (not through the proxy). */
  const anvil = async (method: string, params: unknown[] = []) => {
    const res = await fetch(usdc.node.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const body = (await res.json()) as { result?: unknown; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
  /** A fresh account with 10 ETH for gas. */
  const funded = async () => {
    const privateKey = generatePrivateKey();
    const address = privateKeyToAccount(privateKey).address;
    await anvil("anvil_setBalance", [address, "0x8ac7230489e80000"]);
    return { privateKey, address };
  };

  /**
   * A gateway whose settlement spender is a fresh account, through the proxy (lease 10 s, so a
   * receipt is waited for 2.5 s), with one paid call of 400 queued for a fresh payer; `batch` runs one.
   */
  const settlement =
    (fn: (h: Parameters<Parameters<typeof withGateway>[1]>[0], t: { treasury: string; spender: string; batch: () => Promise<any> }) => Promise<void>) =>
    async () => {
      const [spender, payer] = [await funded(), await funded()];
      const treasury = someone();
      const chain = { ...usdc.chain, rpcUrl: proxy.url };
      await usdc.mint(payer.address, 10_000_000n);
      await approveUsdc(usdc.node, usdc.chain.usdc as `0x${string}`, payer.privateKey, spender.address, 1_000_000n);
      await withGateway(
        { createStore },
        async (h) => {
          const key = await h.createKey({ purpose: "session", networkId: chain.chainId, budgetLimit: "100000" }, payer.address.toLowerCase());
          const prepared = await h.prepare(
            key.token,
            { service: "inference", action: "chat", resource: "https://x.test", method: "POST", maxAmountWei: "500" },
            { "x-network-id": String(chain.chainId) },
          );
          expect(prepared.status, JSON.stringify(prepared.body)).toBe(200);
          expect((await h.settle({ paymentIntentId: prepared.body.paymentIntentId, finalAmountWei: "400" })).status).toBe(200);
          const batch = async () => (await h.call("POST", "/api/settlement/batch", { headers: { "x-internal-secret": SECRET } })).body;
          await fn(h, { treasury, spender: spender.address, batch });
        },
        {
          chains: [chain],
          settlement: { internalSecret: SECRET, treasury, leaseMs: LEASE_MS, chains: [{ chainId: chain.chainId, spenderPrivateKey: spender.privateKey }] },
        },
      );
    };
  const LEASE_MS = 10_000;
  const unknownHash = (result: { error?: string }) => /0x[0-9a-f]{64}/.exec(result.error ?? "")?.[0];

  it(
    "a settlement batch whose send answer is lost moves the charge once; the next batch finds nothing queued",
    settlement(async (_h, { treasury, batch }) => {
      proxy.state.lose = 1;
      expect((await batch()).results).toEqual([expect.objectContaining({ amountWei: "400", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })]);
      expect((await batch()).results).toEqual([]);
      expect(await usdc.balanceOf(treasury)).toBe(400n);
    }),
    60_000,
  );

  it(
    "a transfer still unmined when its receipt wait ends: later batches finish that same transaction once it lands, never a second one",
    settlement(async (h, { treasury, batch }) => {
      await anvil("evm_setAutomine", [false]);
      try {
        const first = (await batch()).results[0];
        expect(first.error).toMatch(/outcome is unknown/);
        const hash = unknownHash(first);
        expect(hash).toBeDefined();
        // Within the lease the charge is held; after it, still unmined: unknown again, the same transaction.
        expect((await batch()).results).toEqual([]);
        h.clock.advance(LEASE_MS);
        const second = (await batch()).results[0];
        expect(second.error).toMatch(/outcome is unknown/);
        expect(unknownHash(second)).toBe(hash);
        await anvil("evm_mine");
        h.clock.advance(LEASE_MS);
        expect((await batch()).results).toEqual([expect.objectContaining({ amountWei: "400", txHash: hash })]);
      } finally {
        await anvil("evm_setAutomine", [true]);
      }
      expect((await batch()).results).toEqual([]);
      expect(await usdc.balanceOf(treasury)).toBe(400n);
    }),
    60_000,
  );

  it(
    "a send that never reached the node: the next batch after the lease sends the very same transaction, and the charge is paid once",
    settlement(async (h, { treasury, batch }) => {
      proxy.state.drop = 2;
      const first = (await batch()).results[0];
      expect(first.error).toMatch(/outcome is unknown/);
      proxy.state.drop = 0; // the transport may or may not have retried the send
      expect(await usdc.balanceOf(treasury)).toBe(0n);
      h.clock.advance(LEASE_MS);
      expect((await batch()).results).toEqual([expect.objectContaining({ amountWei: "400", txHash: unknownHash(first) })]);
      h.clock.advance(LEASE_MS);
      expect((await batch()).results).toEqual([]);
      expect(await usdc.balanceOf(treasury)).toBe(400n);
    }),
    60_000,
  );

  it(
    "a send that never reached the node, whose nonce another transaction took: it can never land, so the charge is queued again and paid once",
    settlement(async (h, { treasury, spender, batch }) => {
      proxy.state.drop = 2;
      const first = (await batch()).results[0];
      expect(first.error).toMatch(/outcome is unknown/);
      proxy.state.drop = 0; // the transport may or may not have retried the send
      await anvil("anvil_impersonateAccount", [spender]);
      await anvil("eth_sendTransaction", [{ from: spender, to: spender, value: "0x0" }]);
      await anvil("anvil_stopImpersonatingAccount", [spender]);
      h.clock.advance(LEASE_MS);
      const second = (await batch()).results[0];
      expect(second).toMatchObject({ amountWei: "400", error: expect.stringMatching(/was used by another transaction, so this one can never land/) });
      expect(second.txHash).toBeUndefined();
      const third = (await batch()).results[0];
      expect(third).toMatchObject({ amountWei: "400", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      expect(third.txHash).not.toBe(unknownHash(first));
      expect(await usdc.balanceOf(treasury)).toBe(400n);
    }),
    60_000,
  );
});
