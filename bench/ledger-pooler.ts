/**
 * The pooler part of the ledger benchmark (`npm run bench:ledger` with DATABASE_URL set and
 * pgbouncer installed): reserve + settle pairs through `createPostgresStore` with its named
 * prepared statements (the default), with `preparedStatements: false`, and with the latter behind
 * a real PgBouncer in transaction mode (what that setting is for), in interleaved rounds on fresh
 * schemas of the same server. The first is the baseline of the ratios.
 */
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { createPostgresStore } from "@tollgate/postgres";
import pg from "pg";
import { PGBOUNCER_BIN, startPgBouncer } from "../packages/postgres/src/test-pgbouncer.js";
import { machine, writeSection } from "./lib.js";
import { pairsTimer, type Result } from "./ledger-pairs.js";
import { median } from "./procs/lib.js";

const ROUNDS = 3;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const IN_FLIGHT = 16;
const { viaStore } = pairsTimer(SECONDS, "0x00000000000000000000000000000000000000b2");

/** Pairs per second and the benchmark process's CPU per pair, on a fresh schema of `url`. */
async function pairs(url: string, preparedStatements: boolean): Promise<Result> {
  const schema = `bench_pool_${randomBytes(4).toString("hex")}`;
  const store = await createPostgresStore({ connectionString: url, schema, preparedStatements });
  try {
    return await viaStore(store, IN_FLIGHT);
  } finally {
    await store.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP SCHEMA "${schema}" CASCADE`);
    await client.end();
  }
}

/** Measures and writes the section "ledger-postgres-pooler"; skipped (with a line) without pgbouncer. */
export async function poolerSection(url: string): Promise<void> {
  if (!PGBOUNCER_BIN) {
    console.log("PgBouncer part skipped: pgbouncer is not installed (apt-get install pgbouncer).");
    return;
  }
  const load = loadavg()[0]!.toFixed(1);
  const bouncer = await startPgBouncer(url);
  const rows = [
    { label: "direct, named prepared statements (the default)", url, prepared: true },
    { label: "direct, `preparedStatements: false`", url, prepared: false },
    { label: "PgBouncer 1.18, transaction mode, `preparedStatements: false`", url: bouncer.url, prepared: false },
  ].map((r) => ({ ...r, perSecond: [] as number[], cpuUs: [] as number[], ratio: [] as number[] }));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const row of rows) {
        const r = await pairs(row.url, row.prepared);
        row.perSecond.push(r.perSecond);
        row.cpuUs.push(r.cpuUs);
        console.log(`round ${round + 1}/${ROUNDS} ${row.label}: ${Math.round(r.perSecond)} pairs/s, ${Math.round(r.cpuUs)} µs CPU/pair`);
      }
      for (const row of rows) row.ratio.push(row.perSecond[round]! / rows[0]!.perSecond[round]!);
    }
  } finally {
    await bouncer.stop();
  }
  const md = `## PostgreSQL behind a pooler: prepared statements (\`npm run bench:ledger\`)

Machine: ${machine()}. Run: ${new Date().toISOString().slice(0, 10)}, 1-minute load average ${load} at the start.

Method: \`createPostgresStore\` (pool of 10, group commit on) on a fresh schema per measurement, one key with a huge
budget, ${IN_FLIGHT} reserve + settle pairs in flight (each settle queues its charge) for ${SECONDS} s after 200 warm-up pairs; ${ROUNDS} rounds interleaving the
three rows; cells are medians, ratios medians of the per-round ratios to the first row. PostgreSQL (loopback, the
cluster of \`.ci/postgres-start\`) and PgBouncer (Debian's, started by the benchmark: transaction mode, four server
connections) share the machine's cores with the benchmark. CPU is the benchmark process's own per pair.

| path | pairs/s | vs named | CPU per pair µs |
|---|---:|---:|---:|
${rows.map((r) => `| ${r.label} | ${Math.round(median(r.perSecond)).toLocaleString("en")} | ${median(r.ratio).toFixed(2)}× | ${Math.round(median(r.cpuUs))} |`).join("\n")}

Unnamed, a statement run alone is parsed and planned by the server each time, and a group's statements are sent in
runs of one text, each run parsed once and each statement planned at its Bind; the ledger's guarded statements are
large CTEs, so that is most of the cost. PgBouncer itself adds little beside it. Where the pooler keeps prepared
statements (PgBouncer 1.21 or later with \`max_prepared_statements\`), keep the default.`;
  console.log(md);
  writeSection("ledger-postgres-pooler", md);
}
