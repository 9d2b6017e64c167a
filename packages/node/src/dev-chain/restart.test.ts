/**
 * The dev chain lives as long as the ledger beside it: a restart on the same data directory
 * resumes the same chain (token, balances, the dispenser's claims agree with the ledger), after a
 * clean stop and after the server was killed outright (its orphaned anvil is stopped and its
 * latest state resumed).
 */
import { afterAll, describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "../testing/cli-process.js";
import { readDevChainRecord, type DevChainRecord } from "./record.js";
import { pidAlive, postJson, tempDataDir, usdcBalance, waitUntil } from "./test-support.js";

const data = tempDataDir("dev-restart");
const started: CliProcess[] = [];
const anvils = new Set<number>();
const [A, B, C] = ["0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000b2", "0x00000000000000000000000000000000000000c3"];

async function start(): Promise<{ run: CliProcess; url: string; record: DevChainRecord }> {
  const run = startCli(["serve", "--port", "0", "--db", data.db], { TOLLGATE_DEV_CHAIN: "auto" });
  started.push(run);
  const url = await run.url();
  const record = readDevChainRecord(data.devChainDir)!;
  anvils.add(record.anvil!.pid);
  return { run, url, record };
}

const claim = (url: string, address: string) => postJson(`${url}/api/dispenser/claim`, { address, chainId: 31337 });

afterAll(async () => {
  await Promise.all(started.map((r) => r.stop()));
  for (const pid of anvils) if (pidAlive(pid)) process.kill(pid, "SIGKILL");
});

describe("restarting on the same data directory", () => {
  let first: DevChainRecord;

  it("resumes the chain after a clean stop: same token, balances kept, claims still once per address", async () => {
    const one = await start();
    first = one.record;
    expect(one.run.out()).toContain(", new; kept in");
    expect((await claim(one.url, A)).status).toBe(200);
    expect(await one.run.stop()).toBe(0);
    await waitUntil(() => !pidAlive(first.anvil!.pid), "anvil outlived a clean stop");

    const two = await start();
    expect(two.run.out()).toContain(", resumed; kept in");
    expect(two.record).toMatchObject({ usdc: first.usdc, internalSecret: first.internalSecret, roles: first.roles });
    expect(two.record.rpcUrl).not.toBe(first.rpcUrl); // a new anvil on a new port, on the old state
    expect(await usdcBalance(two.record.rpcUrl, two.record.usdc, A)).toBe(1_000_000n);
    const again = await claim(two.url, A);
    expect([again.status, again.body.alreadyClaimed]).toEqual([409, true]);
    expect((await claim(two.url, B)).status).toBe(200);
    expect(await usdcBalance(two.record.rpcUrl, two.record.usdc, two.record.roles.dispenser)).toBe(1_000_000_000_000n - 2_000_000n);

    // Killed outright: the server cannot stop its anvil, which lives on as an orphan.
    two.run.child.kill("SIGKILL");
    await two.run.exited;
    expect(pidAlive(two.record.anvil!.pid)).toBe(true);

    const three = await start();
    await waitUntil(() => !pidAlive(two.record.anvil!.pid), "the orphaned anvil was not stopped");
    expect(three.record.anvil!.pid).not.toBe(two.record.anvil!.pid);
    expect(three.run.out()).toContain(", resumed; kept in");
    expect(three.record.usdc).toBe(first.usdc);
    // The orphan wrote its latest state when stopped, so B's claim (made after the last clean stop) is there.
    expect(await usdcBalance(three.record.rpcUrl, three.record.usdc, B)).toBe(1_000_000n);
    expect((await claim(three.url, B)).status).toBe(409);
    const c = await claim(three.url, C);
    expect(c.status).toBe(200);
    expect(await usdcBalance(three.record.rpcUrl, three.record.usdc, C)).toBe(1_000_000n);
    expect(await three.run.stop()).toBe(0);
  }, 90_000);

  it("keeps the generated internal secret out of a run given its own, and reuses it afterwards", async () => {
    const secret = "restart-test-own-internal-secret";
    const run = startCli(["serve", "--port", "0", "--db", data.db], { TOLLGATE_DEV_CHAIN: "auto", TOLLGATE_INTERNAL_SECRET: secret });
    started.push(run);
    const url = await run.url();
    const record = readDevChainRecord(data.devChainDir)!;
    anvils.add(record.anvil!.pid);
    expect(record.internalSecret).toBe(first.internalSecret);
    expect(run.out()).toContain("-H 'x-internal-secret: <your internal secret>'");
    expect(run.out()).not.toContain(secret);
    expect((await postJson(`${url}/api/settlement/batch`, {}, { "x-internal-secret": secret })).status).toBe(200);
    expect((await postJson(`${url}/api/settlement/batch`, {}, { "x-internal-secret": first.internalSecret })).status).toBe(401);
    expect(await run.stop()).toBe(0);
  }, 60_000);
});
