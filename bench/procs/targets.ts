/**
 * The targets of the process-separated HTTP benchmarks (stub, raw proxy, gateway processes), one
 * measurement of a target (c=N throughput with the server's CPU per call, c=1 latency), and the
 * billing check: every 200 a gateway served to `POST /v1/embeddings` was charged exactly once.
 */
import { loadavg } from "node:os";
import { canPin, cpuMicros, pinSelf, startProc, tempDir, type Proc } from "./lib.js";
import { load, loadTool, type LoadResult } from "../wrk.js";

/** Run settings from the environment: rounds, measured and warm-up seconds per run; c=32 load. */
export const SETTINGS = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  seconds: Number(process.env.BENCH_SECONDS ?? 5),
  warmUpSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 2),
  connections: 32,
};

export const EMBEDDINGS_BODY = JSON.stringify({ model: "text-embedding-3-small", input: "the quick brown fox jumps over the lazy dog" });
export const MODEL_PATH = "/v1/models/text-embedding-3-small";

export interface GatewayInfo {
  url: string;
  token: string;
  keyId: string;
}
export type GatewayConfig = { stubUrl: string } & (
  { store: "memory" } | { store: "sqlite"; filename: string } | { store: "postgres"; url: string; schema: string; groupCommit?: boolean }
);

/** A gateway process and what the benchmark sent to its metered route, for the billing check. */
export interface Meter {
  gateway: Proc<GatewayInfo>;
  /** The per-call charge (the receipt's finalAmountWei of a probe call). */
  price: bigint;
  /** 200s counted by the load generator plus probes. */
  counted: number;
  /** Requests possibly served after the load generator stopped counting: Σ connections per run. */
  slack: number;
}

/** Something to load: a URL on a server process (whose CPU time is read), maybe metered. */
export interface Target {
  label: string;
  pid: number;
  url: string;
  method: "GET" | "POST";
  body?: string;
  token?: string;
  meter?: Meter;
}

/**
 * The common start of a process-separated benchmark: the load at start, the CPUs (servers on 0,
 * the load and this script on 1, when pinning is possible; this process pinned now), the load
 * generator (installed if missing), a temporary directory, and the upstream stub on the load CPU.
 */
export async function prepareRun(dirPrefix: string) {
  const loadAtStart = loadavg()[0]!;
  const pin = canPin();
  const sutCpu = pin ? 0 : undefined;
  const loadCpu = pin ? 1 : undefined;
  pinSelf(loadCpu);
  const tool = await loadTool();
  const dir = tempDir(dirPrefix);
  const stub = await startStub(loadCpu);
  return { loadAtStart, pin, sutCpu, loadCpu, tool, dir, stub };
}

export const startStub = (cpu?: number) => startProc<{ url: string }>("stub.ts", [], cpu);
/** The raw proxy; with `floor`, the PostgreSQL floor (two guarded UPDATEs of one row per call: raw-proxy.ts). */
export const startRawProxy = (stubUrl: string, cpu?: number, floor?: { url: string; table: string }) =>
  startProc<{ url: string }>("raw-proxy.ts", floor ? [stubUrl, "buffer", JSON.stringify(floor)] : [stubUrl], cpu);
export const startGateway = (config: GatewayConfig, cpu?: number) => startProc<GatewayInfo>("gateway.ts", [JSON.stringify(config)], cpu);

