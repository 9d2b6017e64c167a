import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGateway } from "@tollgate/core";
import { approveUsdc, startUsdcNode, type UsdcNode } from "@tollgate/testing";
import { createSqliteStore } from "@tollgate/sqlite";
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCli } from "./testing/cli-process.js";

const SECRET = "settle-secret-0123456789";

const cli = runCli;

/** Queues one charge of `amount` from `owner` on `chainId` in the SQLite file `db`. */
async function queueCharge(db: string, owner: string, chainId: number, amount: bigint): Promise<void> {
  const gateway = createGateway({ store: createSqliteStore({ filename: db }), sweepIntervalMs: 0 });
  const { key } = await gateway.services.keys.create({ owner, chainId, purpose: "session", budgetLimit: 10_000n, expiresAt: Date.now() + 86_400_000 });
  await gateway.services.keys.chargeDirect(key, amount);
  await gateway.close();
}

describe("tollgate settle", () => {
  let usdc: UsdcNode;
  let dir: string;
  beforeAll(async () => {
    usdc = await startUsdcNode();
    dir = mkdtempSync(join(tmpdir(), "tollgate-settle-"));
  });
  afterAll(() => usdc?.node.stop());

  const writeConfig = (name: string, value: unknown) => {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify(value));
    return file;
  };

  it("runs one batch from the --config file (or TOLLGATE_CONFIG) and prints it as JSON", async () => {
    const [spender, wallet] = [usdc.node.accounts[1]!, usdc.node.accounts[2]!];
    const treasury = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
    await usdc.mint(wallet.address, 1_000_000n);
    await approveUsdc(usdc.node, usdc.chain.usdc as `0x${string}`, wallet.privateKey, spender.address, 1_000_000n);
    const db = join(dir, "ok.db");
    await queueCharge(db, wallet.address, usdc.chain.chainId, 1234n);
    const config = writeConfig("ok.json", {
      chains: [usdc.chain],
      settlement: { internalSecret: SECRET, treasury, chains: [{ chainId: usdc.chain.chainId, spenderPrivateKey: spender.privateKey }], intervalMs: 1000 },
    });
    const run = await cli(["settle", "--db", db], { TOLLGATE_CONFIG: config });
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    const result = JSON.parse(run.out);
    expect(result).toMatchObject({ runId: expect.stringMatching(/^run_/), totalGroups: 1, totalIntents: 1, totalValueWei: "1234", successCount: 1, failCount: 0 });
    expect(result.results).toEqual([{ wallet: wallet.address, chainId: usdc.chain.chainId, amountWei: "1234", intentCount: 1, txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) }]);
    expect(await usdc.balanceOf(treasury)).toBe(1234n);
    // Nothing left: the next run is empty.
    const again = await cli(["settle", "--db", db, "--config", config]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ totalGroups: 0, totalValueWei: "0" });
  }, 60_000); // two CLI processes and a batch on chain: ~20 s on a loaded 2-core CI machine

  it("exits 1 when a group fails (the charges stay queued)", async () => {
    const db = join(dir, "fail.db");
    const owner = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
    // A wallet that never approved the spender: its transfer reverts.
    await queueCharge(db, owner, usdc.chain.chainId, 5n);
    const config = writeConfig("fail.json", {
      chains: [usdc.chain],
      settlement: { internalSecret: SECRET, treasury: owner, chains: [{ chainId: usdc.chain.chainId, spenderPrivateKey: usdc.node.accounts[1]!.privateKey }] },
    });
    const run = await cli(["settle", "--db", db, "--config", config]);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.out)).toMatchObject({ failCount: 1, results: [{ wallet: owner, chainId: usdc.chain.chainId, amountWei: "5", error: expect.stringContaining("transferFrom") }] });
  });

  it("exits 2 on an unusable configuration", async () => {
    const db = join(dir, "bad.db");
    const notJson = join(dir, "not.json");
    writeFileSync(notJson, "{");
    const [none, invalid, unreadable, array] = await Promise.all([
      cli(["settle", "--db", db]),
      cli(["settle", "--db", db, "--config", writeConfig("bad.json", { settlement: { internalSecret: "short", treasury: "0x1", chains: [] } })]),
      cli(["settle", "--db", db, "--config", notJson]),
      cli(["settle", "--config", writeConfig("array.json", [])]),
    ]);
    expect([none.code, invalid.code, unreadable.code, array.code]).toEqual([2, 2, 2, 2]);
    expect(none.err).toMatch(/^tollgate: settlement is not configured/);
    expect(invalid.err).toBe("tollgate: settlement.internalSecret: must be at least 16 characters\ntollgate: settlement.treasury: must be a 0x-prefixed 20-byte address\n");
    expect(unreadable.err).toMatch(/^tollgate: --config is not valid JSON/);
    expect(array.err).toMatch(/^tollgate: --config must hold a JSON object of gateway options/);
  });

  it("serve takes the same --config: dispenser and scheduled settlement are on", async () => {
    const config = writeConfig("serve.json", {
      chains: [usdc.chain],
      dispenser: { chains: [{ chainId: usdc.chain.chainId, privateKey: usdc.node.accounts[3]!.privateKey }] },
      settlement: { internalSecret: SECRET, treasury: usdc.node.accounts[0]!.address, chains: [{ chainId: usdc.chain.chainId, spenderPrivateKey: usdc.node.accounts[1]!.privateKey }], intervalMs: 60_000 },
    });
    const run = startCli(["serve", "--port", "0", "--db", join(dir, "serve.db"), "--config", config]);
    try {
      while (!/cors: /.test(run.out()) && run.child.exitCode === null) await new Promise((r) => setTimeout(r, 25));
      expect(run.out()).toContain(`dispenser: on, 1.00 USDC per claim on chains ${usdc.chain.chainId} (wallet ${usdc.node.accounts[3]!.address})`);
      expect(run.out()).toContain(`settlement: on, treasury ${usdc.node.accounts[0]!.address}, spender ${usdc.node.accounts[1]!.address} on chain ${usdc.chain.chainId}, a batch every 60 s`);
    } finally {
      await run.stop();
    }
  });
});
