/**
 * Ledger benchmark: prepare+settle pairs per second, one column per store.
 *  - SQLite (WAL, synchronous=NORMAL), a fresh file;
 *  - PostgreSQL, a fresh schema on `DATABASE_URL` (the column is skipped when it is unset); further
 *    servers (e.g. the same version with fsync on) can be added as more columns with
 *    `BENCH_DATABASE_URLS=url1,url2`.
 * Rows, on one key: `gateway.fetch` (HTTP routing, zod, auth, budget headers, the store);
 * the store directly (`reserve` + `settle`, which also queues a charge), one pair at a time and
 * 16 pairs in flight; and a baseline: the raw driver (better-sqlite3 / pg) running the two guarded
 * UPDATE statements a ledger needs at minimum, each in its own implicit transaction.
 * Each column's ratios are against its own baseline, measured in the same run and process.
 * With DATABASE_URL set, a second section measures the gateway as separate processes over HTTP on
 * PostgreSQL (bench/ledger-http.ts): one instance against a raw proxy, three instances against one;
 * and a third the store with and without named prepared statements, and behind a real PgBouncer in
 * transaction mode (bench/ledger-pooler.ts; needs pgbouncer installed).
 * BENCH_LEDGER_PARTS=store, =http or =pooler (comma-separated) runs only those parts (default: all).
 * Run: npm run bench:ledger  (writes its section of docs/benchmarks.md)
 */
import Database from "better-sqlite3";
import { loadavg } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createGateway, type Store } from "@tollgate/core";
import { createPostgresStore } from "@tollgate/postgres";
import { createSqliteStore } from "@tollgate/sqlite";
import { postgresHttp } from "./ledger-http.js";
import { floorSql } from "./procs/floor-sql.js";
import { machine, now, writeSection } from "./lib.js";
import { poolerSection } from "./ledger-pooler.js";
import { pairsTimer, type Result } from "./ledger-pairs.js";
import { tempDir } from "./procs/lib.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const IN_FLIGHT = 16;
const POOL = 10;
const dir = tempDir("tollgate-bench-"); // removed on exit
const loadAtStart = loadavg()[0]!.toFixed(1);
const owner = "0x00000000000000000000000000000000000000b1";
/** The host app's secret of the benchmark gateways: it proves the owner wallet of the key creation. */
const INTERNAL_SECRET = "bench-ledger-internal-secret";
const JSON_TYPE = { "content-type": "application/json" };
const { timed, viaStore } = pairsTimer(SECONDS, owner);

async function viaFetch(store: Store): Promise<Result> {
  const gateway = createGateway({ store, sweepIntervalMs: 0, internalSecret: INTERNAL_SECRET });
  const res = await gateway.fetch(
    new Request("http://bench/api/keys", {
      method: "POST",
      headers: { ...JSON_TYPE, "x-session-user-address": owner, "x-internal-secret": INTERNAL_SECRET },
      body: JSON.stringify({ budgetLimit: "1000000000000000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" }),
    }),
  );
  if (res.status !== 201) throw new Error(`key creation answered ${res.status}: ${await res.text()}`);
  const { token } = (await res.json()) as { token: string };
  const auth = { ...JSON_TYPE, authorization: `Bearer ${token}`, "x-network-id": "8453" };
  const prepareBody = JSON.stringify({ service: "inference", action: "bench", resource: "/v1/bench", method: "POST", maxAmountWei: "1000" });
  const result = await timed(async () => {
    const p = await gateway.fetch(new Request("http://bench/api/payments/prepare", { method: "POST", headers: auth, body: prepareBody }));
    if (p.status !== 200) throw new Error(`prepare answered ${p.status}: ${await p.text()}`);
    const { paymentIntentId } = (await p.json()) as { paymentIntentId: string };
    const s = await gateway.fetch(new Request("http://bench/api/payments/settle", { method: "POST", headers: JSON_TYPE, body: JSON.stringify({ paymentIntentId, finalAmountWei: "700" }) }));
    if (s.status !== 200) throw new Error(`settle answered ${s.status}`);
    await s.arrayBuffer();
  });
  await gateway.close();
  return result;
}

