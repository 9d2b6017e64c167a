/**
 * Where a proof holds. A smart wallet's session (its contract accepted the signature on anvil)
 * acts on its own chain only: the same address on another chain may be another contract with
 * other owners. An EOA's session acts on every chain. A service key acts for its wallet on its
 * own chain. Every wallet-proof route is tried on the other chain.
 */
import { getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway } from "../gateway.js";
import { createMemoryStore } from "../store/memory.js";
import { ANVIL_ACCOUNTS, deployTestSmartWallet, startAnvil, type AnvilNode } from "@tollgate/testing";

const HOST = "gateway.test";
const SECRET = "internal-secret-of-the-host-app";
const OTHER_CHAIN = 8453;

describe("a proof holds on the chains it proves", () => {
  let node: AnvilNode;
  let gateway: ReturnType<typeof createGateway>;
  let wallet: `0x${string}`;
  const owner = privateKeyToAccount(ANVIL_ACCOUNTS[3]!.privateKey);
  const eoa = privateKeyToAccount(ANVIL_ACCOUNTS[5]!.privateKey);

  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const init: RequestInit = { method, headers: Object.assign({ "content-type": "application/json" }, headers) };
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await gateway.fetch(new Request(`http://${HOST}${path}`, init));
    return { status: res.status, body: (await res.json()) as any };
  };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  /** A key body of 1,000 atoms for a day on `chainId`. */
  const keyBody = (chainId: number, name?: string) =>
    Object.assign({ budgetLimit: "1000", purpose: "api", expiresAt: Date.now() + 86_400_000, chainId }, name ? { name } : {});
  const signIn = async (address: `0x${string}`, sign: (message: string) => Promise<`0x${string}`>) => {
    const nonce = await call("POST", "/api/auth/nonce", {}, { address, chainId: node.chainId });
    const message = createSiweMessage({
      domain: HOST,
      address,
      uri: `http://${HOST}/`,
      version: "1",
      chainId: node.chainId,
      nonce: nonce.body.nonce,
      issuedAt: new Date(),
    });
    const verified = await call("POST", "/api/auth/verify", {}, { message, signature: await sign(message) });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    return verified.body as { token: string; signer: string; chainId: number };
  };
  /** A key of `address` on `chainId`, made by the host app (its secret holds on every chain). */
  const hostKey = async (address: string, chainId: number, name: string) => {
    const made = await call(
      "POST",
      "/api/keys",
      { "x-internal-secret": SECRET, "x-session-user-address": address },
      { budgetLimit: "1000000", purpose: "api", chainId, name, expiresAt: Date.now() + 86_400_000 },
    );
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return made.body as { keyId: string; token: string };
  };

  beforeAll(async () => {
    node = await startAnvil();
    wallet = getAddress(await deployTestSmartWallet(node, owner.address.toLowerCase() as `0x${string}`));
    gateway = createGateway({
      store: createMemoryStore(),
      sweepIntervalMs: 0,
      auth: { domains: [HOST] },
      internalSecret: SECRET,
      chains: [{ chainId: node.chainId, rpcUrl: node.rpcUrl, usdc: "0x0000000000000000000000000000000000000001" }],
    });
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await node?.stop();
  });

  it("a smart wallet's session acts on its own chain only, on every wallet-proof route", async () => {
    const session = await signIn(wallet, (message) => owner.signMessage({ message }));
    expect(session).toMatchObject({ signer: "contract", chainId: node.chainId });
    const auth = bearer(session.token);
    const elsewhere = await hostKey(wallet, OTHER_CHAIN, "other chain");

    // Creating: on its chain; never on another.
    const here = await call("POST", "/api/keys", auth, keyBody(node.chainId, "here"));
    expect(here.status, JSON.stringify(here.body)).toBe(201);
    const refused = await call("POST", "/api/keys", auth, keyBody(OTHER_CHAIN));
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "forbidden", param: "chainId" });
    const byNetwork = await call("POST", "/api/keys", auth, {
      budgetLimit: "1000",
      purpose: "api",
      expiresAt: Date.now() + 86_400_000,
      networkId: OTHER_CHAIN,
    });
    expect(byNetwork.body.error).toMatchObject({ code: "forbidden", param: "networkId" });

    // Listing shows this chain's keys; the other chain's key is neither listed nor changeable.
    const listed = await call("GET", "/api/keys", auth);
    expect(listed.status).toBe(200);
    expect(listed.body.keys.map((k: { name: string }) => k.name)).toEqual(["here"]);
    for (const [method, path, body] of [
      ["PATCH", `/api/keys/${elsewhere.keyId}`, { budgetLimit: "2000000" }],
      ["POST", `/api/keys/${elsewhere.keyId}/rotate`, {}],
      ["DELETE", `/api/keys/${elsewhere.keyId}`, undefined],
      ["GET", `/api/keys/${elsewhere.keyId}/events`, undefined],
    ] as const) {
      const r = await call(method, path, auth, body);
      expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(403);
      expect(r.body.error.code).toBe("forbidden");
    }
    const still = await call("GET", "/api/keys", { "x-internal-secret": SECRET, "x-session-user-address": wallet });
    expect(still.body.keys.find((k: { keyId: string }) => k.keyId === elsewhere.keyId)).toMatchObject({ budgetLimit: "1000000", status: "active" });
    const patched = await call("PATCH", `/api/keys/${here.body.keyId}`, auth, { name: "renamed" });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    // Reading: another chain is refused by name; no chain means the session's chain.
    const none: Record<string, string> = {};
    for (const [path, headers] of [
      [`/api/usage?chainId=${OTHER_CHAIN}`, none],
      [`/api/payments/intents?chainId=${OTHER_CHAIN}`, none],
      ["/api/settlement/status", { "x-chain-id": String(OTHER_CHAIN) }],
      [`/api/session?chainId=${OTHER_CHAIN}`, none],
    ] as const) {
      const r = await call("GET", path, Object.assign({}, auth, headers));
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(403);
      expect(r.body.error.code).toBe("forbidden");
    }
    const status = await call("GET", "/api/session", auth);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ hasSession: false });
    expect(status.body.reason).toContain(`chain ${node.chainId}`);
    expect((await call("GET", `/api/usage?chainId=${node.chainId}`, auth)).status).toBe(200);

    // Feedback names the wallet on the session's chain only; on another it is anonymous.
    const feedback = (chainId: number) =>
      call("POST", "/v1/feedback", Object.assign({ "x-session-user-address": wallet, "x-chain-id": String(chainId) }, auth), {
        targetType: "model",
        targetId: "m",
        rating: 4,
      });
    expect((await feedback(node.chainId)).body.verification).toBe("wallet_header");
    expect((await feedback(OTHER_CHAIN)).body.verification).toBe("anonymous");
  });

  it("an EOA's session acts on every chain; a service key on its own chain", async () => {
    const session = await signIn(getAddress(eoa.address), (message) => eoa.signMessage({ message }));
    expect(session.signer).toBe("eoa");
    const auth = bearer(session.token);
    const onOther = await call("POST", "/api/keys", auth, keyBody(OTHER_CHAIN, "other"));
    expect(onOther.status, JSON.stringify(onOther.body)).toBe(201);
    const onAnvil = await call("POST", "/api/keys", auth, keyBody(node.chainId, "anvil"));
    expect(onAnvil.status).toBe(201);
    const all = await call("GET", "/api/keys", auth);
    expect(all.body.keys.map((k: { name: string }) => k.name).sort()).toEqual(["anvil", "other"]);
    expect((await call("GET", `/api/usage?chainId=${OTHER_CHAIN}`, auth)).status).toBe(200);

    // The anvil key lists its own chain's keys, and is refused the other chain by name.
    const key = bearer(onAnvil.body.token);
    const byKey = await call("GET", "/api/keys", key);
    expect(byKey.body.keys.map((k: { name: string }) => k.name)).toEqual(["anvil"]);
    const usage = await call("GET", `/api/usage?chainId=${OTHER_CHAIN}`, key);
    expect(usage.status).toBe(403);
    expect(usage.body.error).toMatchObject({ code: "forbidden", param: "chainId" });
    const intents = await call("GET", "/api/payments/intents", key);
    expect(intents.status).toBe(200);

    // As a bearer, a key reaches its siblings and their intents on its own chain only.
    const other = await call("GET", `/api/keys/${onOther.body.keyId}`, key);
    expect(other.status).toBe(403);
    expect(other.body.error).toMatchObject({ code: "forbidden", param: "keyId" });
    for (const [method, path] of [
      ["GET", `/api/keys/${onOther.body.keyId}/events`],
      ["DELETE", `/api/keys/${onOther.body.keyId}`],
    ] as const)
      expect((await call(method, path, key)).status, `${method} ${path}`).toBe(403);
    expect((await call("GET", `/api/keys/${onOther.body.keyId}`, bearer(onOther.body.token))).body.status).toBe("active");
    const prepared = await call("POST", "/api/payments/prepare", Object.assign({ "x-network-id": String(OTHER_CHAIN) }, bearer(onOther.body.token)), {
      service: "inference",
      action: "chat",
      resource: "/v1/chat",
      method: "POST",
      maxAmountWei: "500",
    });
    expect(prepared.status, JSON.stringify(prepared.body)).toBe(200);
    const intentId = prepared.body.paymentIntentId;
    for (const path of ["/api/payments/settle", "/api/payments/abort"]) {
      const r = await call("POST", path, key, { paymentIntentId: intentId, finalAmountWei: "500" });
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(403);
      expect(r.body.error).toMatchObject({ code: "forbidden", param: "paymentIntentId" });
    }
    const settled = await call("POST", "/api/payments/settle", bearer(onOther.body.token), { paymentIntentId: intentId, finalAmountWei: "500" });
    expect(settled.status, JSON.stringify(settled.body)).toBe(200);
  });

  it("a host app's secret acts for the wallet it names even beside a forwarded session cookie", async () => {
    const session = await signIn(wallet, (message) => owner.signMessage({ message }));
    const headers = { cookie: `tollgate_session=${session.token}`, "x-internal-secret": SECRET, "x-session-user-address": wallet };
    const made = await call("POST", "/api/keys", headers, keyBody(OTHER_CHAIN));
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    // The cookie alone stays bound to its chain.
    const alone = await call("POST", "/api/keys", { cookie: `tollgate_session=${session.token}` }, keyBody(OTHER_CHAIN));
    expect(alone.status).toBe(403);
  });
});
