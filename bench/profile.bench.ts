/**
 * Where a metered call's time goes: the SQLite gateway of `bench:media` (target D) under wrk, with
 * a V8 CPU profile and the garbage collections of a measured window taken inside the gateway
 * process (bench/procs/profiler.ts), after warm-up. First one c=32 and one c=1 run without the
 * profiler (CPU per call, p50/p99), then the same two runs profiled. Prints the busy time by area
 * and by function, and the GC pauses, and writes its section of docs/benchmarks.md.
 * Env: BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (2).
 * Run: npm run bench:profile
 */
import { join } from "node:path";
import { machine, writeSection } from "./lib.js";
import { cleanup, cpuMicros, fmt } from "./procs/lib.js";
import { summarize, type Share } from "./procs/cpuprofile.js";
import type { GcStats } from "./procs/profiler.js";
import { checkBilling, embeddingsTarget, latency, prepareRun, probe, SETTINGS, startGateway, throughput, warmUp } from "./procs/targets.js";
import { toolText } from "./wrk.js";

const { seconds: SECONDS, warmUpSeconds: WARMUP_SECONDS, connections: CONNECTIONS } = SETTINGS;
const { loadAtStart, pin, sutCpu: SUT_CPU, loadCpu: LOAD_CPU, tool, dir, stub } = await prepareRun("tollgate-bench-profile-");
const gateway = await startGateway({ stubUrl: stub.info.url, store: "sqlite", filename: join(dir, "profile.db") }, SUT_CPU);
const meter = await probe(gateway);
const target = embeddingsTarget("D. Tollgate metered POST /v1/embeddings, SQLite file", gateway.pid, gateway.info.url, meter);
await warmUp(target, CONNECTIONS, WARMUP_SECONDS, LOAD_CPU);

// Without the profiler: the figures the shares are read against.
const plain = await throughput(target, CONNECTIONS, SECONDS, LOAD_CPU);
const plainLatency = await latency(target, SECONDS, LOAD_CPU);

/** One profiled window around `run`; the profile file, the GC pauses and the CPU per answered call. */
async function profiled(name: string, run: () => Promise<{ requests: number }>) {
  const file = join(dir, `${name}.cpuprofile`);
  await gateway.ask("profile-start");
  const before = cpuMicros(gateway.pid);
  const r = await run();
  const cpuPerCall = (cpuMicros(gateway.pid) - before) / r.requests;
  const { gc } = await gateway.ask<{ gc: GcStats }>(`profile-stop ${file}`, 60_000);
  return { summary: summarize(file), gc, cpuPerCall, result: r };
}
const busy = await profiled("c32", () => throughput(target, CONNECTIONS, SECONDS, LOAD_CPU));
const single = await profiled("c1", () => latency(target, SECONDS, LOAD_CPU));
const billing = await checkBilling(meter);
await Promise.all([gateway.stop(), stub.stop()]);
cleanup();

const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
const shareRows = (shares: Share[], perCall?: number) =>
  shares.map((s) => `| ${s.name.replaceAll("|", "\\|")} | ${pct(s.share)} |${perCall === undefined ? "" : ` ${Math.round(s.share * perCall)} |`}`).join("\n");
const gcRows = (gc: GcStats, seconds: number) =>
  Object.entries(gc)
    .map(
      ([kind, k]) =>
        `| ${kind} | ${(k.count / seconds).toFixed(1)} | ${(k.totalMs / k.count).toFixed(2)} | ${k.maxMs.toFixed(1)} | ${k.over1ms} | ${k.over3ms} | ${((k.totalMs / (seconds * 1000)) * 100).toFixed(1)} % |`,
    )
    .join("\n");
const GC_HEAD = "| kind | per second | mean pause ms | longest ms | over 1 ms | over 3 ms | share of wall time |\n|---|---:|---:|---:|---:|---:|---:|";

const md = `## Where a metered call's time goes (\`npm run bench:profile\`)

Machine: ${machine()}; 1-minute load average ${loadAtStart.toFixed(2)} at start. Run: ${new Date().toISOString().slice(0, 10)}.

Method: the SQLite gateway process of \`bench:media\` (target D: production defaults, the undici client, a stub
upstream in its own process) under ${toolText(tool)}, ${pin ? "pinned with `taskset` (gateway on CPU 0; wrk, the stub and this script on CPU 1)" : "not pinned"}.
After ${WARMUP_SECONDS} s of warm-up at c=${CONNECTIONS}, one c=${CONNECTIONS} run and one c=1 run of ${SECONDS} s without the profiler,
then the same two runs with the V8 CPU profiler (100 µs sampling, started and stopped inside the gateway through
\`node:inspector\`, so start-up and warm-up stay out) and a \`PerformanceObserver\` on garbage collections.
Shares are of the profile's busy samples (idle left out); "µs per call" multiplies a share by the CPU per call
measured without the profiler. Self time: in the function (or area) itself; a native call such as a SQLite
statement counts as self time of the JavaScript function that made it.

Without the profiler: ${fmt.int(plain.perSecond)} calls/s at c=${CONNECTIONS}, **${Math.round(plain.cpuPerCall)} µs of CPU per call**; at c=1
p50 ${fmt.ms(plainLatency.p50)} ms, p99 ${fmt.ms(plainLatency.p99)} ms. With it: ${Math.round(busy.cpuPerCall)} µs per call at c=${CONNECTIONS} (the profiler's own
cost), ${Math.round(single.cpuPerCall)} µs per call at c=1.

Self time by area at c=${CONNECTIONS}:

| area | share | µs per call |
|---|---:|---:|
${shareRows(busy.summary.areas.slice(0, 16), plain.cpuPerCall)}

Functions by self time at c=${CONNECTIONS}:

| function | share |
|---|---:|
${shareRows(busy.summary.functions.slice(0, 15))}

Functions by inclusive time at c=${CONNECTIONS} (each with what it called):

| function | share |
|---|---:|
${shareRows(busy.summary.inclusive.slice(0, 20))}

Self time by area at c=1:

| area | share |
|---|---:|
${shareRows(single.summary.areas.slice(0, 10))}

Garbage collection at c=${CONNECTIONS}:

${GC_HEAD}
${gcRows(busy.gc, SECONDS)}

Garbage collection at c=1 (a call that meets a pause waits for it: this is the p99):

${GC_HEAD}
${gcRows(single.gc, SECONDS)}

Billing check: ${billing.ok ? "**passed**" : "**FAILED**"}: ${billing.text}.`;
console.log(md);
writeSection("profile", md);
if (!billing.ok) {
  console.error("BILLING CHECK FAILED");
  process.exitCode = 1;
}
