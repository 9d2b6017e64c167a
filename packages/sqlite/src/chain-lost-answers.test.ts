/**
 * Writes whose answer is lost between the gateway and its RPC: a proxy in front of a real anvil
 * forwards `eth_sendRawTransaction` (anvil mines it at once) and answers the gateway 502, or drops
 * it without forwarding. A transfer that was taken is recognised as sent (its hash, known before
 * the send, is on the node), so the dispenser pays an address once and a settlement batch moves a
 * charge once; one whose fate is unknown keeps its claim pending rather than paying again.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { approveUsdc, startUsdcNode, withGateway, type UsdcNode } from "@tollgate/testing";
import { tempSqliteStores } from "./temp-stores.js";

const createStore = tempSqliteStores("chain-lost-answers");
const SECRET = "lost-answers-settlement-secret-0123";

/**
 * A JSON-RPC proxy in front of anvil. For the next sends: `lose` forwards and answers 502; `drop`
 * answers 502 unforwarded; `rpcError` forwards and answers a JSON-RPC -32000 "request timed out";
 * `resend` forwards twice (a provider retrying on another of its nodes) and answers the second
 * ("nonce too low": the first took the nonce). `lag` answers that many hash lookups with null (a
 * load-balanced RPC whose other nodes do not show the transaction yet).
 */
async function startLossyProxy(target: string) {
  const state = { lose: 0, drop: 0, rpcError: 0, resend: 0, lag: 0, forwarded: 0 };
  const forward = async (body: string) => {
    const upstream = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
    return { status: upstream.status, text: await upstream.text() };
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const id = (JSON.parse(body) as { id?: unknown }).id;
      const json = (value: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (body.includes("eth_getTransactionByHash") && state.lag > 0) {
        state.lag--;
        return void json({ jsonrpc: "2.0", id, result: null });
      }
      const send = body.includes("eth_sendRawTransaction");
      if (send && state.drop > 0) {
        state.drop--;
        return void res.writeHead(502, { "content-type": "text/plain" }).end("bad gateway");
      }
      let answer = await forward(body);
      if (send) state.forwarded++;
      if (send && state.lose > 0) {
        state.lose--;
        return void res.writeHead(502, { "content-type": "text/plain" }).end("bad gateway");
      }
      if (send && state.rpcError > 0) {
        state.rpcError--;
        return void json({ jsonrpc: "2.0", id, error: { code: -32000, message: "request timed out" } });
      }
      if (send && state.resend > 0) {
        state.resend--;
        answer = await forward(body);
      }
      res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.text);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, state, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe("chain writes whose answer is lost", () => {
  let usdc: UsdcNode;
  let proxy: Awaited<ReturnType<typeof startLossyProxy>>;
  beforeAll(async () => {
    usdc = await startUsdcNode();
    proxy = await startLossyProxy(usdc.node.rpcUrl);
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

  it("a settlement batch whose send answer is lost moves the charge once; the next batch finds nothing queued", async () => {
    const spender = usdc.node.accounts[7]!;
    const payer = usdc.node.accounts[8]!;
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
        proxy.state.lose = 1;
        const first = await h.call("POST", "/api/settlement/batch", { headers: { "x-internal-secret": SECRET } });
        expect(first.body.results).toEqual([expect.objectContaining({ amountWei: "400", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })]);
        const second = await h.call("POST", "/api/settlement/batch", { headers: { "x-internal-secret": SECRET } });
        expect(second.body.results).toEqual([]);
        expect(await usdc.balanceOf(treasury)).toBe(400n);
      },
      { chains: [chain], settlement: { internalSecret: SECRET, treasury, chains: [{ chainId: chain.chainId, spenderPrivateKey: spender.privateKey }] } },
    );
  }, 60_000);
});
