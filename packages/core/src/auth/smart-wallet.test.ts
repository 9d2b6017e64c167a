/**
 * Sign-In with Ethereum for a smart-contract wallet (EIP-1271) on a real local chain: the gateway
 * checks the signature through the chain's RPC when the chain is configured, and refuses it
 * otherwise.
 */
import { getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway } from "../gateway.js";
import { createMemoryStore } from "../store/memory.js";
import { ANVIL_ACCOUNTS, deployTestSmartWallet, startAnvil, type AnvilNode } from "@tollgate/testing";

const HOST = "gateway.test";

describe("sign-in with a smart-contract wallet (EIP-1271 on anvil)", () => {
  let node: AnvilNode;
  let wallet: `0x${string}`;
  const owner = privateKeyToAccount(ANVIL_ACCOUNTS[3]!.privateKey);
  const stranger = privateKeyToAccount(ANVIL_ACCOUNTS[4]!.privateKey);
  beforeAll(async () => {
    node = await startAnvil();
    wallet = getAddress(await deployTestSmartWallet(node, owner.address.toLowerCase() as `0x${string}`));
  }, 60_000);
  afterAll(() => node?.stop());

  const signIn = async (chains: boolean, signer: typeof owner) => {
    const gateway = createGateway({
      store: createMemoryStore(),
      sweepIntervalMs: 0,
      auth: { domains: [HOST] },
      ...(chains ? { chains: [{ chainId: node.chainId, rpcUrl: node.rpcUrl, usdc: "0x0000000000000000000000000000000000000001" }] } : {}),
    });
    const post = async (path: string, body: unknown) => {
      const res = await gateway.fetch(new Request(`http://${HOST}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
      return { status: res.status, body: (await res.json()) as any };
    };
    const nonce = await post("/api/auth/nonce", { address: wallet, chainId: node.chainId });
    const message = createSiweMessage({ domain: HOST, address: wallet, uri: `http://${HOST}/`, version: "1", chainId: node.chainId, nonce: nonce.body.nonce, issuedAt: new Date() });
    const verified = await post("/api/auth/verify", { message, signature: await signer.signMessage({ message }) });
    await gateway.close();
    return verified;
  };

  it("the owner's signature proves the contract wallet when its chain is configured", async () => {
    const r = await signIn(true, owner);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ address: wallet.toLowerCase(), chainId: node.chainId, token: expect.stringMatching(/^sess_/) });
  });

  it("another key's signature is refused, and so is any contract-wallet signature on an unconfigured chain", async () => {
    const forged = await signIn(true, stranger);
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe("wallet_unverified");
    const offline = await signIn(false, owner);
    expect(offline.status).toBe(401);
    expect(offline.body.error.code).toBe("wallet_unverified");
  });
});
