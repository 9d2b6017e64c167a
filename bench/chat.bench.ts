/**
 * Chat streaming overhead benchmark: what the gateway adds to a streamed `POST /v1/chat/completions`
 * (`stream: true`, SSE) over a raw streaming proxy, with every party its own process
 * (bench/procs/): the upstream stub (chat-stub.ts, one-word content chunks, then the usage chunk
 * and [DONE]), the load client (chat-load.ts, which times every stream), and the targets:
 *   A. raw streaming proxy: node:http + an undici Pool, the answer's bytes piped through (1×);
 *   B. Tollgate, SQLite file store, the stub as an openai-compatible provider for gpt-4o-mini,
 *      called with a service key with a huge budget (reserve, relay each event, settle the usage,
 *      receipt chunk).
 * With two CPUs the targets run alone on CPU 0; the stub, the load client and this script on CPU 1.
 * Each round runs, BENCH_SECONDS each:
 *   1. c=1, streams of 10 chunks paced BENCH_CHAT_GAP_MS apart, as a real upstream paces tokens,
 *      alternating between A and B in one run (both see the same noise): TTFT p50/p99, each
 *      chunk's transit stub → client, last chunk → [DONE];
 *   then per target (A, B):
 *   2. c=BENCH_CHAT_CONNECTIONS, 100 chunks, paced: the target's CPU per chunk when every chunk
 *      reaches it on its own, transit under load;
 *   3. c=BENCH_CHAT_CONNECTIONS, 100 chunks written at once by the stub: streams/s, chunks/s, the
 *      target's CPU per stream from /proc;
 *   4. the same with 10 chunks: with 3, splits the CPU per stream into a fixed part and a per-chunk part.
 * Medians over rounds with min–max; the added figures are medians of per-round differences. Every
 * stream must be a 200 with all its chunks and [DONE]; afterwards the key's budgetUsed must equal
 * the sum of the receipts, each receipt the stub's usage, with nothing reserved.
 * Env: BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (2), BENCH_PIN, BENCH_CHAT_GAP_MS (1),
 * BENCH_CHAT_CONNECTIONS (16), BENCH_CHAT_CHUNKS (100).
 * Run: npm run bench:chat  (writes its section of docs/benchmarks.md)
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import { machine, writeSection } from "./lib.js";
import type { RunResult, RunSpec, TargetResult } from "./procs/chat-load.js";
import { canPin, cleanup, cpuMicros, fmt, machineCpuMicros, median, pinSelf, spread, startProc, tempDir, type Proc } from "./procs/lib.js";
import { keyBudget, SETTINGS, startGateway } from "./procs/targets.js";

const { rounds: ROUNDS, seconds: SECONDS, warmUpSeconds: WARMUP_SECONDS } = SETTINGS;
const CONNECTIONS = Number(process.env.BENCH_CHAT_CONNECTIONS ?? 16);
const GAP_MS = Number(process.env.BENCH_CHAT_GAP_MS ?? 1);
/** Content chunks of a stream, and of the short streams that separate per-stream from per-chunk CPU. */
const WORDS = Number(process.env.BENCH_CHAT_CHUNKS ?? 100);
const SHORT = 10;
if (!(WORDS > SHORT)) throw new Error(`BENCH_CHAT_CHUNKS must be over ${SHORT}`);
const loadAtStart = loadavg()[0]!;
const pin = canPin();
const SUT_CPU = pin ? 0 : undefined;
const LOAD_CPU = pin ? 1 : undefined;
pinSelf(LOAD_CPU);
const dir = tempDir("tollgate-bench-chat-");

const stub = await startProc<{ url: string; promptTokens: number }>("chat-stub.ts", [], LOAD_CPU);
const { url: stubUrl, promptTokens: PROMPT_TOKENS } = stub.info;
const [client, proxy, gateway] = await Promise.all([
  startProc<object>("chat-load.ts", [], LOAD_CPU),
  startProc<{ url: string }>("raw-proxy.ts", [stubUrl, "stream"], SUT_CPU),
  startGateway({ stubUrl, store: "sqlite", filename: join(dir, "chat.db") }, SUT_CPU),
]);

