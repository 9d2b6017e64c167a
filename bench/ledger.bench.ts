/**
 * Ledger benchmark: prepare+settle pairs per second on SQLite (WAL, synchronous=NORMAL),
 *  1. through `gateway.fetch` (HTTP routing, zod, auth, budget headers, the store),
 *  2. directly on the store (`reserve` + `settle`, which also queues a charge),
 *  3. baseline: raw better-sqlite3 running the two guarded UPDATE statements a ledger needs at
 *     minimum (conditional reserve, settle), each in its own implicit transaction.
 * All three run in the same process on the same machine, so the ratios are what to read.
 * Run: npm run bench:ledger  (writes its section of docs/benchmarks.md)
 */
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGateway, type Store } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { machine, now, writeSection } from "./lib.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const dir = mkdtempSync(join(tmpdir(), "tollgate-bench-"));
const owner = "0x00000000000000000000000000000000000000b1";

async function timed(label: string, pair: (i: number) => Promise<void> | void): Promise<{ label: string; pairs: number; perSecond: number }> {
  let seq = 0;
  for (let i = 0; i < 200; i++) await pair(seq++); // warm-up
  const deadline = now() + BigInt(SECONDS * 1e9);
  const start = now();
  let pairs = 0;
  while (now() < deadline) {
    for (let j = 0; j < 50; j++, pairs++) await pair(seq++);
  }
  const seconds = Number(now() - start) / 1e9;
  return { label, pairs, perSecond: pairs / seconds };
}

async function viaFetch() {
  const store = createSqliteStore({ filename: join(dir, "fetch.db") });
  const gateway = createGateway({ store, sweepIntervalMs: 0 });
  const res = await gateway.fetch(
    new Request("http://bench/api/keys", {
      method: "POST",
      headers: { "x-session-user-address": owner },
      body: JSON.stringify({ budgetLimit: "1000000000000000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" }),
    }),
  );
  const { token } = (await res.json()) as { token: string };
  const auth = { authorization: `Bearer ${token}`, "x-network-id": "8453" };
  const prepareBody = JSON.stringify({ service: "inference", action: "bench", resource: "/v1/bench", method: "POST", maxAmountWei: "1000" });
  const result = await timed("gateway.fetch: POST prepare + POST settle", async () => {
    const p = await gateway.fetch(new Request("http://bench/api/payments/prepare", { method: "POST", headers: auth, body: prepareBody }));
    const { paymentIntentId } = (await p.json()) as { paymentIntentId: string };
    const s = await gateway.fetch(new Request("http://bench/api/payments/settle", { method: "POST", body: JSON.stringify({ paymentIntentId, finalAmountWei: "700" }) }));
    if (s.status !== 200) throw new Error(`settle answered ${s.status}`);
    await s.arrayBuffer();
  });
  await gateway.close();
  return result;
}

async function viaStore() {
  const store: Store = createSqliteStore({ filename: join(dir, "store.db") });
  const t0 = Date.now();
  await store.insertKey({ keyId: "key_bench", tokenHash: "00".repeat(32), owner, chainId: 8453, purpose: "api", budgetLimit: 10n ** 15n, budgetUsed: 0n, budgetReserved: 0n, createdAt: t0, expiresAt: t0 + 86_400_000 });
  const result = await timed("store: reserve + settle (with charge)", async (i) => {
    const t = Date.now();
    const r = await store.reserve({ intent: { intentId: `pi_${i}`, keyId: "key_bench", maxAmount: 1000n, fingerprint: "f", request: {}, createdAt: t, expiresAt: t + 900_000 }, now: t });
    if (!r.ok) throw new Error(r.reason);
    const s = await store.settle({
      intentId: `pi_${i}`,
      finalAmount: 700n,
      result: {},
      now: t,
      charge: { chargeId: `ch_${i}`, intentId: `pi_${i}`, keyId: "key_bench", owner, chainId: 8453, amount: 700n, status: "queued", createdAt: t },
    });
    if (!s.ok) throw new Error(s.reason);
  });
  await store.close();
  return result;
}

async function rawBaseline() {
  const db = new Database(join(dir, "raw.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE k (id TEXT PRIMARY KEY, lim INTEGER, used INTEGER, reserved INTEGER)");
  db.prepare("INSERT INTO k VALUES ('k', 1000000000000000, 0, 0)").run();
  const reserve = db.prepare("UPDATE k SET reserved = reserved + ? WHERE id = 'k' AND lim - used - reserved >= ?");
  const settle = db.prepare("UPDATE k SET reserved = reserved - ?, used = used + ? WHERE id = 'k'");
  const result = await timed("baseline: raw better-sqlite3, 2 UPDATEs", () => {
    if (reserve.run(1000, 1000).changes !== 1) throw new Error("reserve failed");
    settle.run(1000, 700);
  });
  db.close();
  return result;
}

const baseline = await rawBaseline();
const store = await viaStore();
const fetchRow = await viaFetch();
rmSync(dir, { recursive: true, force: true });

const rows = [fetchRow, store, baseline];
const md = `## Ledger (\`npm run bench:ledger\`)

Machine: ${machine()}. Run: ${new Date().toISOString().slice(0, 10)}.

Method: one key with a huge budget on a fresh SQLite file (WAL, \`synchronous=NORMAL\`, the default durability);
each pair reserves 1000 atoms and settles 700, sequentially, for ${SECONDS} s after 200 warm-up pairs. The store
row is \`reserve\` + \`settle\` of \`@tollgate/sqlite\` (each an immediate transaction: expire-overdue check,
guarded UPDATE, intent INSERT/UPDATE, charge INSERT). The gateway row adds routing, JSON, zod, token hashing and
key lookup, and budget headers, through \`gateway.fetch\` with Web Request/Response objects. The baseline is raw
better-sqlite3 running only the two guarded UPDATEs, in the same run.

| path | pairs | pairs/s | vs baseline |
|---|---:|---:|---:|
${rows.map((r) => `| ${r.label} | ${r.pairs} | ${Math.round(r.perSecond).toLocaleString("en")} | ${(r.perSecond / baseline.perSecond).toFixed(3)}× |`).join("\n")}`;
console.log(md);
writeSection("ledger", md);
