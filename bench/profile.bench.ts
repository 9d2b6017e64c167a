/**
 * Where a metered call's time goes: the SQLite gateway of `bench:media` (target D) and the raw
 * proxy (target A) under wrk, each with a V8 CPU profile, a sampling heap profile and the garbage
 * collections of a measured window taken inside its process (bench/procs/profiler.ts), after
 * warm-up. First c=32 and c=1 runs of both without the profiler (CPU per call, p50/p99), then the
 * profiled runs. Prints the busy time by area for A and D side by side (what the gateway adds, and
 * what even the raw proxy pays), D's functions, the bytes allocated per call, the bytes per call
 * that outlive a young-generation GC (at c=1, for A and D), the GC pauses, and the system calls
 * per call of A and D at c=32 and c=1 (strace attached for separate windows, counts only; strace is
 * installed from Debian's package if missing, and the table is left out if it cannot attach),
 * and writes its section of docs/benchmarks.md.
 * Env: BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (2).
 * Run: npm run bench:profile
 */
import { join } from "node:path";
import { machine, writeSection } from "./lib.js";
import { cleanup, cpuMicros, fmt, type Proc } from "./procs/lib.js";
import { summarize, summarizeHeap } from "./procs/cpuprofile.js";
import { canTrace, countSyscalls, type SyscallCount } from "./procs/syscalls.js";
import type { GcStats } from "./procs/profiler.js";
import {
  checkBilling,
  embeddingsTarget,
  latency,
  prepareRun,
  probe,
  SETTINGS,
  startGateway,
  startRawProxy,
  throughput,
  warmUp,
  type Target,
} from "./procs/targets.js";
import { toolText } from "./wrk.js";

const { seconds: SECONDS, warmUpSeconds: WARMUP_SECONDS, connections: CONNECTIONS } = SETTINGS;
const { loadAtStart, pin, sutCpu: SUT_CPU, loadCpu: LOAD_CPU, tool, dir, stub } = await prepareRun("tollgate-bench-profile-");
const raw = await startRawProxy(stub.info.url, SUT_CPU);
const gateway = await startGateway({ stubUrl: stub.info.url, store: "sqlite", filename: join(dir, "profile.db") }, SUT_CPU);
const meter = await probe(gateway);
const A = embeddingsTarget("A. raw proxy", raw.pid, raw.info.url);
const D = embeddingsTarget("D. Tollgate metered POST /v1/embeddings, SQLite file", gateway.pid, gateway.info.url, meter);
for (const t of [A, D]) await warmUp(t, CONNECTIONS, WARMUP_SECONDS, LOAD_CPU);

// Without the profiler: the figures the shares are read against.
const plainA = await throughput(A, CONNECTIONS, SECONDS, LOAD_CPU);
const plain = await throughput(D, CONNECTIONS, SECONDS, LOAD_CPU);
const latencyA = await latency(A, SECONDS, LOAD_CPU);
const plainLatency = await latency(D, SECONDS, LOAD_CPU);

/** One CPU-profiled window of `proc` around `run`; the profile, the GC pauses and the CPU per answered call. */
async function profiled(proc: Proc<unknown>, name: string, run: () => Promise<{ requests: number }>) {
  const file = join(dir, `${name}.cpuprofile`);
  await proc.ask("profile-start");
  const before = cpuMicros(proc.pid);
  const r = await run();
  const cpuPerCall = (cpuMicros(proc.pid) - before) / r.requests;
  const { gc } = await proc.ask<{ gc: GcStats }>(`profile-stop ${file}`, 60_000);
  return { summary: summarize(file, 100), gc, cpuPerCall, result: r };
}
/** One heap-sampled c=32 window of `target`: the bytes allocated per answered call. */
async function allocations(proc: Proc<unknown>, target: Target, name: string) {
  const file = join(dir, `${name}.heapprofile`);
  await proc.ask("heap-start");
  const r = await throughput(target, CONNECTIONS, SECONDS, LOAD_CPU);
  await proc.ask(`heap-stop ${file}`, 60_000);
  return summarizeHeap(file, r.requests, 12);
}
/**
 * One c=1 window of `target` sampling only what outlives a young-generation GC: at c=1 a call is
 * over long before the next scavenge, so a call's bytes here are what something kept alive past it.
 */