interface ChatTarget {
  label: string;
  pid: number;
  url: string;
  token?: string;
}
const targets: ChatTarget[] = [
  { label: "A. raw streaming proxy: node:http + undici Pool", pid: proxy.pid, url: `${proxy.info.url}/v1/chat/completions` },
  { label: "B. Tollgate POST /v1/chat/completions, SQLite file", pid: gateway.pid, url: `${gateway.info.url}/v1/chat/completions`, token: gateway.info.token },
];

/** Streams the client ran against the gateway and the receipts it saw, over every run (warm-up included), for the billing check. */
const seen = { streams: 0, receipts: 0, unexpected: 0, sumWei: 0n, shapes: {} as Record<string, number> };

type Measured = TargetResult & { cpu: number; elapsedMs: number; loadCpu: number; otherCpu: number };

/** CPU time of this benchmark's processes (targets, stub, load client, this script), µs. */
function ownCpu(): number {
  const self = process.cpuUsage();
  return [proxy, gateway, stub, client].reduce((sum, p) => sum + cpuMicros(p.pid), self.user + self.system);
}

/**
 * One run of the load client against the targets (streams alternating between them), with each
 * target's CPU time, the load side's (stub + client) and other processes' (the machine's, less
 * this benchmark's) over the run; books the receipts.
 */
async function measure(ts: ChatTarget[], connections: number, words: number, gapMs: number, seconds = SECONDS): Promise<Measured[]> {
  const spec: RunSpec = {
    targets: ts.map((t) => ({ url: t.url, ...(t.token ? { token: t.token } : {}) })),
    connections,
    seconds,
    gapMs,
    words,
    promptTokens: PROMPT_TOKENS,
  };
  const [before, stubBefore, machineBefore, ownBefore] = [ts.map((t) => cpuMicros(t.pid)), cpuMicros(stub.pid), machineCpuMicros(), ownCpu()];
  const r = await client.ask<RunResult | { error: string }>(JSON.stringify(spec), (seconds + 30) * 1_000);
  if ("error" in r) throw new Error(`chat load against ${ts.map((t) => t.label).join(" and ")}: ${r.error}`);
  const loadCpu = cpuMicros(stub.pid) - stubBefore + r.clientCpu;
  const otherCpu = Math.max(0, machineCpuMicros() - machineBefore - (ownCpu() - ownBefore));
  return ts.map((t, i) => {
    const m = r.targets[i]!;
    if (t.token) {
      seen.streams += m.streams;
      seen.receipts += m.receipts.count;
      seen.unexpected += m.receipts.unexpected;
      seen.sumWei += BigInt(m.receipts.sumWei);
      for (const [shape, n] of Object.entries(m.receipts.shapes)) seen.shapes[shape] = (seen.shapes[shape] ?? 0) + n;
    } else if (m.receipts.count > 0) throw new Error(`${t.label} answered receipts`);
    return { ...m, cpu: cpuMicros(t.pid) - before[i]!, elapsedMs: r.elapsedMs, loadCpu, otherCpu };
  });
}

