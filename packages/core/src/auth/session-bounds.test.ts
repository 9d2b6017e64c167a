/**
 * What a wallet session is bound to: the nonce is spent before the chain is asked about a
 * signature (a caller without an issued nonce costs no RPC call), the session ends at the
 * Expiration Time the wallet signed, and it proves its wallet only on gateways that sign in to the
 * domain it was opened for.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createGateway } from "../gateway.js";
import { createMemoryStore } from "../store/memory.js";
import type { Store } from "../store/types.js";

const CHAIN = 84532;
const account = privateKeyToAccount("0x59c6995e998f97a5a0044966f611e8b12f2a3a5ad4b4b1b5f9b0e6f1d1e8d7c1");

describe("wallet session bounds", () => {
  let rpc: Server;
  let rpcUrl = "";
  let rpcCalls = 0;
  beforeAll(async () => {
    // The chain's RPC: counts every call, and answers each with a JSON-RPC error.
    rpc = createServer((req, res) => {
      rpcCalls++;
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code: -32000, message: "execution reverted" } }));
      });
    });
    await new Promise<void>((resolve) => rpc.listen(0, "127.0.0.1", resolve));
    rpcUrl = `http://127.0.0.1:${(rpc.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => rpc.close(resolve)));

  const gatewayFor = (domain: string, store: Store = createMemoryStore(), clock = createManualClock(Date.now())) => {
    const gateway = createGateway({
      store,
      clock,
      sweepIntervalMs: 0,
      auth: { domains: [domain] },
      chains: [{ chainId: CHAIN, rpcUrl, usdc: "0x0000000000000000000000000000000000000001" }],
    });
    const call = async (method: string, path: string, body?: unknown, token?: string) => {
      const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
      if (token) headers.authorization = `Bearer ${token}`;
      const res = await gateway.fetch(new Request(`http://${domain}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
      return { status: res.status, body: (await res.json()) as any };
    };
    const message = async (fields: Partial<Parameters<typeof createSiweMessage>[0]> = {}) => {
      const nonce = fields.nonce ?? (await call("POST", "/api/auth/nonce", { address: account.address, chainId: CHAIN })).body.nonce;
      return createSiweMessage(
        Object.assign(
          { domain, address: account.address, uri: `https://${domain}/`, version: "1" as const, chainId: CHAIN, nonce, issuedAt: new Date(clock.now()) },
          fields,
        ),
      );
    };
    const signIn = async (fields: Partial<Parameters<typeof createSiweMessage>[0]> = {}) => {
      const text = await message(fields);
      return call("POST", "/api/auth/verify", { message: text, signature: await account.signMessage({ message: text }) });
    };
    return { gateway, clock, call, message, signIn };
  };

  it("a verify whose nonce was never issued is refused before any chain call; a refused signature spends its nonce", async () => {
    const g = gatewayFor("gateway.test");
    // Not a 65-byte signature: only the chain could judge it (a contract wallet's).
    const long = `0x${"ab".repeat(5000)}`;
    const before = rpcCalls;
    for (let i = 0; i < 5; i++) {
      const refused = await g.call("POST", "/api/auth/verify", { message: await g.message({ nonce: `neverIssued${i}abcdef` }), signature: long });
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toMatch(/nonce is unknown/);
    }
    expect(rpcCalls).toBe(before);
    // With an issued nonce the chain is asked (and refuses); that nonce cannot be used again.
    const text = await g.message();
    expect((await g.call("POST", "/api/auth/verify", { message: text, signature: long })).status).toBe(401);
    expect(rpcCalls).toBeGreaterThan(before);
    const again = await g.call("POST", "/api/auth/verify", { message: text, signature: await account.signMessage({ message: text }) });
    expect(again.status).toBe(401);
    expect(again.body.error.message).toMatch(/nonce is unknown, used/);
    expect((await g.signIn()).status).toBe(200);
    await g.gateway.close();
  });

  it("a session ends at the Expiration Time the wallet signed, when that comes before its lifetime", async () => {
    const g = gatewayFor("gateway.test");
    const until = new Date(g.clock.now() + 60_000);
    const opened = await g.signIn({ expirationTime: until });
    expect(opened.status, JSON.stringify(opened.body)).toBe(200);
    expect(opened.body.expiresAt).toBe(until.getTime());
    expect((await g.call("GET", "/api/auth/session", undefined, opened.body.token)).status).toBe(200);
    g.clock.advance(61_000);
    expect((await g.call("GET", "/api/auth/session", undefined, opened.body.token)).status).toBe(401);
    // Without one, the session lives its configured lifetime (24 h by default).
    const plain = await g.signIn();
    expect(plain.body.expiresAt).toBe(g.clock.now() + 24 * 3_600_000);
    await g.gateway.close();
  });

  it("a message whose Expiration Time is not a date is refused", async () => {
    const g = gatewayFor("gateway.test");
    const text = (await g.message()).replace(/\nIssued At: ([^\n]+)/, "\nIssued At: $1\nExpiration Time: someday");
    const refused = await g.call("POST", "/api/auth/verify", { message: text, signature: await account.signMessage({ message: text }) });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/Expiration Time/);
    await g.gateway.close();
  });

  it("a session proves its wallet only on a gateway that signs in to its domain, though they share a store", async () => {
    const store = createMemoryStore();
    const a = gatewayFor("a.gateway.test", store);
    const b = gatewayFor("b.gateway.test", store);
    const opened = await a.signIn();
    expect(opened.status).toBe(200);
    const key = { budgetLimit: "1000", expiresAt: a.clock.now() + 3_600_000, networkId: CHAIN, purpose: "api" };
    expect((await a.call("POST", "/api/keys", key, opened.body.token)).status).toBe(201);
    const foreign = await b.call("POST", "/api/keys", key, opened.body.token);
    expect(foreign.status).toBe(401);
    expect(foreign.body.error).toMatchObject({ code: "wallet_unverified", message: expect.stringMatching(/opened for a\.gateway\.test/) });
    expect((await b.call("GET", "/api/auth/session", undefined, opened.body.token)).status).toBe(401);
    await a.gateway.close();
    await b.gateway.close();
  });
});