/** One probe call of the metered route; its receipt (JSON body or `x-receipt` header, base64url JSON) gives the price. */
export async function probe(gateway: Proc<GatewayInfo>): Promise<Meter> {
  const res = await fetch(`${gateway.info.url}/v1/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${gateway.info.token}` },
    body: EMBEDDINGS_BODY,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`probe answered ${res.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { data?: unknown[]; receipt?: { finalAmountWei?: string } };
  const header = res.headers.get("x-receipt");
  const receipt = body.receipt ?? (header ? (JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as { finalAmountWei?: string }) : undefined);
  if (body.data?.length !== 1 || receipt?.finalAmountWei === undefined) throw new Error(`unexpected gateway answer: ${text.slice(0, 300)}`);
  const price = BigInt(receipt.finalAmountWei);
  if (price <= 0n) throw new Error(`the probe cost ${price}: the billing check needs a positive price`);
  return { gateway, price, counted: 1, slack: 0 };
}

/** Checks that `GET url` answers 200 (e.g. the unmetered catalog route). */
export async function expect200(url: string): Promise<void> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
}

export const embeddingsTarget = (label: string, pid: number, url: string, meter?: Meter): Target => ({
  label,
  pid,
  url: `${url}/v1/embeddings`,
  method: "POST",
  body: EMBEDDINGS_BODY,
  ...(meter ? { token: meter.gateway.info.token, meter } : {}),
});

/** Loads a target and books the run on its meter. */
async function loadTarget(t: Target, connections: number, seconds: number, latency: boolean, cpu?: number): Promise<LoadResult> {
  const r = await load({
    url: t.url,
    method: t.method,
    connections,
    seconds,
    latency,
    ...(t.body ? { body: t.body } : {}),
    ...(t.token ? { token: t.token } : {}),
    ...(cpu === undefined ? {} : { cpu }),
  });
  if (t.meter) {
    t.meter.counted += r.requests;
    t.meter.slack += connections;
  }
  return r;
}

/** Throughput at `connections` with the server's CPU time per answered request, in µs. */
export async function throughput(t: Target, connections: number, seconds: number, cpu?: number): Promise<LoadResult & { cpuPerCall: number }> {
  const before = cpuMicros(t.pid);
  const r = await loadTarget(t, connections, seconds, false, cpu);
  return { ...r, cpuPerCall: (cpuMicros(t.pid) - before) / r.requests };
}

/** Latency at one connection (p50/p99 from the load generator), with the server's CPU time per answered request, in µs. */
export async function latency(t: Target, seconds: number, cpu?: number): Promise<LoadResult & { cpuPerCall: number }> {
  const before = cpuMicros(t.pid);
  const r = await loadTarget(t, 1, seconds, true, cpu);
  return { ...r, cpuPerCall: (cpuMicros(t.pid) - before) / r.requests };
}

/** Warm-up: c=connections for `seconds`, counted on the meter but not reported. */
export const warmUp = (t: Target, connections: number, seconds: number, cpu?: number) => loadTarget(t, connections, seconds, false, cpu);

export interface Billing {
  ok: boolean;
  /** Calls answered 200 in full. */
  served: number;
  /** Calls whose client left before the answer was written. */
  cut: number;
  /** budgetUsed / price. */
  billed: bigint;
  text: string;
}

type Stats = { served200: number; cut: number };

/** A key's budget amounts, decimal strings. */
export type KeyBudget = { budgetUsed: string; budgetReserved: string };

/** The gateway's key's budget as `GET /api/keys/{id}` answers it. */
export async function keyBudget(gateway: Proc<GatewayInfo>): Promise<KeyBudget> {
  const { url, keyId, token } = gateway.info;
  return (await (await fetch(`${url}/api/keys/${keyId}`, { headers: { authorization: `Bearer ${token}` } })).json()) as KeyBudget;
}

/**
 * After the runs: waits until nothing is reserved on the key and the counts are stable, then
 * checks budgetUsed = billed × price with served200 ≤ billed ≤ served200 + cut (every answered call
 * billed once; a call cut by the load generator's stop is billed iff its upstream call completed),
 * and counted ≤ served200, served200 + cut ≤ counted + slack.
 */
export async function checkBilling(meter: Meter): Promise<Billing> {
  const view = () => keyBudget(meter.gateway);
  const stats = () => meter.gateway.ask<Stats>("stats");
  let [key, s] = [await view(), await stats()];
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const [nextKey, next] = [await view(), await stats()];
    const stable = nextKey.budgetUsed === key.budgetUsed && next.served200 === s.served200 && next.cut === s.cut;
    [key, s] = [nextKey, next];
    if (stable && key.budgetReserved === "0") break;
  }
  const used = BigInt(key.budgetUsed);
  const billed = used / meter.price;
  const exact = billed * meter.price === used && key.budgetReserved === "0";
  const once = billed >= BigInt(s.served200) && billed <= BigInt(s.served200 + s.cut);
  const counts = s.served200 >= meter.counted && s.served200 + s.cut <= meter.counted + meter.slack;
  const text =
    `budgetUsed ${used} = ${billed} calls × ${meter.price}${exact ? "" : " (NOT a whole number of calls, or something left reserved)"}, budgetReserved ${key.budgetReserved}; ` +
    `${s.served200} calls answered 200 in full${once ? " (all billed)" : " (MISMATCH)"}` +
    `${s.cut > 0 ? `, ${s.cut} cut when wrk stopped (${billed - BigInt(s.served200)} of them billed, those whose upstream call had completed)` : ""}; ` +
    `wrk counted ${meter.counted} (probe included)${counts ? "" : ` (MISMATCH: at most ${meter.slack} may be uncounted)`}`;
  return { ok: exact && once && counts, served: s.served200, cut: s.cut, billed, text };
}