/** One round of one target; latencies in ms, per-chunk figures and CPU in µs, busy shares in 0..1. */
interface Sample {
  /** Run 1 (c=1, SHORT chunks, paced, streams alternating between the targets). */
  ttftP50: number;
  ttftP99: number;
  transitP50: number;
  transitP99: number;
  endP50: number;
  /** Run 2 (c=CONNECTIONS, WORDS chunks, paced): chunks/s, transit, CPU per chunk (all of it, and net of the fixed per-stream CPU), busy share. */
  pacedChunksPerSecond: number;
  pacedTransitP50: number;
  pacedTransitP99: number;
  pacedCpuPerChunk: number;
  pacedNetCpuPerChunk: number;
  pacedBusy: number;
  /** Other processes' CPU time (and steal) / wall time during run 2, and during run 3, in CPUs. */
  pacedOther: number;
  other: number;
  /** Runs 3 and 4 (c=CONNECTIONS, at once): throughput of WORDS-chunk streams, CPU per stream of both lengths. */
  streamsPerSecond: number;
  chunksPerSecond: number;
  cpuPerStream: number;
  shortCpuPerStream: number;
  /** CPU per stream = cpuFixed + chunks × cpuPerChunk, through the two lengths. */
  cpuPerChunk: number;
  cpuFixed: number;
  /** CPU time / wall time of the target, and of the stub + load client, in run 3. */
  busy: number;
  loadBusy: number;
}
const samples: Sample[][] = targets.map(() => []);
for (const t of targets) await measure([t], CONNECTIONS, WORDS, 0, WARMUP_SECONDS);
for (let round = 0; round < ROUNDS; round++) {
  const paired = await measure(targets, 1, SHORT, GAP_MS);
  for (const [i, t] of targets.entries()) {
    const lat = paired[i]!;
    const [paced] = await measure([t], CONNECTIONS, WORDS, GAP_MS);
    const [thr] = await measure([t], CONNECTIONS, WORDS, 0);
    const [short] = await measure([t], CONNECTIONS, SHORT, 0);
    const [cpuPerStream, shortCpuPerStream] = [thr!.cpu / thr!.streams, short!.cpu / short!.streams];
    const cpuPerChunk = (cpuPerStream - shortCpuPerStream) / (WORDS - SHORT);
    const cpuFixed = shortCpuPerStream - SHORT * cpuPerChunk;
    const s: Sample = {
      ttftP50: lat.ttftP50,
      ttftP99: lat.ttftP99,
      transitP50: lat.transitP50,
      transitP99: lat.transitP99,
      endP50: lat.endP50,
      pacedChunksPerSecond: paced!.chunks / (paced!.elapsedMs / 1e3),
      pacedTransitP50: paced!.transitP50,
      pacedTransitP99: paced!.transitP99,
      pacedCpuPerChunk: paced!.cpu / paced!.chunks,
      pacedNetCpuPerChunk: (paced!.cpu / paced!.streams - cpuFixed) / WORDS,
      pacedBusy: paced!.cpu / (paced!.elapsedMs * 1e3),
      pacedOther: paced!.otherCpu / (paced!.elapsedMs * 1e3),
      other: thr!.otherCpu / (thr!.elapsedMs * 1e3),
      streamsPerSecond: thr!.streams / (thr!.elapsedMs / 1e3),
      chunksPerSecond: thr!.chunks / (thr!.elapsedMs / 1e3),
      cpuPerStream,
      shortCpuPerStream,
      cpuPerChunk,
      cpuFixed,
      busy: thr!.cpu / (thr!.elapsedMs * 1e3),
      loadBusy: thr!.loadCpu / (thr!.elapsedMs * 1e3),
    };
    samples[i]!.push(s);
    console.error(
      `round ${round + 1}/${ROUNDS} ${t.label}: c=1: TTFT p50 ${s.ttftP50.toFixed(3)} ms p99 ${s.ttftP99.toFixed(3)} ms, transit p50 ${s.transitP50.toFixed(0)} µs, ` +
        `end ${s.endP50.toFixed(3)} ms; paced c=${CONNECTIONS}: transit p50 ${s.pacedTransitP50.toFixed(0)} µs, ${s.pacedCpuPerChunk.toFixed(1)} µs CPU/chunk ` +
        `(net ${s.pacedNetCpuPerChunk.toFixed(1)}), busy ${(s.pacedBusy * 100).toFixed(0)} %; at once c=${CONNECTIONS}: ` +
        `${Math.round(s.streamsPerSecond)} streams/s, ${Math.round(s.chunksPerSecond)} chunks/s, ${Math.round(s.cpuPerStream)} µs CPU/stream ` +
        `(${Math.round(s.shortCpuPerStream)} for ${SHORT} chunks: ${s.cpuPerChunk.toFixed(1)} µs/chunk + ${Math.round(s.cpuFixed)} µs/stream), ` +
        `busy ${(s.busy * 100).toFixed(0)} % (load side ${(s.loadBusy * 100).toFixed(0)} %); other processes ${s.pacedOther.toFixed(2)} and ${s.other.toFixed(2)} CPU`,
    );
  }
}