function sqliteBaseline(): Promise<Result> {
  const db = new Database(join(dir, "raw.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE k (id TEXT PRIMARY KEY, lim INTEGER, used INTEGER, reserved INTEGER)");
  db.prepare("INSERT INTO k VALUES ('k', 1000000000000000, 0, 0)").run();
  const reserve = db.prepare("UPDATE k SET reserved = reserved + ? WHERE id = 'k' AND lim - used - reserved >= ?");
  const settle = db.prepare("UPDATE k SET reserved = reserved - ?, used = used + ? WHERE id = 'k'");
  return timed(() => {
    if (reserve.run(1000, 1000).changes !== 1) throw new Error("reserve failed");
    settle.run(1000, 700);
  }).finally(() => db.close());
}

async function postgresBaseline(client: pg.Client, schema: string): Promise<Result> {
  await client.query(`SET search_path TO "${schema}"`);
  const sql = floorSql("k");
  await client.query(sql.create);
  await client.query(sql.insert);
  const reserve = { name: "reserve", text: sql.reserve };
  const settle = { name: "settle", text: sql.settle };
  return timed(async () => {
    if ((await client.query({ ...reserve, values: [1000] })).rowCount !== 1) throw new Error("reserve failed");
    await client.query({ ...settle, values: [1000, 700] });
  });
}

interface Column {
  title: string;
  note: string;
  rows: [Result, Result, Result, Result];
  /** PostgreSQL: the in-flight row with `groupCommit: false`. */
  ungrouped?: Result;
}

async function sqliteColumn(): Promise<Column> {
  const baseline = await sqliteBaseline();
  const open = (name: string) => createSqliteStore({ filename: join(dir, `${name}.db`) });
  const store = open("store");
  const one = await viaStore(store, 1);
  const many = await viaStore(store, IN_FLIGHT);
  await store.close();
  return { title: "SQLite", note: "a fresh file, WAL, `synchronous=NORMAL`", rows: [await viaFetch(open("fetch")), one, many, baseline] };
}

async function postgresColumn(url: string): Promise<Column> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const setting = async (name: string) => ((await client.query(`SELECT current_setting('${name}') AS v`)).rows[0] as { v: string }).v;
  const [version, fsync, syncCommit] = [(await setting("server_version")).split(" ")[0], await setting("fsync"), await setting("synchronous_commit")];
  const schema = `bench_${Date.now().toString(36)}`;
  await client.query(`CREATE SCHEMA "${schema}"`);
  try {
    const baseline = await postgresBaseline(client, schema);
    const open = (suffix: string) => createPostgresStore({ connectionString: url, schema: `${schema}_${suffix}`, poolSize: POOL });
    const store = await open("store");
    const one = await viaStore(store, 1);
    const many = await viaStore(store, IN_FLIGHT);
    await store.close();
    const plainStore = await createPostgresStore({ connectionString: url, schema: `${schema}_plain`, poolSize: POOL, groupCommit: false });
    const ungrouped = await viaStore(plainStore, IN_FLIGHT);
    await plainStore.close();
    const fetched = await viaFetch(await open("fetch"));
    const host = new URL(url).host;
    return { title: `PostgreSQL (fsync=${fsync})`, note: `PostgreSQL ${version} at ${host}, \`fsync=${fsync}\`, \`synchronous_commit=${syncCommit}\`, a fresh schema, pool of ${POOL}`, rows: [fetched, one, many, baseline], ungrouped };
  } finally {
    for (const s of [schema, `${schema}_store`, `${schema}_plain`, `${schema}_fetch`]) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    await client.end();
  }
}

