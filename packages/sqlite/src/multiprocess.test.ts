import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { createSqliteStore } from "./store.js";

const WORKERS = 4;
const ITERATIONS = 600;
const LIMIT = 2000n;
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const workerFile = fileURLToPath(new URL("./multiprocess-worker.ts", import.meta.url));

interface Stats { settled: string; charged: string; reserved: number; exhausted: number; settles: number; aborts: number; charges: number }

/** Spawns one worker process; `go` releases it once every worker is ready. */
function startWorker(args: string[]) {
  const child = spawn(process.execPath, ["--import", tsx, "--conditions=tollgate-source", workerFile, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    if (out.startsWith("ready\n")) onReady();
  });
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const done = new Promise<Stats>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop() ?? "") as Stats) : reject(new Error(`worker exited ${code}: ${err}`))));
  });
  return { ready: Promise.race([ready, done.then(() => {})]), go: () => child.stdin.end("go\n"), done, stop: () => child.exitCode === null && child.kill() };
}

it(`${WORKERS} processes racing on one key never overspend and lose nothing`, async () => {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-multiprocess-"));
  const filename = join(dir, "race.db");
  const store = createSqliteStore({ filename });
  const workers: ReturnType<typeof startWorker>[] = [];
  try {
    const t0 = Date.UTC(2026, 0, 1);
    const keyId = "key_race";
    await store.insertKey({ keyId, tokenHash: "ab".repeat(32), owner: "0x00000000000000000000000000000000000000aa", chainId: 8453, purpose: "api", budgetLimit: LIMIT, budgetUsed: 0n, budgetReserved: 0n, createdAt: t0, expiresAt: t0 + 86_400_000 });

    for (let i = 0; i < WORKERS; i++) workers.push(startWorker([filename, keyId, String(i), String(ITERATIONS)]));
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) w.go();

    // Watch the key from a fifth connection while the workers run.
    let finished = false;
    const all = Promise.all(workers.map((w) => w.done)).finally(() => (finished = true));
    all.catch(() => {}); // observed below, after the loop
    let polls = 0;
    while (!finished) {
      const key = await store.getKeyById(keyId);
      expect(key && key.budgetUsed + key.budgetReserved <= key.budgetLimit).toBe(true);
      polls++;
      await sleep(2);
    }
    const stats = await all;

    const key = await store.getKeyById(keyId);
    const settled = stats.reduce((sum, s) => sum + BigInt(s.settled) + BigInt(s.charged), 0n);
    expect(key).toMatchObject({ budgetReserved: 0n, budgetUsed: settled });
    expect(settled <= LIMIT).toBe(true);
    for (const s of stats) expect(s.settles + s.aborts).toBe(s.reserved);
    // The budget was contended: some workers were turned away.
    expect(stats.reduce((n, s) => n + s.exhausted, 0)).toBeGreaterThan(0);
    expect(polls).toBeGreaterThan(0);
  } finally {
    for (const w of workers) w.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