/**
 * Billing: once nothing is reserved and the key is stable, budgetUsed must equal the sum of the
 * receipts the client saw, one receipt per stream, each for the stub's usage (its prompt tokens and
 * the stream's chunks as output), and the gateway must have finished every stream it started (none cut).
 */
async function checkChatBilling(): Promise<{ ok: boolean; text: string }> {
  let key = await keyBudget(gateway);
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const next = await keyBudget(gateway);
    const stable = next.budgetUsed === key.budgetUsed;
    key = next;
    if (stable && key.budgetReserved === "0") break;
  }
  const stats = await gateway.ask<{ chat200: number; chatCut: number }>("stats");
  const exact = BigInt(key.budgetUsed) === seen.sumWei && key.budgetReserved === "0";
  const once = seen.receipts === seen.streams && stats.chat200 === seen.streams && stats.chatCut === 0;
  const usage = seen.unexpected === 0;
  const shapes = Object.entries(seen.shapes).map(([shape, n]) => `${n} × (${shape} wei)`);
  const text =
    `budgetUsed ${key.budgetUsed} ${exact ? "=" : "≠"} Σ of the ${seen.receipts} receipts ${seen.sumWei}, budgetReserved ${key.budgetReserved}; ` +
    `${seen.streams} streams completed by the client (warm-up included), ${stats.chat200} finished by the gateway, ${stats.chatCut} cut${once ? "" : " (MISMATCH)"}; ` +
    `receipts by (input tokens, output tokens, amount): ${shapes.join(", ")}: ` +
    (usage ? `each the stub's usage (${PROMPT_TOKENS} prompt tokens, one completion token per chunk)` : `${seen.unexpected} NOT the stub's usage`);
  return { ok: exact && once && usage, text };
}
const billing = await checkChatBilling();
await Promise.all([proxy, gateway, client, stub].map((p: Proc<unknown>) => p.stop()));
cleanup();

const [raw, gw] = [samples[0]!, samples[1]!];
type Field = keyof Sample;
const ratio = gw.map((x, r) => x.chunksPerSecond / raw[r]!.chunksPerSecond);
const { int, ratio: x3, ms: ms3 } = fmt;
const us1 = (v: number) => v.toFixed(1);
const pct = (v: number) => `${Math.round(v * 100)} %`;
const cpus = (v: number) => v.toFixed(2);
/** A table cell: the field's median over rounds with min–max. */
const cell = (s: Sample[], field: Field, f: (v: number) => string) =>
  spread(
    s.map((x) => x[field]),
    f,
  );
/** What B adds to A: the median of the per-round differences of a field, signed; flagged when the rounds disagree on the sign. */
const more = (field: Field, f: (v: number) => string, unit: string) => {
  const diffs = gw.map((x, r) => x[field] - raw[r]![field]);
  const m = median(diffs);
  const mixed = diffs.some((d) => d > 0) && diffs.some((d) => d < 0);
  return `${m >= 0 ? "+" : ""}${f(m)} ${unit}${mixed ? " (rounds disagree on the sign: within the noise)" : ""}`;
};
/** B's capacity relative to A's from CPU alone: A's CPU per stream / B's, per round. */
const cpuRatio = gw.map((x, r) => raw[r]!.cpuPerStream / x.cpuPerStream);
const rawLoadBound = median(raw.map((x) => x.loadBusy)) >= 0.9;
/** A table row of target i: each cell a field with its formatter, or a ready text. */
const row = (i: number, cells: ([Field, (v: number) => string] | string)[]) =>
  `| ${targets[i]!.label} | ${cells.map((c) => (typeof c === "string" ? c : cell(samples[i]!, c[0], c[1]))).join(" | ")} |`;
