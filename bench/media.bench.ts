/**
 * Media overhead benchmark: what the gateway adds to `POST /v1/embeddings` over a bare proxy,
 * with the server, the raw proxy and the upstream stub as separate processes and the load from
 * wrk in another process. Targets (bench/procs/):
 *   A. raw proxy: node:http + an undici Pool pass-through to the stub (the baseline, 1×);
 *   B. Tollgate unmetered `GET /v1/models/text-embedding-3-small` on the SQLite gateway (bridge + router);
 *   C. Tollgate metered `POST /v1/embeddings`, memory store;
 *   D. Tollgate metered `POST /v1/embeddings`, SQLite file store (the headline).
 * With two CPUs the servers run alone on CPU 0, wrk, the stub and this script on CPU 1. Rounds
 * interleave the targets (A, B, C, D, then the next round); each round measures c=32 throughput
 * (and the server's CPU per call) then c=1 latency. Medians with min–max; every metered call is
 * checked to be billed exactly once. Env: BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (2).
 * Run: npm run bench:media  (writes its section of docs/benchmarks.md)
 */
import { join } from "node:path";
import { machine, writeSection } from "./lib.js";
import { cleanup, fmt, median, spread } from "./procs/lib.js";
import {
  checkBilling,
  embeddingsTarget,
  expect200,
  latency,
  MODEL_PATH,
  prepareRun,
  probe,
  SETTINGS,
  startGateway,
  startRawProxy,
  throughput,
  warmUp,
  EMBEDDINGS_BODY,
  type Target,
} from "./procs/targets.js";
import { toolText } from "./wrk.js";

const { rounds: ROUNDS, seconds: SECONDS, warmUpSeconds: WARMUP_SECONDS, connections: CONNECTIONS } = SETTINGS;
const GOALS = { ratio: 0.5, addedP50: 0.3, p99: 3 };
const { loadAtStart, pin, sutCpu: SUT_CPU, loadCpu: LOAD_CPU, tool, dir, stub } = await prepareRun("tollgate-bench-media-");
const stubUrl = stub.info.url;
const [proxy, memory, sqlite] = await Promise.all([
  startRawProxy(stubUrl, SUT_CPU),
  startGateway({ stubUrl, store: "memory" }, SUT_CPU),
  startGateway({ stubUrl, store: "sqlite", filename: join(dir, "media.db") }, SUT_CPU),
]);
await expect200(`${sqlite.info.url}${MODEL_PATH}`);
const [memoryMeter, sqliteMeter] = [await probe(memory), await probe(sqlite)];

const targets: Target[] = [
  embeddingsTarget("A. raw proxy: node:http + undici Pool", proxy.pid, proxy.info.url),
  { label: `B. Tollgate unmetered GET ${MODEL_PATH} (SQLite process)`, pid: sqlite.pid, url: `${sqlite.info.url}${MODEL_PATH}`, method: "GET" },
  embeddingsTarget("C. Tollgate metered POST /v1/embeddings, memory store", memory.pid, memory.info.url, memoryMeter),
  embeddingsTarget("D. Tollgate metered POST /v1/embeddings, SQLite file", sqlite.pid, sqlite.info.url, sqliteMeter),
];

interface Sample {
  perSecond: number;
  cpuPerCall: number;
  cpuPerCallC1: number;
  p50: number;
  p99: number;
}
const samples: Sample[][] = targets.map(() => []);
for (const t of targets) await warmUp(t, CONNECTIONS, WARMUP_SECONDS, LOAD_CPU);
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, t] of targets.entries()) {
    const thr = await throughput(t, CONNECTIONS, SECONDS, LOAD_CPU);
    const lat = await latency(t, SECONDS, LOAD_CPU);
    samples[i]!.push({ perSecond: thr.perSecond, cpuPerCall: thr.cpuPerCall, cpuPerCallC1: lat.cpuPerCall, p50: lat.p50, p99: lat.p99 });
    console.error(
      `round ${round + 1}/${ROUNDS} ${t.label}: ${Math.round(thr.perSecond)} req/s, ${thr.cpuPerCall.toFixed(0)} µs CPU/call, p50 ${lat.p50.toFixed(3)} ms, p99 ${lat.p99.toFixed(3)} ms, ${lat.cpuPerCall.toFixed(0)} µs CPU/call at c=1`,
    );
  }
}
const billing = [await checkBilling(memoryMeter), await checkBilling(sqliteMeter)];
await Promise.all([proxy, memory, sqlite, stub].map((p) => p.stop()));
cleanup();

