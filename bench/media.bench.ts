/**
 * Media overhead benchmark: what the gateway adds to `POST /v1/embeddings` over a bare proxy.
 *  1. gateway: `serve()` of @tollgate/node, SQLite store, the undici HTTP client upstream, a
 *     service key with a huge budget — every request authenticates the key, reserves the quote,
 *     calls the upstream, meters its usage and settles (with a queued charge), and answers a receipt;
 *  2. baseline: a raw node:http pass-through proxy forwarding the same request to the same
 *     upstream over an undici Pool.
 * The upstream is a local node:http stub answering OpenAI embeddings JSON. Load comes from the same
 * process with undici: N requests in flight for a fixed time after a warm-up. Both rows run in the
 * same process on the same machine, so the added latency and the ratio are what to read.
 * Run: npm run bench:media  (writes its section of docs/benchmarks.md)
 */
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { createGateway } from "@tollgate/core";
import { createUndiciHttpClient, serve } from "@tollgate/node";
import { createSqliteStore } from "@tollgate/sqlite";
import { machine, ms, now, percentile, writeSection } from "./lib.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const OWNER = "0x00000000000000000000000000000000000000b1";
const BODY = JSON.stringify({ model: "text-embedding-3-small", input: "the quick brown fox jumps over the lazy dog" });
const dir = mkdtempSync(join(tmpdir(), "tollgate-bench-media-"));
const loadAtStart = loadavg()[0]!;

const listen = (server: http.Server) =>
  new Promise<string>((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
const stop = (server: http.Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

// The upstream: OpenAI's embeddings answer (8 dimensions keep JSON work out of the comparison).
const answer = JSON.stringify({
  object: "list",
  data: [{ object: "embedding", index: 0, embedding: [0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8] }],
  model: "text-embedding-3-small",
  usage: { prompt_tokens: 9, total_tokens: 9 },
});
const stub = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) }).end(answer));
});
stub.keepAliveTimeout = 65_000;
const stubUrl = await listen(stub);

// The baseline: read the request, forward it with an undici Pool, stream the answer back.
const upstreamPool = new Pool(stubUrl, { connections: 128, keepAliveTimeout: 30_000 });
const proxy = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    upstreamPool
      .request({
        path: req.url ?? "/",
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
        body: Buffer.concat(chunks),
      })
      .then(async (up) => {
        const body = Buffer.from(await up.body.arrayBuffer());
        res.writeHead(up.statusCode, { "content-type": String(up.headers["content-type"] ?? "application/json"), "content-length": body.length }).end(body);
      })
      .catch(() => res.writeHead(502).end());
  });
});
proxy.keepAliveTimeout = 65_000;
const proxyUrl = await listen(proxy);

// The gateway.
const upstreamHttp = createUndiciHttpClient();
/** The host app's secret of the benchmark gateway: it proves the owner wallet of the key creation. */
const INTERNAL_SECRET = "bench-media-internal-secret";
const gateway = createGateway({
  store: createSqliteStore({ filename: join(dir, "media.db") }),
  sweepIntervalMs: 0,
  internalSecret: INTERNAL_SECRET,
  http: upstreamHttp,
  media: { providers: { openai: { type: "openai-compatible", baseUrl: `${stubUrl}/v1`, apiKey: "sk-bench" } } },
  video: { pollerIntervalMs: 0 },
});
const running = await serve(gateway, { port: 0 });
const created = await fetch(`${running.url}/api/keys`, {
  method: "POST",
  headers: { "content-type": "application/json", "x-session-user-address": OWNER, "x-internal-secret": INTERNAL_SECRET },
  body: JSON.stringify({ budgetLimit: "1000000000000000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" }),
});
if (created.status !== 201) throw new Error(`key creation answered ${created.status}: ${await created.text()}`);
const key = (await created.json()) as { keyId: string; token: string };

interface Row {
  label: string;
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
}

/** Keeps CONCURRENCY requests in flight against `origin` for `seconds`; latencies in ms. */
async function load(
  origin: string,
  headers: Record<string, string>,
  seconds: number,
): Promise<{ latencies: number[]; errors: number; elapsed: number; firstBody?: string }> {
  const pool = new Pool(origin, { connections: CONCURRENCY, keepAliveTimeout: 30_000 });
  const latencies: number[] = [];
  let errors = 0;
  let firstBody: string | undefined;
  const start = now();
  const deadline = start + BigInt(Math.round(seconds * 1e9));
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (now() < deadline) {
        const t0 = now();
        const res = await pool.request({ path: "/v1/embeddings", method: "POST", headers: { "content-type": "application/json", ...headers }, body: BODY });
        const text = await res.body.text();
        latencies.push(Number(now() - t0) / 1e6);
        if (res.statusCode !== 200) errors++;
        firstBody ??= text;
      }
    }),
  );
  const elapsed = Number(now() - start) / 1e9;
  await pool.close();
  return { latencies, errors, elapsed, ...(firstBody === undefined ? {} : { firstBody }) };
}