const latencyRows = targets.map((_, i) =>
  row(i, [
    ["ttftP50", ms3],
    ["ttftP99", ms3],
    ["transitP50", int],
    ["transitP99", int],
    ["endP50", ms3],
  ]),
);
const pacedRows = targets.map((_, i) =>
  row(i, [
    ["pacedChunksPerSecond", int],
    ["pacedTransitP50", int],
    ["pacedTransitP99", int],
    ["pacedCpuPerChunk", us1],
    ["pacedNetCpuPerChunk", us1],
    ["pacedBusy", pct],
    ["pacedOther", cpus],
  ]),
);
const loadRows = targets.map((_, i) =>
  row(i, [
    ["streamsPerSecond", int],
    ["chunksPerSecond", int],
    i === 0 ? "1×" : spread(ratio, x3),
    ["cpuPerStream", int],
    ["shortCpuPerStream", int],
    ["cpuPerChunk", us1],
    ["cpuFixed", int],
    ["busy", pct],
    ["loadBusy", pct],
    ["other", cpus],
  ]),
);
const summary = [
  `- Time to first token (c=1): ${more("ttftP50", ms3, "ms")} at p50, ${more("ttftP99", ms3, "ms")} at p99.`,
  `- Per chunk, latency (transit stub → client, p50): ${more("transitP50", int, "µs")} at c=1, ${more("pacedTransitP50", int, "µs")} at c=${CONNECTIONS} (paced at ${GAP_MS} ms).`,
  `- Per chunk, CPU: ${more("pacedNetCpuPerChunk", us1, "µs")} when each chunk arrives on its own (paced, c=${CONNECTIONS}, fixed per-stream CPU taken out; ` +
    `${more("pacedCpuPerChunk", us1, "µs")} with it); ${more("cpuPerChunk", us1, "µs")} when the upstream sends each answer at once (c=${CONNECTIONS}, fit).`,
  `- Per stream, CPU: ${more("cpuFixed", int, "µs")} fixed (auth, prompt count, reserve, upstream request, settle, receipt; fit at c=${CONNECTIONS}); ` +
    `${more("cpuPerStream", int, "µs")} for a stream of ${WORDS} chunks sent at once.`,
  `- End of a stream (last chunk → [DONE]: settle, receipt chunk; c=1): ${more("endP50", ms3, "ms")} at p50.`,
  `- Throughput at c=${CONNECTIONS}, ${WORDS}-chunk answers sent at once: ${x3(median(ratio))} the raw proxy's chunks/s; ` +
    `from CPU per stream alone (what each process could serve on a whole core): ${x3(median(cpuRatio))}.` +
    (rawLoadBound
      ? ` The raw proxy was held back by the load side (CPU 1 at ${pct(median(raw.map((x) => x.loadBusy)))}), not by its own CPU, so the chunks/s ratio overstates B; the CPU ratio is the fairer one.`
      : ""),
];
const pinning = pin
  ? "Pinned with `taskset`: the process under load alone on CPU 0 (the idle target waits there too); the stub, the load client and the benchmark script on CPU 1."
  : "**Not pinned** (fewer than two CPUs, no `taskset`, or BENCH_PIN=0): every process shares every CPU, so the CPU figures include contention.";
