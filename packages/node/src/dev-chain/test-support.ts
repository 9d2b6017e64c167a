/** Test helpers of the dev-chain tests (not part of the package build). */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPublicClient, erc20Abi, http } from "viem";

/** A fresh data directory and the SQLite file `npm start -- --db` would use in it. */
export function tempDataDir(label: string): { dir: string; db: string; devChainDir: string } {
  const dir = mkdtempSync(join(tmpdir(), `tollgate-${label}-`));
  return { dir, db: join(dir, "tollgate.db"), devChainDir: join(dir, "dev-chain") };
}

/** Whether a process exists (a zombie counts until reaped). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Polls `check` every 25 ms until it is true; throws `message` after `timeoutMs`. */
export async function waitUntil(check: () => boolean | Promise<boolean>, message: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(message);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** POSTs JSON; resolves with the status and the parsed body. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** The token balance of `owner`, read from the chain itself (not from the gateway). */
export function usdcBalance(rpcUrl: string, usdc: `0x${string}`, owner: string): Promise<bigint> {
  const client = createPublicClient({ transport: http(rpcUrl) });
  return client.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [owner as `0x${string}`] });
}
