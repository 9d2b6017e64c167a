/**
 * The load client of the chat benchmark, as its own process (the benchmark pins it next to the
 * stub, away from the processes under test). Each stdin line is a JSON {@link RunSpec}: it runs
 * `connections` loops of streamed `POST /v1/chat/completions` (stream, include_usage, the stub's
 * chunk count and gap in `bench_chunks` / `bench_gap_ms`) over undici Pools for `seconds`, each
 * loop taking the targets in turn (with two targets at c=1, the streams alternate between them, so
 * both see the same moments of a noisy machine), lets the streams in flight finish (none is cut, so
 * every one is billed in full), and answers a {@link RunResult}, or `{"error"}` when any answer is
 * not a 200 stream of `words` content chunks ending in `[DONE]`. Per stream it times, on
 * `process.hrtime` from just before the request is sent: the first `data:` event with content
 * (TTFT), and from the last one to `[DONE]`; per content chunk its transit from the stub (the
 * chunk's `bench_sent_us`, CLOCK_MONOTONIC like hrtime) to the arrival of the bytes carrying it.
 * Receipt chunks (the gateway's) are summed and checked against the stub's usage. Prints `{}`
 * first; exits when its stdin closes.
 */
import { Pool } from "undici";
import { percentile } from "../lib.js";
import { serveParent } from "./lib.js";

export interface RunSpec {
  /** Full URLs of the chat route, with the bearer token to send (none for the raw proxy). */
  targets: { url: string; token?: string }[];
  connections: number;
  seconds: number;
  /** The stub's pause between content chunks (0: the whole answer at once). */
  gapMs: number;
  /** Content chunks every stream must carry (sent as `bench_chunks`; the stub's completion tokens). */
  words: number;
  /** The prompt tokens of the stub's usage. */
  promptTokens: number;
}

/** What one target of a run measured; latencies in ms, transit in µs. */
export interface TargetResult {
  streams: number;
  /** Content chunks received (streams × words). */
  chunks: number;
  ttftP50: number;
  ttftP99: number;
  /** Median of last content chunk → `[DONE]` (the gateway settles and sends the receipt there), ms. */
  endP50: number;
  /** Stub write → client arrival of each content chunk, µs. */
  transitP50: number;
  transitP99: number;
  /**
   * Receipt chunks seen: their count, Σ finalAmountWei, how many did not bill the stub's usage
   * (input_tokens ≠ promptTokens or output_tokens ≠ words), and how many had each (input, output, amount).
   */
  receipts: { count: number; sumWei: string; unexpected: number; shapes: Record<string, number> };
}

export interface RunResult {
  /** One per spec target, in order. */
  targets: TargetResult[];
  /** First request sent → last stream finished, ms. */
  elapsedMs: number;
  /** This process's CPU time over the run, µs. */
  clientCpu: number;
}

interface Receipt {
  finalAmountWei: string;
  lineItems: { key: string; quantity: number }[];
}

const nowNs = () => process.hrtime.bigint();
const pools = new Map<string, Pool>();
const CONTENT = /"content":"[^"]/;
const STAMP = '"bench_sent_us":';

/** A target's pool, route, headers and what its streams measured so far. */
function tally(target: RunSpec["targets"][number]) {
  const url = new URL(target.url);
  let pool = pools.get(url.origin);
  if (!pool) pools.set(url.origin, (pool = new Pool(url.origin, { connections: 64, keepAliveTimeout: 30_000 })));
  return {
    pool,
    url: target.url,
    path: url.pathname,
    headers: { "content-type": "application/json", accept: "text/event-stream", ...(target.token ? { authorization: `Bearer ${target.token}` } : {}) },
    ttft: [] as number[],
    end: [] as number[],
    transit: [] as number[],
    receipts: { count: 0, sum: 0n, unexpected: 0, shapes: {} as Record<string, number> },
  };
}
type Tally = ReturnType<typeof tally>;

