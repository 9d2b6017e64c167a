/**
 * With settlement on, a key spends only on a chain settlement has a spender on. A wallet without
 * funds used to name any other chain for its key: the funding check skipped it, paid calls served
 * it, and no batch could ever collect what it spent.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DEAD_CHAIN, SOME_KEY } from "@tollgate/testing";
import { createGateway } from "../gateway.js";
import type { Gateway } from "../gateway-types.js";
import type { GatewayOptions } from "../options.js";
import { createMemoryStore } from "../store/memory.js";
import type { Store } from "../store/types.js";

const SECRET = "unsettled-chain-s3cret";
const OWNER = "0x00000000000000000000000000000000000000a1";
const DAY = 86_400_000;
const settled: Partial<GatewayOptions> = {
  chains: [DEAD_CHAIN],
  settlement: {
    internalSecret: SECRET,
    treasury: "0x00000000000000000000000000000000000000b2",
    chains: [{ chainId: DEAD_CHAIN.chainId, spenderPrivateKey: SOME_KEY }],
  },
};

const open: Gateway[] = [];
afterEach(async () => {
  for (const g of open.splice(0)) await g.close();
});

function gatewayOn(store: Store, extra: Partial<GatewayOptions>): Gateway {
  const gateway = createGateway(Object.assign({ store, sweepIntervalMs: 0, internalSecret: SECRET }, extra));
  open.push(gateway);
  return gateway;
}

async function call(gateway: Gateway, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const init: RequestInit = { method, headers: Object.assign({ "content-type": "application/json" }, headers) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const reply = await gateway.fetch(new Request(`http://gw.test${path}`, init));
  return { status: reply.status, body: (await reply.json()) as any };
}

const asOwner = { "x-session-user-address": OWNER, "x-internal-secret": SECRET };
const keyOn = (chainId: number) => ({ budgetLimit: "9000000000000", expiresAt: Date.now() + DAY, networkId: chainId, purpose: "api" });

describe("keys on a chain settlement does not cover", () => {
  it("creating one is 400 invalid_request naming chainId; nothing is written", async () => {
    const gateway = gatewayOn(createMemoryStore(), settled);
    const r = await call(gateway, "POST", "/api/keys", asOwner, keyOn(1));
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error).toMatchObject({ code: "invalid_request", param: "chainId" });
    expect(r.body.error.message).toContain(`chain ${DEAD_CHAIN.chainId} only; chain 1 has no settlement`);
    expect((await call(gateway, "GET", "/api/keys", asOwner)).body.keys).toEqual([]);
  });

  it("one made before settlement covered it spends nothing: 409 chain_mismatch on prepare, on a paid route and on the legacy charge", async () => {
    const store = createMemoryStore();
    // Without settlement, keys are the operator's credit on any chain.
    const before = await call(gatewayOn(store, {}), "POST", "/api/keys", asOwner, keyOn(1));
    expect(before.status, JSON.stringify(before.body)).toBe(201);
    const gateway = gatewayOn(store, settled);
    const key = { authorization: `Bearer ${before.body.token}` };
    const prepare = { service: "inference", action: "chat", resource: "https://api.example.com/v1/chat", method: "POST", maxAmountWei: "300" };
    const attempts = [
      await call(gateway, "POST", "/api/payments/prepare", Object.assign({ "x-network-id": "1" }, key), prepare),
      await call(gateway, "POST", "/v1/embeddings", key, { model: "text-embedding-3-small", input: "free ride" }),
      await call(gateway, "POST", "/api/keys/settle", key, { amount: "5000000000000" }),
    ];
    for (const r of attempts) {
      expect(r.status, JSON.stringify(r.body)).toBe(409);
      expect(r.body.error.code).toBe("chain_mismatch");
      expect(r.body.error.message).toContain("chain 1, which this gateway does not settle");
    }
    const stored = await store.getKeyById(before.body.keyId);
    expect({ used: stored?.budgetUsed, reserved: stored?.budgetReserved }).toEqual({ used: 0n, reserved: 0n });
    // The wallet still manages it: it can revoke it.
    expect((await call(gateway, "DELETE", `/api/keys/${before.body.keyId}`, asOwner)).status).toBe(200);
  });

  it("settlement with no chains listed settles none: a key on any chain is refused", async () => {
    const gateway = gatewayOn(createMemoryStore(), {
      chains: [DEAD_CHAIN],
      settlement: { internalSecret: SECRET, treasury: "0x00000000000000000000000000000000000000b2", chains: [] },
    });
    const r = await call(gateway, "POST", "/api/keys", asOwner, keyOn(DEAD_CHAIN.chainId));
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error).toMatchObject({ code: "invalid_request", param: "chainId" });
  });

  it("without settlement any chain is the operator's credit, as before", async () => {
    const gateway = gatewayOn(createMemoryStore(), { chains: [DEAD_CHAIN] });
    expect((await call(gateway, "POST", "/api/keys", asOwner, keyOn(1))).status).toBe(201);
  });
});