async function measure(label: string, origin: string, headers: Record<string, string>): Promise<Row> {
  await load(origin, headers, WARMUP_SECONDS);
  const r = await load(origin, headers, SECONDS);
  return {
    label,
    requests: r.latencies.length,
    errors: r.errors,
    perSecond: r.latencies.length / r.elapsed,
    p50: percentile(r.latencies, 50),
    p99: percentile(r.latencies, 99),
  };
}

const auth = { authorization: `Bearer ${key.token}` };
// A probe: the gateway answers the upstream's vectors with a receipt; its price is the per-call charge.
const probe = (await (
  await fetch(`${running.url}/v1/embeddings`, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: BODY })
).json()) as {
  data: unknown[];
  receipt: { finalAmountWei: string };
};
if (probe.data.length !== 1 || !probe.receipt) throw new Error(`unexpected gateway answer: ${JSON.stringify(probe).slice(0, 200)}`);

const baseline = await measure("baseline: raw node:http proxy + undici Pool", proxyUrl, {});
const viaGateway = await measure("gateway: serve() + SQLite + key billing", running.url, auth);

// Every gateway request was billed: budgetUsed = (1 probe + warm-up + measured successes) × the per-call price.
const view = (await (await fetch(`${running.url}/api/keys/${key.keyId}`, { headers: auth })).json()) as { budgetUsed: string; budgetReserved: string };
const charged = BigInt(view.budgetUsed) / BigInt(probe.receipt.finalAmountWei);
if (view.budgetReserved !== "0" || BigInt(view.budgetUsed) % BigInt(probe.receipt.finalAmountWei) !== 0n)
  throw new Error(`budget inconsistent: ${JSON.stringify(view)}`);

await running.close({ graceMs: 1_000 });
await upstreamHttp.close();
await upstreamPool.close();
await Promise.all([stop(proxy), stop(stub)]);
rmSync(dir, { recursive: true, force: true });

const rows = [viaGateway, baseline];
const ratio = viaGateway.perSecond / baseline.perSecond;
const md = `## Media overhead (\`npm run bench:media\`)

Machine: ${machine()}; 1-minute load average ${loadAtStart.toFixed(2)} at start. Run: ${new Date().toISOString().slice(0, 10)}.

Method: \`POST /v1/embeddings\` (${Buffer.byteLength(BODY)}-byte JSON body) against a local node:http stub answering
OpenAI embeddings JSON. The gateway row is \`serve()\` of @tollgate/node with a SQLite store (WAL,
\`synchronous=NORMAL\`), the undici HTTP client upstream and one service key with a huge budget: each request
authenticates the key, reserves the quote, calls the stub, meters its usage, settles (queuing a charge) and answers
the vectors with a receipt and budget headers. The baseline is a raw node:http pass-through proxy forwarding the same
request to the same stub with an undici Pool. Load: ${CONCURRENCY} requests in flight from an undici Pool in the same
process (stub, proxy, gateway and load generator share one Node event loop), ${WARMUP_SECONDS} s warm-up then
${SECONDS} s measured per row, baseline first. Latency is per request, send to last body byte. After the run the key's
budgetUsed was ${view.budgetUsed} = ${charged} billed calls × ${probe.receipt.finalAmountWei} atoms, nothing reserved.

| path | requests | errors | req/s | p50 ms | p99 ms |
|---|---:|---:|---:|---:|---:|
${rows.map((r) => `| ${r.label} | ${r.requests} | ${r.errors} | ${Math.round(r.perSecond).toLocaleString("en")} | ${ms(r.p50)} | ${ms(r.p99)} |`).join("\n")}

Added by the gateway: p50 +${ms(viaGateway.p50 - baseline.p50)} ms, p99 +${ms(viaGateway.p99 - baseline.p99)} ms; throughput ${ratio.toFixed(3)}× the baseline.`;
console.log(md);
writeSection("media", md);
