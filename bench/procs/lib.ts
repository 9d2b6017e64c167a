/**
 * Child-process plumbing of the process-separated benchmarks: spawning a TypeScript script (or a
 * tool) as its own process, optionally pinned to a CPU with `taskset`, reading its JSON lines,
 * CPU time from /proc, and killing every child when the benchmark ends or fails (no orphans).
 * The scripts under bench/procs/ also exit by themselves when their stdin closes, i.e. when the
 * benchmark process dies without cleaning up.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { build } from "esbuild";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

/** The repository root (children run there; the bundles live under its node_modules). */
export const ROOT = resolve(import.meta.dirname, "../..");

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

/** Kills every live child and removes the temp dirs; synchronous, so it also runs on `exit`. */
export function cleanup(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  children.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}
process.on("exit", cleanup);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
  process.on(signal, () => {
    cleanup();
    process.exit(130);
  });

/** A temp dir removed by {@link cleanup}. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** Whether to pin with taskset: two or more CPUs and `taskset` on PATH (BENCH_PIN=0 turns it off). */
export const canPin = (): boolean => process.env.BENCH_PIN !== "0" && cpus().length >= 2 && spawnSync("taskset", ["-V"]).status === 0;

/** Prefixes a command with `taskset -c cpu` when `cpu` is set. taskset execs: the pid stays the command's. */
export const pinned = (cpu: number | undefined, command: string, args: string[]): [string, string[]] =>
  cpu === undefined ? [command, args] : ["taskset", ["-c", String(cpu), command, ...args]];

/** Pins this process (all its threads) to `cpu`; a no-op when `cpu` is undefined. */
export function pinSelf(cpu: number | undefined): void {
  if (cpu !== undefined) spawnSync("taskset", ["-a", "-p", "-c", String(cpu), String(process.pid)], { stdio: "ignore" });
}

/** Spawns a tool, remembers it for {@link cleanup}, and collects its stdout/stderr. */
export function run(command: string, args: string[], cpu?: number, env?: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [cmd, argv] = pinned(cpu, command, args);
  const child = spawn(cmd, argv, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  children.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolveRun, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      children.delete(child);
      resolveRun({ code, stdout, stderr });
    });
  });
}

/** A long-running child speaking JSON lines: its first line is its `info`; `ask` writes a command and reads the next line. */
export interface Proc<I> {
  readonly pid: number;
  readonly info: I;
  /** `timeoutMs` bounds the wait for the answer (default 10 s). */
  ask<T>(command: string, timeoutMs?: number): Promise<T>;
  /** SIGTERM, then SIGKILL after 3 s; resolves when it exited. */
  stop(): Promise<void>;
}

/** Where the bundled scripts go: inside the root node_modules, so their external imports resolve from there. */
const BUNDLE_DIR = join(ROOT, "node_modules", ".cache", "tollgate-bench");
const bundles = new Map<string, Promise<string>>();

/**
 * Bundles `bench/procs/<script>` with the workspace packages compiled from their sources, as
 * `npm run build` compiles them (esbuild, target node20, no `keepNames`), and every other package
 * left external. Why not run the sources through tsx: tsx compiles with `keepNames`, which wraps
 * every function a call creates in a `__name(...)` property write (measured: ~4 % of the
 * gateway's CPU), a cost the built packages a deployment runs do not have.
 */
function bundle(script: string): Promise<string> {
  let out = bundles.get(script);
  if (!out) {
    const outfile = join(BUNDLE_DIR, script.replace(/\.ts$/, ".mjs"));
    out = build({
      entryPoints: [join(ROOT, "bench/procs", script)],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      sourcemap: true,
      sourcesContent: false,
      conditions: ["tollgate-source"],
      logLevel: "error",
      plugins: [
        {
          name: "external-packages",
          setup(b) {
            // Bare imports stay external (resolved from node_modules at run time), except ours.
            b.onResolve({ filter: /^[^./]/ }, (a) => (a.path.startsWith("@tollgate/") ? undefined : { path: a.path, external: true }));
          },
        },
      ],
    }).then(() => outfile);
    bundles.set(script, out);
  }
  return out;
}

/**
 * Starts `bench/procs/<script>` (bundled by {@link bundle}) with node, pinned to `cpu` when set,
 * with `args`; resolves once it printed its first JSON line (within 30 s).
 */