const md = `## Chat streaming overhead (\`npm run bench:chat\`)

Machine: ${machine()}; 1-minute load average ${loadAtStart.toFixed(2)} at start. Run: ${new Date().toISOString().slice(0, 10)}.

Method: every party is its own process (bundled from source with esbuild as \`npm run build\` compiles it, run with \`node\`): the upstream stub (node:http answering OpenAI's
chat-completions SSE: a role chunk, n content chunks of one short word each stamped with the stub's monotonic clock, a
finish chunk, the usage chunk (${PROMPT_TOKENS} prompt + n completion tokens) and \`[DONE]\`), the load client (undici Pool;
streamed \`POST /v1/chat/completions\` with \`stream_options.include_usage\` and \`max_completion_tokens: 256\`; it times
each stream from just before the request is sent), and two targets: A, a raw streaming proxy (node:http reading the
request, forwarding it to the stub with an undici Pool and piping the answer's bytes back unchanged; 1×), and B, the
gateway (\`serve()\` of @tollgate/node, production defaults, the undici HTTP client, a SQLite file store (WAL,
\`synchronous=NORMAL\`), the stub as the openai-compatible provider of gpt-4o-mini, one service key with a huge budget:
authenticate, count the prompt, reserve the quote, relay each upstream event as it is parsed, settle the reported usage,
send a receipt chunk). ${pinning}
${WARMUP_SECONDS} s warm-up per target at c=${CONNECTIONS}, then ${ROUNDS} round(s) of ${SECONDS}-second runs:
(1) c=1, n=${SHORT}, ${GAP_MS} ms between content chunks as a real upstream paces tokens, one run whose streams alternate
between A and B (so both see the same moments of the shared machine): TTFT (request sent → first \`data:\` event with
content), each chunk's transit (stub write → client read), last content chunk → \`[DONE]\`; then per target, (2) c=${CONNECTIONS},
n=${WORDS}, paced the same (each chunk reaches the target on its own): transit, and the target's user+system CPU time
from /proc per chunk; (3) c=${CONNECTIONS}, n=${WORDS}, the stub writing each answer at once: streams/s, chunks/s, the
target's CPU per stream, its busy share and the load side's (stub + client, CPU 1); (4) the same with n=${SHORT}: (3) and (4)
split the CPU per stream into a fixed part and a per-chunk part (CPU per stream = fixed + n × per chunk); the paced
net CPU per chunk is (its CPU per stream − that fixed part) / n. A run stops starting streams after ${SECONDS} s and lets
those in flight finish, so no stream is cut. Cells are medians over rounds with min–max; the added figures are medians of
per-round differences (B − A), flagged when the rounds disagree on the sign. "Other processes" is the machine's user,
system and steal time from /proc/stat less this benchmark's processes, per second of the run: load from outside the
benchmark, which the targets had to share their CPUs with. Any stream that is not a 200 with every chunk and \`[DONE]\`
fails the run.

Latency at c=1 (one stream at a time, alternating A and B; ${SHORT} chunks ${GAP_MS} ms apart):

| target | TTFT p50 ms | TTFT p99 ms | transit p50 µs | transit p99 µs | last chunk → [DONE] ms |
|---|---:|---:|---:|---:|---:|
${latencyRows.join("\n")}

Paced streams at c=${CONNECTIONS} (${WORDS} chunks ${GAP_MS} ms apart):

| target | chunks/s | transit p50 µs | transit p99 µs | CPU per chunk µs | net CPU per chunk µs | target CPU busy | other processes, CPUs |
|---|---:|---:|---:|---:|---:|---:|---:|
${pacedRows.join("\n")}

Throughput at c=${CONNECTIONS} (the stub writes each answer at once):

| target | streams/s (${WORDS} chunks) | chunks/s | vs raw proxy | CPU per stream µs (${WORDS} chunks) | CPU per stream µs (${SHORT} chunks) | CPU per chunk µs (fit) | fixed CPU per stream µs (fit) | target CPU busy | load side busy (CPU 1) | other processes, CPUs |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${loadRows.join("\n")}

What the gateway adds (B − A):
${summary.join("\n")}

Billing check (each stream billed exactly its usage, nothing left reserved): ${billing.ok ? "**passed**" : "**FAILED**"}: ${billing.text}.`;
console.log(md);
writeSection("chat", md);
if (!billing.ok) {
  console.error("BILLING CHECK FAILED");
  process.exitCode = 1;
}