/** One stream against a target, recorded on its tally; throws when it is not a full 200 stream. */
async function stream(t: Tally, spec: RunSpec, body: string): Promise<void> {
  const sent = nowNs();
  const res = await t.pool.request({ path: t.path, method: "POST", headers: t.headers, body });
  if (res.statusCode !== 200) throw new Error(`${t.url} answered ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`);
  res.body.setEncoding("utf8");
  let pending = "";
  let first = 0n;
  let last = 0n;
  let contents = 0;
  let done = 0n;
  for await (const text of res.body as AsyncIterable<string>) {
    const at = nowNs();
    const atUs = Number(at) / 1e3;
    pending += text;
    let cut: number;
    while ((cut = pending.indexOf("\n\n")) >= 0) {
      const event = pending.slice(0, cut);
      pending = pending.slice(cut + 2);
      if (!event.startsWith("data: ")) continue;
      if (event === "data: [DONE]") done = at;
      else if (CONTENT.test(event)) {
        if (contents++ === 0) first = at;
        last = at;
        const s = event.indexOf(STAMP);
        if (s >= 0) t.transit.push(atUs - Number.parseInt(event.slice(s + STAMP.length, event.indexOf(",", s)), 10));
      } else if (event.includes('"receipt":')) {
        const r = (JSON.parse(event.slice(6)) as { receipt: Receipt }).receipt;
        const qty = (key: string) => r.lineItems.find((l) => l.key === key)?.quantity;
        const shape = `input ${qty("input_tokens")}, output ${qty("output_tokens")}, ${r.finalAmountWei}`;
        if (qty("input_tokens") !== spec.promptTokens || qty("output_tokens") !== spec.words) t.receipts.unexpected++;
        t.receipts.count++;
        t.receipts.sum += BigInt(r.finalAmountWei);
        t.receipts.shapes[shape] = (t.receipts.shapes[shape] ?? 0) + 1;
      }
    }
  }
  if (done === 0n || contents !== spec.words)
    throw new Error(`${t.url}: a stream ended after ${contents}/${spec.words} content chunks${done ? "" : " without [DONE]"}`);
  const ms = (a: bigint, b: bigint) => Number(a - b) / 1e6;
  t.ttft.push(ms(first, sent));
  t.end.push(ms(done, last));
}

async function run(spec: RunSpec): Promise<RunResult> {
  const body = JSON.stringify({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "Say tok, again and again." }],
    stream: true,
    stream_options: { include_usage: true },
    max_completion_tokens: 256,
    bench_chunks: spec.words,
    bench_gap_ms: spec.gapMs,
  });
  const tallies = spec.targets.map(tally);
  const cpuBefore = process.cpuUsage();
  const start = nowNs();
  const deadline = start + BigInt(spec.seconds * 1e9);
  let finished = start;
  await Promise.all(
    Array.from({ length: spec.connections }, async (_, loop) => {
      for (let n = loop; nowNs() < deadline; n++) await stream(tallies[n % tallies.length]!, spec, body);
      const t = nowNs();
      if (t > finished) finished = t;
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  return {
    targets: tallies.map((t) => ({
      streams: t.ttft.length,
      chunks: t.ttft.length * spec.words,
      ttftP50: percentile(t.ttft, 50),
      ttftP99: percentile(t.ttft, 99),
      endP50: percentile(t.end, 50),
      transitP50: percentile(t.transit, 50),
      transitP99: percentile(t.transit, 99),
      receipts: { count: t.receipts.count, sumWei: t.receipts.sum.toString(), unexpected: t.receipts.unexpected, shapes: t.receipts.shapes },
    })),
    elapsedMs: Number(finished - start) / 1e6,
    clientCpu: cpu.user + cpu.system,
  };
}

serveParent(
  {},
  (line) => run(JSON.parse(line) as RunSpec).catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) })),
  async () => {
    await Promise.all([...pools.values()].map((p) => p.close()));
  },
);