export async function startProc<I>(script: string, args: string[], cpu?: number): Promise<Proc<I>> {
  const file = await bundle(script);
  const [cmd, argv] = pinned(cpu, process.execPath, [file, ...args]);
  const child = spawn(cmd, argv, { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  children.add(child);
  const waiting: Array<{ ok: (line: string) => void; fail: (e: Error) => void }> = [];
  const failAll = (e: Error) => waiting.splice(0).forEach((w) => w.fail(e));
  child.once("exit", (code, signal) => {
    children.delete(child);
    failAll(new Error(`${script} exited (${signal ?? code})`));
  });
  child.once("error", (e) => failAll(e));
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (line.startsWith("{")) waiting.shift()?.ok(line);
  });
  const nextLine = (timeoutMs: number) =>
    new Promise<string>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`${script}: no answer within ${timeoutMs} ms`)), timeoutMs);
      waiting.push({ ok: (l) => (clearTimeout(timer), ok(l)), fail: (e) => (clearTimeout(timer), fail(e)) });
    });
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      const hard = setTimeout(() => child.kill("SIGKILL"), 3_000);
      child.once("exit", () => (clearTimeout(hard), done()));
      child.kill("SIGTERM");
    });
  return nextLine(30_000).then((line) => ({
    pid: child.pid!,
    info: JSON.parse(line) as I,
    ask: <T>(command: string, timeoutMs = 10_000) => {
      const answer = nextLine(timeoutMs);
      child.stdin!.write(`${command}\n`);
      return answer.then((l) => JSON.parse(l) as T);
    },
    stop,
  }));
}

/**
 * The child side: prints `info` as the first JSON line, answers each stdin line with
 * `JSON.stringify(await answer(line))`, and exits when stdin closes (the parent is gone).
 */
export function serveParent(info: unknown, answer: (command: string) => unknown, onExit: () => Promise<void> | void = () => {}): void {
  const exit = () => void Promise.resolve(onExit()).finally(() => process.exit(0));
  process.on("SIGTERM", exit);
  process.stdin.on("end", exit);
  createInterface({ input: process.stdin }).on("line", (line) => {
    void Promise.resolve(answer(line.trim())).then((a) => process.stdout.write(`${JSON.stringify(a)}\n`));
  });
  process.stdout.write(`${JSON.stringify(info)}\n`);
}

const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"]).stdout?.toString().trim()) || 100;

/** User + system CPU time of a process (all its threads) in microseconds, from /proc/<pid>/stat. */
export function cpuMicros(pid: number): number {
  return cpuMicrosFromStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
}

function cpuMicrosFromStat(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After "(comm) ": state is field 3, utime 14 and stime 15 (1-based) → indexes 11 and 12 here.
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK;
}

/** User + system CPU time of each process named `name` (e.g. PostgreSQL's), in microseconds by pid. */
export function cpuMicrosByPid(name: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) === name) out.set(Number(entry), cpuMicrosFromStat(stat));
  }
  return out;
}

/**
 * CPU the processes named `name` spent since `before` ({@link cpuMicrosByPid}): those alive now, a
 * new one counted whole. A process that exited meanwhile is not counted (its time is gone from /proc).
 */
export function cpuMicrosSince(name: string, before: Map<number, number>): number {
  let total = 0;
  for (const [pid, micros] of cpuMicrosByPid(name)) total += micros - (before.get(pid) ?? 0);
  return total;
}

/**
 * CPU time the whole machine spent in user and system mode, plus the time the hypervisor stole, in
 * microseconds over all CPUs, from /proc/stat (irq and softirq time left out: they are partly this
 * benchmark's own network traffic). With {@link cpuMicros} of one's own processes, the rest is
 * other processes' load.
 */
export function machineCpuMicros(): number {
  const [user = 0, nice = 0, system = 0, , , , , steal = 0] = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  return ((user + nice + system + steal) * 1e6) / CLK_TCK;
}

/** Median of a list. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** "median (min–max)" with a formatter; just the value for one sample. */
export function spread(values: number[], fmt: (v: number) => string): string {
  if (values.length <= 1) return fmt(values[0] ?? NaN);
  return `${fmt(median(values))} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})`;
}

/** Formatters of the tables: whole numbers with separators, ratios, milliseconds, a goal verdict. */
export const fmt = {
  int: (v: number): string => Math.round(v).toLocaleString("en"),
  ratio: (v: number): string => `${v.toFixed(3)}×`,
  ms: (v: number): string => v.toFixed(3),
  goal: (met: boolean): string => (met ? "**met**" : "**not met**"),
};
