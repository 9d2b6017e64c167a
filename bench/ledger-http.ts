/**
 * The process-separated half of the ledger benchmark on PostgreSQL (`npm run bench:ledger` with
 * DATABASE_URL set): the gateway as its own process on `createPostgresStore` (a fresh schema) against
 * the raw proxy in the same run, then three gateway instances on that database and schema, each its
 * own process with its own service key, under three concurrent wrk processes. Nothing is pinned:
 * with two CPUs three instances cannot each have a CPU of their own, and PostgreSQL's backends need
 * CPU too, so every process (servers, PostgreSQL, wrk, stub) shares both CPUs.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { floorSql } from "./procs/floor-sql.js";
import { cpuMicrosByPid, cpuMicrosSince, fmt, median, spread } from "./procs/lib.js";
import { checkBilling, embeddingsTarget, probe, SETTINGS, startGateway, startRawProxy, startStub, throughput, warmUp, type Target } from "./procs/targets.js";
import { loadTool, toolText } from "./wrk.js";

const { rounds: ROUNDS, seconds: SECONDS, warmUpSeconds: WARMUP_SECONDS, connections: CONNECTIONS } = SETTINGS;
const INSTANCES = 3;
const PER_INSTANCE = Math.ceil(CONNECTIONS / INSTANCES);
const GOALS = { ratio: 0.25, scale: 2 };

/** Runs the measurement on `url` and answers its markdown (without the heading's machine line) and whether billing held. */
export async function postgresHttp(url: string): Promise<{ markdown: string; billingOk: boolean }> {
  const tool = await loadTool();
  const schema = `bench_http_${randomBytes(4).toString("hex")}`;
  const stub = await startStub();
  const stubUrl = stub.info.url;
  const config = { stubUrl, store: "postgres" as const, url, schema };
  const procs = [stub];
  try {
    const proxy = await startRawProxy(stubUrl);
    procs.push(proxy);
    const first = await startGateway(config); // migrates the fresh schema
    const table = `"${schema}".floor_key`;
    const floorTable = floorSql(table);
    await withClient(url, async (c) => {
      await c.query(floorTable.create);
      await c.query(floorTable.insert);
    });
    const floorProxy = await startRawProxy(stubUrl, undefined, { url, table });
    procs.push(floorProxy);
    const others = await Promise.all(Array.from({ length: INSTANCES - 1 }, () => startGateway(config)));
    const gateways = [first, ...others];
    procs.push(...gateways);
    const plainGateway = await startGateway({ ...config, groupCommit: false });
    procs.push(plainGateway);
    const meters = await Promise.all([...gateways, plainGateway].map((g) => probe(g)));
    const raw = embeddingsTarget("A. raw proxy: node:http + undici Pool", proxy.pid, proxy.info.url);
    const floor = embeddingsTarget("F. floor: the raw proxy + 2 guarded UPDATEs of one key row per call", floorProxy.pid, floorProxy.info.url);
    const single = embeddingsTarget("D′. Tollgate metered POST /v1/embeddings, PostgreSQL, 1 instance", first.pid, first.info.url, meters[0]);
    const plain = embeddingsTarget(
      "D″. the same, `groupCommit: false` (each statement its own round trip and commit)",
      plainGateway.pid,
      plainGateway.info.url,
      meters[INSTANCES],
    );
    const instances: Target[] = gateways.map((g, i) => embeddingsTarget(`instance ${i + 1}`, g.pid, g.info.url, meters[i]));
    const all = (seconds: number) => Promise.all(instances.map((t) => throughput(t, PER_INSTANCE, seconds)));

    await warmUp(raw, CONNECTIONS, WARMUP_SECONDS);
    await warmUp(floor, CONNECTIONS, WARMUP_SECONDS);
    await warmUp(single, CONNECTIONS, WARMUP_SECONDS);
    await warmUp(plain, CONNECTIONS, WARMUP_SECONDS);
    await all(WARMUP_SECONDS);
    /** Throughput of `t`, with the CPU PostgreSQL's processes spent per call meanwhile. */
    const measure = async (t: Target) => {
      const before = cpuMicrosByPid("postgres");
      const r = await throughput(t, CONNECTIONS, SECONDS);
      return { ...r, pgPerCall: cpuMicrosSince("postgres", before) / r.requests };
    };
    const rawRps: number[] = [];
    const floorRps: number[] = [];
    const floorCpu: number[] = [];
    const singleRps: number[] = [];
    const singleCpu: number[] = [];
    const floorPg: number[] = [];
    const singlePg: number[] = [];
    const plainRps: number[] = [];
    const plainCpu: number[] = [];
    const plainPg: number[] = [];
    const totalRps: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      rawRps.push((await throughput(raw, CONNECTIONS, SECONDS)).perSecond);
      const atFloor = await measure(floor);
      floorRps.push(atFloor.perSecond);
      floorCpu.push(atFloor.cpuPerCall);
      floorPg.push(atFloor.pgPerCall);
      const one = await measure(single);
      singleRps.push(one.perSecond);
      singleCpu.push(one.cpuPerCall);
      singlePg.push(one.pgPerCall);
      const ungrouped = await measure(plain);
      plainRps.push(ungrouped.perSecond);
      plainCpu.push(ungrouped.cpuPerCall);
      plainPg.push(ungrouped.pgPerCall);
      totalRps.push((await all(SECONDS)).reduce((sum, r) => sum + r.perSecond, 0));
      console.error(
        `postgres round ${round + 1}/${ROUNDS}: raw ${Math.round(rawRps[round]!)}, floor ${Math.round(floorRps[round]!)}, 1 instance ${Math.round(one.perSecond)} (group commit off ${Math.round(ungrouped.perSecond)}), ${INSTANCES} instances ${Math.round(totalRps[round]!)} req/s`,
      );
    }
    const billing = [];
    for (const m of meters) billing.push(await checkBilling(m));
    const billingOk = billing.every((b) => b.ok);
    const billed = billing.reduce((sum, b) => sum + b.billed, 0n);
    const served = billing.reduce((sum, b) => sum + b.served, 0);

    const ratios = singleRps.map((v, r) => v / rawRps[r]!);
    const plainRatios = plainRps.map((v, r) => v / rawRps[r]!);
    const floorRatios = floorRps.map((v, r) => v / rawRps[r]!);
    const ofFloor = singleRps.map((v, r) => v / floorRps[r]!);
    const scale = totalRps.map((v, r) => v / singleRps[r]!);
    const { int, ratio: x3, goal } = fmt;
    const markdown = `Method: PostgreSQL at ${new URL(url).host}, a fresh schema per run (dropped afterwards), the store's default pool of 10 per
instance. Processes as in the media section (stub, raw proxy, gateway processes with production defaults, each bundled from source with esbuild as \`npm run build\` compiles it and run with \`node\`),
load from ${toolText(tool)}; nothing pinned (every process, PostgreSQL included, shares the CPUs: with two CPUs three instances
cannot each have one). ${WARMUP_SECONDS} s warm-up per row, then ${ROUNDS} round(s) interleaving: the raw proxy and one gateway
instance with \`wrk -t1 -c${CONNECTIONS} -d${SECONDS}s\`; then ${INSTANCES} instances on the same database and schema, each with its own
service key (one key's row lock would serialize them), under ${INSTANCES} concurrent \`wrk -t1 -c${PER_INSTANCE} -d${SECONDS}s\`, one per instance,
summed. Medians with min–max; ratios are medians of per-round ratios. CPU per call is the server process's own; PostgreSQL's
is that of its processes alive at the end of the row's window (one that exited meanwhile, e.g. an autovacuum worker, is not counted), per call. D″ is a fifth gateway process, on the same schema with a key of its own,
whose store runs each statement alone (as before group commit). F, measured in the same rounds, is the least a design that reserves before the upstream call and
settles after can do on PostgreSQL: the raw proxy plus, per call, the two guarded UPDATEs of one key row (\`reserved +\`
guarded by the limit, then \`reserved −, used +\`), each its own statement and commit on a pg Pool of 10, with no intent,
charge, expiry, idempotency, authentication or receipt. The gateway reaches ${x3(median(ofFloor))} of F.

| row | req/s | ratio | CPU per call µs | PostgreSQL CPU per call µs |
|---|---:|---:|---:|---:|
| ${raw.label} | ${spread(rawRps, int)} | 1× | | |
| ${floor.label} | ${spread(floorRps, int)} | ${spread(floorRatios, x3)} vs raw proxy | ${spread(floorCpu, int)} | ${spread(floorPg, int)} |
| ${single.label} | ${spread(singleRps, int)} | ${spread(ratios, x3)} vs raw proxy | ${spread(singleCpu, int)} | ${spread(singlePg, int)} |
| ${plain.label} | ${spread(plainRps, int)} | ${spread(plainRatios, x3)} vs raw proxy | ${spread(plainCpu, int)} | ${spread(plainPg, int)} |
| D′ × ${INSTANCES} instances, one key each, total | ${spread(totalRps, int)} | ${spread(scale, x3)} vs 1 instance | | |

Billing check over the ${INSTANCES + 1} keys: ${billingOk ? "**passed**" : "**FAILED**"}: ${billed} calls billed for ${served} answered in full.
${billing.map((b, i) => `- ${i < INSTANCES ? `instance ${i + 1}` : "D″"}: ${b.ok ? "passed" : "FAILED"}: ${b.text}.`).join("\n")}

Goals:
- One PostgreSQL instance vs the raw proxy at c=${CONNECTIONS}: ${x3(median(ratios))} (goal ≥ ${GOALS.ratio}×): ${goal(median(ratios) >= GOALS.ratio)}
- ${INSTANCES} instances vs one: ${x3(median(scale))} (goal ≥ ${GOALS.scale}×): ${goal(median(scale) >= GOALS.scale)}
- The floor F vs the raw proxy: ${x3(median(floorRatios))}${median(floorRatios) < GOALS.ratio ? ": below the first goal, so no gateway that runs its reserve and its settle as one statement each on one key row meets it on this machine" : ""}`;
    return { markdown, billingOk };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await withClient(url, (c) => c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  }
}

/** Runs `fn` on a fresh client of `url`, closed afterwards. */
async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