async function survivors(proc: Proc<unknown>, target: Target, name: string) {
  const file = join(dir, `${name}.survivors.heapprofile`);
  await proc.ask("heap-start survivors");
  const r = await latency(target, SECONDS, LOAD_CPU);
  await proc.ask(`heap-stop ${file}`, 60_000);
  return summarizeHeap(file, r.requests, 8);
}
const rawBusy = await profiled(raw, "raw-c32", () => throughput(A, CONNECTIONS, SECONDS, LOAD_CPU));
const busy = await profiled(gateway, "c32", () => throughput(D, CONNECTIONS, SECONDS, LOAD_CPU));
const single = await profiled(gateway, "c1", () => latency(D, SECONDS, LOAD_CPU));
const heapA = await allocations(raw, A, "raw");
const heapD = await allocations(gateway, D, "gateway");
const keptA = await survivors(raw, A, "raw");
const keptD = await survivors(gateway, D, "gateway");
/** System calls per call of A and D at c=32 and c=1 (strace attached: counts only, see syscalls.ts). */
async function syscalls(): Promise<Array<[string, SyscallCount]> | string> {
  if (!canTrace()) return "not counted: strace is not installed and could not be installed";
  const windows: Array<[string, Proc<unknown>, () => Promise<{ requests: number }>]> = [
    [`A c=${CONNECTIONS}`, raw, () => throughput(A, CONNECTIONS, SECONDS, LOAD_CPU)],
    [`D c=${CONNECTIONS}`, gateway, () => throughput(D, CONNECTIONS, SECONDS, LOAD_CPU)],
    ["A c=1", raw, () => latency(A, SECONDS, LOAD_CPU)],
    ["D c=1", gateway, () => latency(D, SECONDS, LOAD_CPU)],
  ];
  const counts: Array<[string, SyscallCount]> = [];
  try {
    for (const [label, proc, run] of windows) counts.push([label, await countSyscalls(proc.pid, join(dir, `${label.replace(/\W/g, "")}.strace`), run)]);
  } catch (error) {
    return `not counted: ${(error as Error).message}`;
  }
  return counts;
}
const traced = await syscalls();
const billing = await checkBilling(meter);
await Promise.all([gateway.stop(), raw.stop(), stub.stop()]);
cleanup();

const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
const cell = (s: string) => s.replaceAll("|", "\\|");
const shareRows = (shares: Array<{ name: string; share: number }>) => shares.map((s) => `| ${cell(s.name)} | ${pct(s.share)} |`).join("\n");

/** Areas of A and D in µs per call (share × CPU per call without the profiler), largest in D first. */
function areaRows(): string {
  const a = new Map(rawBusy.summary.areas.map((s) => [s.name, s.share * plainA.cpuPerCall]));
  const d = new Map(busy.summary.areas.map((s) => [s.name, s.share * plain.cpuPerCall]));
  const names = [...new Set([...d.keys(), ...a.keys()])].sort((x, y) => (d.get(y) ?? 0) - (d.get(x) ?? 0));
  const us = (v: number | undefined) => (v === undefined || v < 0.5 ? "–" : String(Math.round(v)));
  const rows = names
    .filter((n) => (d.get(n) ?? 0) >= 1 || (a.get(n) ?? 0) >= 1)
    .map((n) => `| ${cell(n)} | ${us(a.get(n))} | ${us(d.get(n))} | ${us((d.get(n) ?? 0) - (a.get(n) ?? 0))} |`);
  return [
    ...rows,
    `| **all** | **${Math.round(plainA.cpuPerCall)}** | **${Math.round(plain.cpuPerCall)}** | **${Math.round(plain.cpuPerCall - plainA.cpuPerCall)}** |`,
  ].join("\n");
}
const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const heapRows = (h: typeof heapD) => h.areas.map((s) => `| ${cell(s.name)} | ${kb(s.bytes)} |`).join("\n");
const gcRows = (gc: GcStats, seconds: number) =>
  Object.entries(gc)
    .map(
      ([kind, k]) =>
        `| ${kind} | ${(k.count / seconds).toFixed(1)} | ${(k.totalMs / k.count).toFixed(2)} | ${k.maxMs.toFixed(1)} | ${k.over1ms} | ${k.over3ms} | ${((k.totalMs / (seconds * 1000)) * 100).toFixed(1)} % |`,
    )
    .join("\n");
/** Rows of the system calls made at least 0.05 times per call in some window, most frequent in the last window first. */
function syscallRows(counts: Array<[string, SyscallCount]>): string {
  const names = [...new Set(counts.flatMap(([, c]) => [...c.perCall].filter(([, n]) => n >= 0.05).map(([name]) => name)))];
  const last = counts.at(-1)![1].perCall;
  names.sort((x, y) => (last.get(y) ?? 0) - (last.get(x) ?? 0));
  const n = (v: number | undefined) => (v === undefined || v < 0.005 ? "–" : v.toFixed(2));
  return [
    `| system call | ${counts.map(([label]) => label).join(" | ")} |`,
    `|---|${counts.map(() => "---:").join("|")}|`,
    ...names.map((name) => `| ${name} | ${counts.map(([, c]) => n(c.perCall.get(name))).join(" | ")} |`),
    `| **all** | ${counts.map(([, c]) => `**${c.totalPerCall.toFixed(1)}**`).join(" | ")} |`,
    `| calls answered under strace | ${counts.map(([, c]) => fmt.int(c.requests)).join(" | ")} |`,
  ].join("\n");
}
const GC_HEAD = "| kind | per second | mean pause ms | longest ms | over 1 ms | over 3 ms | share of wall time |\n|---|---:|---:|---:|---:|---:|---:|";