/** The store-level section "ledger". */
async function storeSection(): Promise<void> {
  const urls = (process.env.BENCH_DATABASE_URLS ?? process.env.DATABASE_URL ?? "").split(",").map((u) => u.trim()).filter(Boolean);
  const columns = [await sqliteColumn()];
  for (const url of urls) columns.push(await postgresColumn(url));
  if (urls.length === 0) console.log("PostgreSQL column skipped: DATABASE_URL is not set (export DATABASE_URL=$(.ci/postgres-start)).");

  const labels = ["gateway.fetch: POST prepare + POST settle", "store: reserve + settle (with charge)", `store: the same, ${IN_FLIGHT} pairs in flight`, "baseline: raw driver, 2 guarded UPDATEs"];
  const cell = (r: Result, base: Result) => `${Math.round(r.perSecond).toLocaleString("en")} | ${(r.perSecond / base.perSecond).toFixed(3)}×`;
  const md = `## Ledger (\`npm run bench:ledger\`)

Machine: ${machine()}. Run: ${new Date().toISOString().slice(0, 10)}, 1-minute load average ${loadAtStart} at the start.

Method: one key with a huge budget; each pair reserves 1000 atoms and settles 700, for ${SECONDS} s after 200
warm-up pairs, one pair at a time unless the row says otherwise. The store rows are \`reserve\` + \`settle\` (each
one atomic store operation: expire-overdue check, guarded UPDATE, intent INSERT/UPDATE, charge INSERT; on both
stores the operations of one event-loop turn share one transaction, the group commit, which the in-flight row exercises). The
gateway row adds routing, JSON, zod, token hashing and key lookup, and budget headers, through \`gateway.fetch\`
with Web Request/Response objects. The baseline is the raw driver (better-sqlite3, or pg on one connection with
prepared statements) running only the two guarded UPDATEs, each its own implicit transaction; each column's
ratios are against its own baseline, measured in the same run.
${columns.map((c) => `\n- ${c.title}: ${c.note}.`).join("")}${urls.length === 0 ? "\n- PostgreSQL: skipped (DATABASE_URL was not set)." : ""}
${urls.length === 0 ? "" : `
PostgreSQL runs on the same machine (loopback TCP) and shares its cores with the benchmark. Every store operation is
one statement; alone it is one commit, and the group of one turn is one commit: with \`fsync=off\` (the throwaway CI/dev cluster of \`.ci/postgres-start\`) a commit never
waits for the disk, and a power cut or OS crash can corrupt the whole cluster, so use it for tests only; with \`fsync=on\` (the default) each
commit waits for one WAL flush. The sequential rows run each statement alone; the in-flight row's groups hold one
connection of the pool of ${POOL} at a time, all on one key.
`}
| path | ${columns.map((c) => `${c.title} pairs/s | vs baseline`).join(" | ")} |
|---|${columns.map(() => "---:|---:|").join("")}
${labels.map((label, i) => `| ${label} | ${columns.map((c) => cell(c.rows[i]!, c.rows[3])).join(" | ")} |`).join("\n")}
| store: ${IN_FLIGHT} pairs in flight, \`groupCommit: false\` (PostgreSQL: each statement alone) | ${columns.map((c) => (c.ungrouped ? cell(c.ungrouped, c.rows[3]) : "– | –")).join(" | ")} |`;
  console.log(md);
  writeSection("ledger", md);
}

/** The section "ledger-postgres-http": the gateway as separate processes over HTTP on PostgreSQL. */
async function httpSection(url: string): Promise<void> {
  const run = await postgresHttp(url);
  const section = `## Ledger on PostgreSQL over HTTP, separate processes (\`npm run bench:ledger\`)

Machine: ${machine()}. Run: ${new Date().toISOString().slice(0, 10)}, 1-minute load average ${loadavg()[0]!.toFixed(1)} at the start of this part.

${run.markdown}`;
  console.log(section);
  writeSection("ledger-postgres-http", section);
  if (!run.billingOk) {
    console.error("BILLING CHECK FAILED");
    process.exitCode = 1;
  }
}

const PARTS = (process.env.BENCH_LEDGER_PARTS ?? "store,http,pooler").split(",");
if (PARTS.includes("store")) await storeSection();
const httpUrl = process.env.DATABASE_URL;
if (PARTS.includes("http") && !httpUrl) console.log("PostgreSQL over HTTP skipped: DATABASE_URL is not set (export DATABASE_URL=$(.ci/postgres-start)).");
if (PARTS.includes("http") && httpUrl) await httpSection(httpUrl);
if (PARTS.includes("pooler") && !httpUrl) console.log("PgBouncer part skipped: DATABASE_URL is not set (export DATABASE_URL=$(.ci/postgres-start)).");
if (PARTS.includes("pooler") && httpUrl) await poolerSection(httpUrl);
