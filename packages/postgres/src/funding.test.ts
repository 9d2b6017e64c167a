import { approveUsdc, runFundingRouteSuite, startUsdcNode, type UsdcNode } from "@tollgate/testing";
import { createGateway, type Gateway, type Store } from "@tollgate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresStore } from "./store.js";
import { serverMissing, testDatabases } from "./test-databases.js";

// Key funding on Postgres, whose store answers asynchronously (where two creates of one wallet really interleave): PGlite always, the real server too when DATABASE_URL is set.
for (const database of testDatabases("funding")) {
  runFundingRouteSuite(`postgres (${database.name})`, { createStore: () => createPostgresStore({ pool: database.db, schema: database.schema() }) });
}

const SECRET = "funding-two-instances-secret";
const server = testDatabases("funding_two", ["server"])[0];

// Two gateways on one database, each with its own pool, as two processes behind a load balancer:
// their in-process turns do not see each other, the check after each write does.
describe("key funding: two instances on one PostgreSQL database", () => {
  if (!server) return serverMissing("two gateway instances checking one wallet's funds");
  let usdc: UsdcNode;
  const gateways: Gateway[] = [];
  const stores: Store[] = [];
  beforeAll(async () => {
    usdc = await startUsdcNode();
    const schema = server.schema();
    const settlement = {
      internalSecret: SECRET,
      treasury: usdc.node.accounts[0]!.address,
      chains: [{ chainId: usdc.chain.chainId, spenderPrivateKey: usdc.node.accounts[1]!.privateKey }],
    };
    for (let i = 0; i < 2; i++) {
      const store = await createPostgresStore({ pool: server.connect(), schema });
      stores.push(store);
      gateways.push(createGateway({ store, chains: [usdc.chain], settlement, sweepIntervalMs: 0 }));
    }
  });
  afterAll(async () => {
    for (const g of gateways) await g.close();
    await usdc?.node.stop();
  });

  const fund = async (index: number) => {
    const wallet = usdc.node.accounts[index]!;
    await usdc.mint(wallet.address, 1_000n);
    await approveUsdc(usdc.node, usdc.chain.usdc as `0x${string}`, wallet.privateKey, usdc.node.accounts[1]!.address, 1_000n);
    return wallet.address;
  };
  const call = (gateway: Gateway, owner: string, method: string, path: string, body: unknown) =>
    gateway.fetch(
      new Request(`http://gateway.test${path}`, {
        method,
        headers: { "content-type": "application/json", "x-internal-secret": SECRET, "x-session-user-address": owner },
        body: JSON.stringify(body),
      }),
    );
  const create = (gateway: Gateway, owner: string, budgetLimit: string) =>
    call(gateway, owner, "POST", "/api/keys", { budgetLimit, expiresAt: Date.now() + 86_400_000, networkId: usdc.chain.chainId, purpose: "api" });
  /** What the wallet's live keys may still spend. */
  const exposure = async (owner: string) =>
    (await stores[0]!.listHeldKeys(owner, usdc.chain.chainId, Date.now())).reduce((sum, k) => sum + k.budgetLimit - k.budgetUsed, 0n);

  it("creates sent to both at once extend at most the wallet's funds", async () => {
    const owner = await fund(2);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => create(gateways[i % 2]!, owner, "300")));
    for (const a of answers) expect([201, 402]).toContain(a.status);
    const live = await stores[0]!.listHeldKeys(owner, usdc.chain.chainId, Date.now());
    // Never more than the funds (1000 / 300: 3 keys). Every 201 is a live key; a key refused after
    // its write was revoked before its token was shown.
    expect(live.length).toBeLessThanOrEqual(3);
    expect(live.every((k) => k.revokedAt === undefined)).toBe(true);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(live.length);
  });

  it("a raise on one instance racing a create on the other: the wallet's keys never exceed its funds", async () => {
    for (const index of [3, 4, 5]) {
      const owner = await fund(index);
      const first = await ((await create(gateways[0]!, owner, "500")).json() as Promise<{ keyId: string }>);
      const [raised, created] = await Promise.all([
        call(gateways[0]!, owner, "PATCH", `/api/keys/${first.keyId}`, { budgetLimit: "900" }),
        create(gateways[1]!, owner, "500"),
      ]);
      expect([200, 402]).toContain(raised.status);
      expect([201, 402]).toContain(created.status);
      expect(await exposure(owner)).toBeLessThanOrEqual(1_000n);
    }
  });

  it("two raises of two keys on the two instances at once: each fits alone, together they are refused or taken back", async () => {
    for (const index of [6, 7, 8]) {
      const owner = await fund(index);
      const [a, b] = await Promise.all(
        [create(gateways[0]!, owner, "500"), create(gateways[0]!, owner, "400")].map(async (r) => (await r).json() as Promise<{ keyId: string }>),
      );
      const answers = await Promise.all([
        call(gateways[0]!, owner, "PATCH", `/api/keys/${a!.keyId}`, { budgetLimit: "600" }),
        call(gateways[1]!, owner, "PATCH", `/api/keys/${b!.keyId}`, { budgetLimit: "500" }),
      ]);
      for (const r of answers) expect([200, 402]).toContain(r.status);
      expect(await exposure(owner)).toBeLessThanOrEqual(1_000n);
      // A raise answered 200 stands; one answered 402 was never written, or was given back its earlier limit.
      const limits = [
        [a!.keyId, 500n, 600n],
        [b!.keyId, 400n, 500n],
      ] as const;
      for (const [i, [keyId, before, raised]] of limits.entries())
        expect((await stores[0]!.getKeyById(keyId))!.budgetLimit).toBe(answers[i]!.status === 200 ? raised : before);
    }
  });
});