const md = `## Where a metered call's time goes (\`npm run bench:profile\`)

Machine: ${machine()}; 1-minute load average ${loadAtStart.toFixed(2)} at start. Run: ${new Date().toISOString().slice(0, 10)}.

Method: the raw proxy (A) and the SQLite gateway process (D) of \`bench:media\` (production defaults, the undici
client, a stub upstream in its own process; every process bundled from source as \`npm run build\` compiles it)
under ${toolText(tool)}, ${pin ? "pinned with `taskset` (A and D on CPU 0; wrk, the stub and this script on CPU 1)" : "not pinned"}.
After ${WARMUP_SECONDS} s of warm-up at c=${CONNECTIONS} for each, c=${CONNECTIONS} and c=1 runs of ${SECONDS} s of each without the profiler,
then c=${CONNECTIONS} runs of each with the V8 CPU profiler (100 µs sampling, started and stopped inside the process through
\`node:inspector\`, so start-up and warm-up stay out), a c=1 run of D the same way, and c=${CONNECTIONS} runs of each with the
sampling heap profiler (every allocation of the window, collected or not). Shares are of the profile's busy samples
(idle left out); "µs per call" multiplies a share by the CPU per call measured without the profiler. Self time: in
the area itself; a native call (a SQLite statement, a socket write) counts for the JavaScript that made it.

Without the profiler: A ${fmt.int(plainA.perSecond)} calls/s at c=${CONNECTIONS}, ${Math.round(plainA.cpuPerCall)} µs of CPU per call, c=1 p50 ${fmt.ms(latencyA.p50)} ms,
p99 ${fmt.ms(latencyA.p99)} ms; D ${fmt.int(plain.perSecond)} calls/s (${fmt.ratio(plain.perSecond / plainA.perSecond)}), **${Math.round(plain.cpuPerCall)} µs of CPU per call**, c=1 p50
${fmt.ms(plainLatency.p50)} ms, p99 ${fmt.ms(plainLatency.p99)} ms. Profiled: A ${Math.round(rawBusy.cpuPerCall)} µs, D ${Math.round(busy.cpuPerCall)} µs per call at c=${CONNECTIONS} (the profiler's own cost).

Self time by area at c=${CONNECTIONS}, µs of CPU per call (A and D measured in the same run):

| area | A raw proxy | D gateway | D − A |
|---|---:|---:|---:|
${areaRows()}

D's functions by self time at c=${CONNECTIONS}:

| function | share |
|---|---:|
${shareRows(busy.summary.functions.slice(0, 15))}

D's functions by inclusive time at c=${CONNECTIONS} (each with what it called):

| function | share |
|---|---:|
${shareRows(busy.summary.inclusive.slice(0, 20))}

D's self time by area at c=1:

| area | share |
|---|---:|
${shareRows(single.summary.areas.slice(0, 10))}

Allocated per call at c=${CONNECTIONS}: A **${kb(heapA.bytesPerCall)} KB**, D **${kb(heapD.bytesPerCall)} KB**. D by area:

| area | KB per call |
|---|---:|
${heapRows(heapD)}

Outliving a young-generation GC at c=1 (sampled as above, without what a scavenge collected): A **${kb(keptA.bytesPerCall)} KB**
per call, D **${kb(keptD.bytesPerCall)} KB**. A scavenge copies these bytes, so they set its pause. D by function:

| function | KB per call |
|---|---:|
${keptD.functions.map((s) => `| ${cell(s.name)} | ${kb(s.bytes)} |`).join("\n")}

D's garbage collection at c=${CONNECTIONS}:

${GC_HEAD}
${gcRows(busy.gc, SECONDS)}

D's garbage collection at c=1 (a call that meets a pause waits for it):

${GC_HEAD}
${gcRows(single.gc, SECONDS)}

A's garbage collection at c=${CONNECTIONS}, for comparison:

${GC_HEAD}
${gcRows(rawBusy.gc, SECONDS)}

System calls per answered call, all threads of each process (\`strace -c -f\` attached for a separate ${SECONDS} s window of each;
strace stops the process at every system call, so these windows count and never time: they serve far fewer calls than
the runs above, and D's commits group fewer steps, so D's c=${CONNECTIONS} counts of its database writes are an upper bound):

${typeof traced === "string" ? traced : syscallRows(traced)}

Billing check: ${billing.ok ? "**passed**" : "**FAILED**"}: ${billing.text}.`;
console.log(md);
writeSection("profile", md);
if (!billing.ok) {
  console.error("BILLING CHECK FAILED");
  process.exitCode = 1;
}