const base = samples[0]!;
const ratios = (s: Sample[]) => s.map((x, r) => x.perSecond / base[r]!.perSecond);
const addedP50 = (s: Sample[]) => s.map((x, r) => x.p50 - base[r]!.p50);
const { int, ratio: x3, ms: ms3, goal } = fmt;
const rows = targets.map((t, i) => {
  const s = samples[i]!;
  return `| ${t.label} | ${spread(
    s.map((x) => x.perSecond),
    int,
  )} | ${i === 0 ? "1×" : spread(ratios(s), x3)} | ${spread(
    s.map((x) => x.cpuPerCall),
    int,
  )} | ${spread(
    s.map((x) => x.p50),
    ms3,
  )} | ${spread(
    s.map((x) => x.p99),
    ms3,
  )} | ${spread(
    s.map((x) => x.cpuPerCallC1),
    int,
  )} |`;
});
const d = samples[3]!;
const goals = [
  `- Throughput of D vs the raw proxy at c=${CONNECTIONS}: ${x3(median(ratios(d)))} (goal ≥ ${GOALS.ratio}×): ${goal(median(ratios(d)) >= GOALS.ratio)}`,
  `- p50 added by D over the raw proxy at c=1: +${ms3(median(addedP50(d)))} ms (goal ≤ ${GOALS.addedP50} ms): ${goal(median(addedP50(d)) <= GOALS.addedP50)}`,
  `- p99 of D at c=1: ${ms3(median(d.map((x) => x.p99)))} ms (goal ≤ ${GOALS.p99} ms): ${goal(median(d.map((x) => x.p99)) <= GOALS.p99)}`,
];
const pinning = pin
  ? "Pinned with `taskset`: the process under load alone on CPU 0 (the idle servers wait there too); wrk, the stub and the benchmark script on CPU 1."
  : "Not pinned (fewer than two CPUs, no `taskset`, or BENCH_PIN=0): every process shares every CPU.";
const md = `## Media overhead (\`npm run bench:media\`)

Machine: ${machine()}; 1-minute load average ${loadAtStart.toFixed(2)} at start. Run: ${new Date().toISOString().slice(0, 10)}.

Method: every party is its own process: the upstream stub (node:http answering OpenAI embeddings JSON, 9 tokens,
8 dimensions), the raw proxy and two gateway processes (\`serve()\` of @tollgate/node, production defaults, the undici
HTTP client, one service key with a huge budget), each bundled from source with esbuild as \`npm run build\` compiles it and run with \`node\`. Load from ${toolText(tool)}:
\`POST /v1/embeddings\` with a ${Buffer.byteLength(EMBEDDINGS_BODY)}-byte JSON body and the key's bearer token (a Lua script), or a plain GET for B.
${pinning} Targets: A, the raw proxy (node:http reading the request and forwarding it to the stub with an undici Pool;
the baseline, 1×); B, the gateway's unmetered catalog route on the SQLite process (HTTP bridge and router cost); C and D,
the metered route (authenticate the key, reserve the quote, call the stub, meter the usage, settle with a queued
charge, answer the vectors with a receipt) on a memory store and on a SQLite file (WAL, \`synchronous=NORMAL\`).
${WARMUP_SECONDS} s warm-up per target at c=${CONNECTIONS}, then ${ROUNDS} round(s) interleaving A, B, C, D; each round runs
\`wrk -t1 -c${CONNECTIONS} -d${SECONDS}s\` (throughput, and the server process's user+system CPU time from /proc over the
requests answered) then \`wrk -t1 -c1 -d${SECONDS}s --latency\` (p50/p99, and the CPU time per call again). Cells are medians over rounds with min–max;
ratios are medians of the per-round ratios to A. Any non-2xx answer or socket error fails the run.

| target | req/s at c=${CONNECTIONS} | vs raw proxy | CPU per call µs | p50 ms at c=1 | p99 ms at c=1 | CPU per call µs at c=1 |
|---|---:|---:|---:|---:|---:|---:|
${rows.join("\n")}

Billing check (every metered 200 charged once, nothing left reserved):
- C (memory): ${billing[0]!.ok ? "**passed**" : "**FAILED**"}: ${billing[0]!.text}.
- D (SQLite): ${billing[1]!.ok ? "**passed**" : "**FAILED**"}: ${billing[1]!.text}.

Goals (D, the SQLite gateway):
${goals.join("\n")}`;
console.log(md);
writeSection("media", md);
if (!billing.every((b) => b.ok)) {
  console.error("BILLING CHECK FAILED");
  process.exitCode = 1;
}
