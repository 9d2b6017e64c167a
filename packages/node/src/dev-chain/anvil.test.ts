/** startAnvil (a real anvil from @foundry-rs/anvil), its account parsing, its state file, and the stray-anvil check. */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseAnvilAccounts, rpcCall, startAnvil, type AnvilNode } from "./anvil.js";
import { stopStrayAnvil } from "./stray.js";
import { pidAlive } from "./test-support.js";

const nodes: AnvilNode[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.stop()));
});
async function start(options: Parameters<typeof startAnvil>[0] = {}): Promise<AnvilNode> {
  const node = await startAnvil(options);
  nodes.push(node);
  return node;
}

const WHO = "0x00000000000000000000000000000000000000d4";

describe("parseAnvilAccounts", () => {
  it("pairs the addresses and keys of anvil's banner by index, lower-cased, and finds none in other text", () => {
    const banner = [
      "Available Accounts",
      "==================",
      "",
      "(0) 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266 (10000.000000000000000000 ETH)",
      "(1) 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 (10000.000000000000000000 ETH)",
      "",
      "Private Keys",
      "==================",
      "",
      "(0) 0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
      "(1) 0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    ].join("\n");
    expect(parseAnvilAccounts(banner)).toEqual([
      { address: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", privateKey: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80" },
      { address: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", privateKey: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" },
    ]);
    expect(parseAnvilAccounts("Listening on 127.0.0.1:8545")).toEqual([]);
  });
});

describe("startAnvil", () => {
  it("starts on a free loopback port with the requested chain id and anvil's ten dev accounts; stop ends the process and is idempotent", async () => {
    const node = await start({ chainId: 31338 });
    expect(node.rpcUrl).toBe(`http://127.0.0.1:${node.port}`);
    expect(node.port).toBeGreaterThan(0);
    expect(Number(await rpcCall<string>(node.rpcUrl, "eth_chainId"))).toBe(31338);
    expect(node.accounts).toHaveLength(10);
    expect(node.accounts[0]!.address).toBe("0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266");
    expect((await rpcCall<string[]>(node.rpcUrl, "eth_accounts")).map((a) => a.toLowerCase())).toEqual(node.accounts.map((a) => a.address));
    await node.stop();
    expect(pidAlive(node.pid)).toBe(false);
    await node.stop();
  });

  it("keeps the chain in statePath across a stop and a start", async () => {
    const statePath = join(mkdtempSync(join(tmpdir(), "tollgate-anvil-")), "state.json");
    const first = await start({ statePath, stateIntervalSeconds: 5 });
    // Started means anvil catches SIGTERM (it writes its state then); before, a SIGTERM killed it outright.
    const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${first.pid}/status`, "utf8"))![1]!;
    expect(BigInt(`0x${caught}`) & (1n << 14n)).toBe(1n << 14n);
    await rpcCall(first.rpcUrl, "anvil_setBalance", [WHO, "0x1234"]);
    await first.stop();
    const second = await start({ statePath });
    expect(second.port).not.toBe(first.port);
    expect(await rpcCall<string>(second.rpcUrl, "eth_getBalance", [WHO, "latest"])).toBe("0x1234");
  });

  it("rejects, with anvil's own words, when anvil refuses to start: an unknown argument, an unreadable state file", async () => {
    await expect(startAnvil({ args: ["--no-such-flag"] })).rejects.toThrow(/anvil exited at start \(code \d+.*\n[\s\S]*no-such-flag/);
    const statePath = join(mkdtempSync(join(tmpdir(), "tollgate-anvil-")), "state.json");
    writeFileSync(statePath, "{ not json");
    await expect(startAnvil({ statePath })).rejects.toThrow(/anvil exited at start/);
  });
});

describe("stopStrayAnvil", () => {
  it("leaves alone an anvil whose server is alive, a pid that is not that anvil, and no record at all", async () => {
    const statePath = join(mkdtempSync(join(tmpdir(), "tollgate-stray-")), "state.json");
    const node = await start({ statePath });
    expect(await stopStrayAnvil({ pid: node.pid, serverPid: process.pid }, statePath)).toEqual({ kind: "in-use", pid: node.pid, serverPid: process.pid });
    expect(await stopStrayAnvil({ pid: node.pid, serverPid: 999_999 }, join(tmpdir(), "another-state.json"))).toEqual({ kind: "none" });
    expect(await stopStrayAnvil({ pid: process.pid, serverPid: 999_999 }, statePath)).toEqual({ kind: "none" });
    expect(await stopStrayAnvil(undefined, statePath)).toEqual({ kind: "none" });
    expect(pidAlive(node.pid)).toBe(true);
  });

  it("stops an anvil whose recorded server is gone (an orphan), which writes its state first", async () => {
    const statePath = join(mkdtempSync(join(tmpdir(), "tollgate-stray-")), "state.json");
    const node = await start({ statePath });
    await rpcCall(node.rpcUrl, "anvil_setBalance", [WHO, "0x99"]);
    expect(await stopStrayAnvil({ pid: node.pid, serverPid: 999_999 }, statePath)).toEqual({ kind: "stopped", pid: node.pid });
    expect(pidAlive(node.pid)).toBe(false);
    const resumed = await start({ statePath });
    expect(await rpcCall<string>(resumed.rpcUrl, "eth_getBalance", [WHO, "latest"])).toBe("0x99");
  });
});
