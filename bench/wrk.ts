/**
 * The load generator of the process-separated benchmarks: wrk (the Debian package; installed
 * with `apt-get install -y wrk` when missing), else the `autocannon` npm API when installed, else
 * a clear failure. Every run fails loudly on any non-2xx answer or socket error.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT, run } from "./procs/lib.js";

/** One load run. */
export interface LoadSpec {
  url: string;
  method: "GET" | "POST";
  body?: string;
  token?: string;
  connections: number;
  seconds: number;
  /** Collect the latency distribution (p50/p99). */
  latency?: boolean;
  /** Pin the load generator to this CPU. */
  cpu?: number;
}

/** What a run measured; latencies in ms. */
export interface LoadResult {
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
}

const onPath = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;

/**
 * Whether `cmd` is on PATH, after trying `apt-get install -y <debianPackage>` when it is not (a
 * benchmark tool from Debian: wrk, strace). Never throws; the caller decides what a miss means.
 */
export function ensureCommand(cmd: string, debianPackage = cmd): boolean {
  if (onPath(cmd)) return true;
  console.error(`${cmd} is not on PATH: trying \`apt-get install -y ${debianPackage}\` …`);
  spawnSync("sh", ["-c", `apt-get install -y ${debianPackage} || (apt-get update && apt-get install -y ${debianPackage})`], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return onPath(cmd);
}

/** The load generator in use. */
export type Tool = { name: "wrk" } | { name: "autocannon"; run: (opts: Record<string, unknown>) => Promise<AutocannonResult> };
/** What the autocannon API reports of a run (the fields read here). */
export interface AutocannonResult {
  requests: { total: number; average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
}
let tool: Tool | undefined;

/** Finds (or installs) the load generator; its name is part of the method text. */
export async function loadTool(): Promise<Tool> {
  if (tool) return tool;
  if (ensureCommand("wrk")) return (tool = { name: "wrk" });
  const name = "autocannon";
  const mod = (await import(name).catch(() => undefined)) as { default: Extract<Tool, { name: "autocannon" }>["run"] } | undefined;
  if (mod) return (tool = { name: "autocannon", run: mod.default });
  throw new Error(
    "No load generator: wrk is not on PATH and `apt-get install -y wrk` failed, and the autocannon npm package is not installed (npm i -D autocannon).",
  );
}

/** A wrk duration ("812.00us", "1.20ms", "2.00s", "1.00m") in ms. */
export function wrkMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) throw new Error(`unreadable wrk duration: ${text}`);
  const unit = { us: 1e-3, ms: 1, s: 1e3, m: 60e3 }[m[2] as "us" | "ms" | "s" | "m"];
  return Number(m[1]) * unit;
}

/** Parses wrk's text output; throws on non-2xx answers or socket errors. */
export function parseWrk(out: string, latency: boolean): LoadResult {
  const total = /(\d+) requests in ([\d.]+\w+)/.exec(out);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (!total || !rps) throw new Error(`unreadable wrk output:\n${out}`);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out);
  if (non2xx) throw new Error(`wrk: ${non2xx[1]} non-2xx answers:\n${out}`);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  if (socket) throw new Error(`wrk: socket errors:\n${out}`);
  const pct = (p: string) => {
    const m = new RegExp(`^\\s+${p}%\\s+(\\S+)`, "m").exec(out);
    if (!m) throw new Error(`wrk output has no ${p}% latency line:\n${out}`);
    return wrkMs(m[1]!);
  };
  return { requests: Number(total[1]), perSecond: Number(rps[1]), p50: latency ? pct("50") : NaN, p99: latency ? pct("99") : NaN };
}

/** Runs one load; any non-2xx answer or socket error throws. */
export async function load(spec: LoadSpec): Promise<LoadResult> {
  const t = await loadTool();
  if (t.name === "autocannon") {
    const r = await t.run({
      url: spec.url,
      method: spec.method,
      connections: spec.connections,
      duration: spec.seconds,
      ...(spec.body ? { body: spec.body } : {}),
      headers: { ...(spec.body ? { "content-type": "application/json" } : {}), ...(spec.token ? { authorization: `Bearer ${spec.token}` } : {}) },
    });
    if (r.non2xx || r.errors || r.timeouts) throw new Error(`autocannon: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts against ${spec.url}`);
    return { requests: r.requests.total, perSecond: r.requests.total / r.duration, p50: r.latency.p50, p99: r.latency.p99 };
  }
  const args = ["-t1", `-c${spec.connections}`, `-d${spec.seconds}s`, "-s", join(ROOT, "bench/post.lua"), ...(spec.latency ? ["--latency"] : []), spec.url];
  const env = { WRK_METHOD: spec.method, WRK_BODY: spec.body ?? "", WRK_AUTH: spec.token ? `Bearer ${spec.token}` : "" };
  const r = await run("wrk", args, spec.cpu, env);
  if (r.code !== 0) throw new Error(`wrk exited with ${r.code}: ${r.stderr}${r.stdout}`);
  return parseWrk(r.stdout, spec.latency ?? false);
}

/** The load generator's description for the method text. */
export const toolText = (t: Tool): string =>
  t.name === "wrk"
    ? `wrk (${spawnSync("wrk", ["-v"]).stdout.toString().split("\n")[0]?.split(" Copyright")[0]?.trim()}, one thread)`
    : "the autocannon npm API";
