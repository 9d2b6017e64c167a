/**
 * Several gateway instances on one PostgreSQL database (issue 7): three real `tollgate serve`
 * processes share one fresh schema, a real anvil chain carries the test USDC, and concurrent load
 * split across the processes must keep the money invariants (docs/architecture.md) to the atom.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Store } from "@tollgate/core";
import { approveUsdc, prng, startUsdcNode, type UsdcNode } from "@tollgate/testing";
import { createPostgresStore, migrate } from "../src/index.js";
import { runCli, startCli, type CliProcess } from "../../node/src/testing/cli-process.js";
import { describeWithDatabase, dropSchema, freshSchema } from "./database.js";
import { call, createKey, type CallResult } from "./gateway-client.js";

const SECRET = "multi-instance-secret-0123456789";
/** The dispenser's default claim, in atoms. */
const CLAIM = 1_000_000n;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
const replayed = (r: CallResult) => r.headers.get("x-idempotent-replay") === "true";

interface GroupResult {
  wallet: string;
  amountWei: string;
  txHash?: string;
  error?: string;
}

describeWithDatabase("three gateway processes on one PostgreSQL database", (url) => {
  const schema = freshSchema("tollgate_mi");
  const treasury = freshAddress();
  let usdc: UsdcNode;
  let chainId: number;
  let store: Store;
  let gateways: CliProcess[] = [];
  let bases: string[] = [];
  let dbArgs: string[];
  let dir: string | undefined;
  /** The gateway that serves the i-th request of a load: round-robin over the three. */
  const at = (i: number) => bases[i % bases.length]!;
  const wallets = () => usdc.node.accounts.slice(4, 9);

  beforeAll(async () => {
    usdc = await startUsdcNode();
    chainId = usdc.chain.chainId;
    const [, spender, , dispenser] = usdc.node.accounts;
    await usdc.mint(dispenser!.address, 100n * CLAIM);
    for (const w of wallets()) await usdc.mint(w.address, 10n ** 9n);
    await Promise.all(wallets().map((w) => approveUsdc(usdc.node, usdc.chain.usdc as `0x${string}`, w.privateKey, spender!.address, 10n ** 12n)));
    dir = mkdtempSync(join(tmpdir(), "tollgate-mi-"));
    const config = join(dir, "gateway.json");
    writeFileSync(
      config,
      JSON.stringify({
        chains: [usdc.chain],
        dispenser: { chains: [{ chainId, privateKey: dispenser!.privateKey }] },
        // Small batches, so that concurrent batches split the queue between them. The lease (a quarter
        // of it is the wait for a receipt) leaves a loaded CI machine time to mine: at 10 s, a 2.5 s
        // wait timed out once with the whole suite running, and that group's outcome was unknown.
        // settlement.internalSecret is also the wallet proof of the key creations (internalSecret defaults to it).
        settlement: { internalSecret: SECRET, treasury, chains: [{ chainId, spenderPrivateKey: spender!.privateKey }], leaseMs: 40_000, batchLimit: 20 },
      }),
    );
    dbArgs = ["--db", url, "--db-schema", schema, "--config", config];
    // All three start at once on the empty schema: their migrations race for the advisory lock.
    gateways = range(3).map(() => startCli(["serve", "--port", "0", ...dbArgs]));
    bases = await Promise.all(gateways.map((g) => g.url()));
    store = await createPostgresStore({ connectionString: url, schema, migrate: false, poolSize: 2 });
  });

  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await store?.close();
    await usdc?.node.stop();
    await dropSchema(url, schema);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the three instances migrated the one schema together at start: they say so, and nothing is left to apply", async () => {
    const shown = new URL(url);
    if (shown.password) shown.password = "***";
    for (const g of gateways) expect(g.out()).toContain(`database: PostgreSQL ${shown.toString()}, schema ${schema}, pool of 10 connections`);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect(await migrate(client, { schema })).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it("300 prepares where 120 fit, then racing settles and aborts, all split across the instances: every money invariant holds to the atom", async () => {
    const K = 120;
    const MAX = 1000n;
    const limit = BigInt(K) * MAX;
    const owner = wallets()[0]!.address;
    const { keyId, token } = await createKey(at(0), owner, chainId, limit, SECRET);
    const headers = { authorization: `Bearer ${token}`, "x-network-id": String(chainId) };
    const body = { service: "inference", action: "multi-instance", resource: "/v1/multi", method: "POST", maxAmountWei: MAX.toString() };
    const prepared = await Promise.all(range(300).map((i) => call(at(i), "POST", "/api/payments/prepare", { headers, body })));
    const won = prepared.filter((r) => r.status === 200);
    expect(won).toHaveLength(K);
    for (const r of prepared) if (r.status !== 200) expect([r.status, r.body.error.code]).toEqual([402, "budget_exhausted"]);
    const ids = won.map((r) => r.body.paymentIntentId as string);
    expect(new Set(ids).size).toBe(K);
    expect(await store.getKeyById(keyId)).toMatchObject({ budgetUsed: 0n, budgetReserved: limit });

    // Six plans; the calls of one intent go to different instances at the same time.
    type Finish = { kind: "settle"; final: bigint } | { kind: "abort" };
    const random = prng(7);
    const final = () => BigInt(Math.floor(random() * Number(MAX + 1n)));
    const plans: Finish[][] = ids.map((_, j) => {
      const f = j % 12 === 5 ? 0n : final();
      const settle = (amount: bigint): Finish => ({ kind: "settle", final: amount });
      const abort: Finish = { kind: "abort" };
      return [[abort], [settle(f), settle(f)], [settle(f), settle((f + 1n) % (MAX + 1n))], [settle(f), abort], [abort, abort], [settle(f)]][j % 6]!;
    });
    const responses = await Promise.all(
      ids.map((id, j) =>
        Promise.all(
          plans[j]!.map((p, k) =>
            p.kind === "settle"
              ? call(at(j + k), "POST", "/api/payments/settle", { body: { paymentIntentId: id, finalAmountWei: p.final.toString() } })
              : call(at(j + k), "POST", "/api/payments/abort", { body: { paymentIntentId: id, reason: "multi-instance" } }),
          ),
        ),
      ),
    );

    let used = 0n;
    let charged = 0;
    for (const [j, id] of ids.entries()) {
      const plan = plans[j]!;
      const res = responses[j]!;
      // Exactly one call finished the intent; the others replay its answer (same finish) or get 409 (another finish).
      const winners = res.map((r, k) => ({ r, p: plan[k]! })).filter(({ r }) => r.status === 200 && !replayed(r));
      expect(winners, `intent ${id}: ${JSON.stringify(res.map((r) => [r.status, r.body]))}`).toHaveLength(1);
      const { r: winner, p: won } = winners[0]!;
      for (const [k, r] of res.entries()) {
        if (r === winner) continue;
        const p = plan[k]!;
        if (p.kind === won.kind && (p.kind === "abort" || p.final === (won as { final: bigint }).final)) expect([r.status, replayed(r), r.body]).toEqual([200, true, winner.body]);
        else expect([r.status, r.body.error.code]).toEqual([409, "invalid_state"]);
      }
      const intent = await store.getIntent(id);
      if (won.kind === "abort") {
        expect(intent).toMatchObject({ status: "aborted", releasedAmount: MAX });
        continue;
      }
      expect(intent).toMatchObject({ status: "settled", finalAmount: won.final, releasedAmount: MAX - won.final });
      expect(winner.body).toMatchObject({ status: "settled", finalAmountWei: won.final.toString() });
      used += won.final;
      if (won.final > 0n) charged++;
    }

    const key = (await store.getKeyById(keyId))!;
    expect({ used: key.budgetUsed, reserved: key.budgetReserved }).toEqual({ used, reserved: 0n });
    expect(key.budgetUsed + key.budgetReserved <= key.budgetLimit).toBe(true);
    expect(key.budgetUsed >= 0n && key.budgetReserved >= 0n).toBe(true);
    const listed = await store.listIntents(owner, { keyId, limit: 200 });
    expect(listed.intents).toHaveLength(K);
    expect(listed.intents.filter((i) => i.status === "authorized")).toEqual([]);
    // One queued charge per intent settled above zero, of exactly its final amount; they add up to `used`.
    const charges = (await store.listQueuedCharges({ limit: 10_000 })).filter((c) => c.keyId === keyId);
    expect(charges).toHaveLength(charged);
    expect(new Set(charges.map((c) => c.intentId)).size).toBe(charged);
    for (const c of charges) expect(c.amount).toBe((await store.getIntent(c.intentId!))!.finalAmount);
    expect(charges.reduce((sum, c) => sum + c.amount, 0n)).toBe(used);
  });

  it("one idempotency key sent to all three instances at once makes one intent and reserves once", async () => {
    const { keyId, token } = await createKey(at(1), wallets()[1]!.address, chainId, 10_000n, SECRET);
    const headers = { authorization: `Bearer ${token}`, "x-network-id": String(chainId), "x-idempotency-key": "same-everywhere" };
    const body = { service: "inference", action: "multi-instance", resource: "/v1/multi", method: "POST", maxAmountWei: "700" };
    const res = await Promise.all(range(12).map((i) => call(at(i), "POST", "/api/payments/prepare", { headers, body })));
    expect(res.map((r) => r.status)).toEqual(range(12).map(() => 200));
    expect(new Set(res.map((r) => r.body.paymentIntentId)).size).toBe(1);
    expect(res.filter((r) => !replayed(r))).toHaveLength(1);
    expect(await store.getKeyById(keyId)).toMatchObject({ budgetReserved: 700n, budgetUsed: 0n });
    const settled = await call(at(2), "POST", "/api/payments/settle", { body: { paymentIntentId: res[0]!.body.paymentIntentId, finalAmountWei: "650" } });
    expect(settled.status).toBe(200);
    expect(await store.getKeyById(keyId)).toMatchObject({ budgetReserved: 0n, budgetUsed: 650n });
  });

  it("claims of one address spread across the instances make exactly one transfer", async () => {
    const dispenser = usdc.node.accounts[3]!.address;
    const before = await usdc.balanceOf(dispenser);
    const address = freshAddress();
    const res = await Promise.all(range(9).map((i) => call(at(i), "POST", "/api/dispenser/claim", { body: { address, chainId } })));
    const ok = res.filter((r) => r.status === 200);
    expect(ok.map((r) => r.body)).toEqual([{ success: true, claimAmount: Number(CLAIM), chainId, txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) }]);
    for (const r of res) if (r.status !== 200) expect([r.status, r.body.alreadyClaimed, r.body.error.code]).toEqual([409, true, "already_claimed"]);
    expect(await usdc.balanceOf(address)).toBe(CLAIM);
    expect(before - (await usdc.balanceOf(dispenser))).toBe(CLAIM);
    expect(await store.listDispenserClaims(address)).toEqual([expect.objectContaining({ status: "claimed", txHash: ok[0]!.body.txHash, amount: CLAIM })]);
  });

  it("claims of several addresses at once across the instances (one shared dispenser wallet): each address is paid exactly once", async () => {
    const dispenser = usdc.node.accounts[3]!.address;
    const before = await usdc.balanceOf(dispenser);
    const addresses = range(4).map(freshAddress);
    // The instances share one dispenser wallet: their transfers race for its nonce, and the chain adapter re-signs a refused one.
    const res = await Promise.all(addresses.flatMap((address, a) => range(3).map((i) => call(at(a + i), "POST", "/api/dispenser/claim", { body: { address, chainId } }))));
    let paid = 0n;
    for (const [a, address] of addresses.entries()) {
      const mine = res.slice(a * 3, a * 3 + 3);
      const ok = mine.filter((r) => r.status === 200);
      expect(ok.length, JSON.stringify(mine.map((r) => r.body))).toBe(1);
      for (const r of mine) if (r.status !== 200) expect([r.status, r.body.error.code]).toEqual([409, "already_claimed"]);
      const claims = await store.listDispenserClaims(address);
      expect(claims).toEqual([expect.objectContaining({ status: "claimed", txHash: ok[0]!.body.txHash })]);
      expect(await usdc.balanceOf(address)).toBe(CLAIM * BigInt(ok.length));
      paid += CLAIM * BigInt(ok.length);
    }
    expect(before - (await usdc.balanceOf(dispenser))).toBe(paid);
  });

  it("batches on the three instances and a `tollgate settle` process at once settle every queued charge exactly once, moving exactly the totals", async () => {
    const random = prng(11);
    await Promise.all(
      wallets()
        .slice(1)
        .map(async (w, k) => {
          const { token } = await createKey(at(k), w.address, chainId, 10n ** 6n, SECRET);
          const headers = { authorization: `Bearer ${token}`, "x-network-id": String(chainId) };
          for (const i of range(6)) {
            const p = await call(at(k + i), "POST", "/api/payments/prepare", { headers, body: { service: "inference", action: "batch", resource: "/v1/b", method: "POST", maxAmountWei: "1000" } });
            const s = await call(at(k + i + 1), "POST", "/api/payments/settle", { body: { paymentIntentId: p.body.paymentIntentId, finalAmountWei: String(1 + Math.floor(random() * 999)) } });
            expect(s.status).toBe(200);
          }
        }),
    );
    const queued = await store.listQueuedCharges({ limit: 10_000 });
    expect(queued.length).toBeGreaterThanOrEqual(24);
    const owed = new Map<string, bigint>();
    for (const c of queued) owed.set(c.owner, (owed.get(c.owner) ?? 0n) + c.amount);
    const total = queued.reduce((sum, c) => sum + c.amount, 0n);
    const before = new Map(await Promise.all([...owed.keys()].map(async (o) => [o, await usdc.balanceOf(o)] as const)));

    const batch = async (i: number): Promise<GroupResult[]> => {
      const r = await call(at(i), "POST", "/api/settlement/batch", { headers: { "x-internal-secret": SECRET } });
      expect(r.status).toBe(200);
      return r.body.results;
    };
    const [cli, ...first] = await Promise.all([runCli(["settle", ...dbArgs]), ...range(3).map(batch)]);
    expect([0, 1], cli.err).toContain(cli.code);
    const groups: GroupResult[] = [...JSON.parse(cli.out).results, ...first.flat()];
    // A group whose transfer failed would go back to the queue: run until it is empty.
    const deadline = Date.now() + 45_000;
    while ((await store.listQueuedCharges({ limit: 1 })).length > 0) {
      if (Date.now() > deadline) throw new Error(`charges still queued; group errors: ${groups.flatMap((g) => g.error ?? []).join(" | ")}`);
      const round = (await Promise.all(range(3).map(batch))).flat();
      groups.push(...round);
      if (round.length === 0) await new Promise((r) => setTimeout(r, 500)); // leased by a batch whose outcome is unknown
    }

    // Nonce races between the processes' transfers are absorbed by the chain adapter: no group failed.
    expect(groups.flatMap((g) => g.error ?? [])).toEqual([]);
    const paid = groups.filter((g) => g.txHash !== undefined);
    const byTx = new Map(paid.map((g) => [g.txHash!, { ...g, charged: 0n }]));
    expect(byTx.size).toBe(paid.length);
    for (const c of queued) {
      const now = (await store.getCharge(c.chargeId))!;
      expect(now).toMatchObject({ status: "settled", txHash: expect.stringMatching(/^0x/) });
      const group = byTx.get(now.txHash!)!;
      expect(group.wallet).toBe(c.owner);
      group.charged += c.amount;
    }
    // Each transfer moved exactly the charges it settled, and nothing else was transferred.
    for (const g of byTx.values()) expect(g.charged).toBe(BigInt(g.amountWei));
    expect(paid.reduce((sum, g) => sum + BigInt(g.amountWei), 0n)).toBe(total);
    expect(await usdc.balanceOf(treasury)).toBe(total);
    for (const [owner, amount] of owed) expect(before.get(owner)! - (await usdc.balanceOf(owner))).toBe(amount);
  }, 90_000); // a `tollgate settle` process starts beside three busy servers, and the queue gets 45 s to empty (above)
});
