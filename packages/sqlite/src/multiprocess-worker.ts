/**
 * One process of the multi-process race (multiprocess.test.ts): opens its own connection to the
 * shared file, prints "ready", waits for "go" on stdin, then hammers one key with
 * reserve / settle / abort / direct charges and prints what it settled as JSON.
 * Usage: node --import tsx --conditions=tollgate-source multiprocess-worker.ts <file> <keyId> <worker> <iterations>
 */
import { createInterface } from "node:readline";
import { createSqliteStore } from "./store.js";

const [filename = "", keyId = "", worker = "0", iterations = "0"] = process.argv.slice(2);
const store = createSqliteStore({ filename });
const now = Date.UTC(2026, 0, 1);

// Reproducible per worker, different across workers.
let seed = Number(worker) * 7919 + 17;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};

async function run(): Promise<void> {
  const open: { id: string; max: bigint }[] = [];
  const stats = { settled: 0n, charged: 0n, reserved: 0, exhausted: 0, settles: 0, aborts: 0, charges: 0 };
  let n = 0;
  const finishOne = async () => {
    const [item] = open.splice(Math.floor(random() * open.length), 1);
    if (!item) return;
    if (random() < 0.7) {
      const final = BigInt(Math.floor(random() * (Number(item.max) + 1)));
      const r = await store.settle({ intentId: item.id, finalAmount: final, result: { final: final.toString() }, now });
      if (!r.ok) throw new Error(`settle ${item.id}: ${r.reason}`);
      stats.settled += final;
      stats.settles++;
    } else {
      const r = await store.abort({ intentId: item.id, reason: "worker", result: {}, now });
      if (!r.ok) throw new Error(`abort ${item.id}: ${r.reason}`);
      stats.aborts++;
    }
  };
  for (let i = 0; i < Number(iterations); i++) {
    const roll = random();
    if (roll < 0.1) {
      const amount = BigInt(1 + Math.floor(random() * 5));
      const r = await store.chargeDirect({ keyId, amount, now });
      if (r.ok) {
        stats.charged += amount;
        stats.charges++;
      } else if (r.reason === "budget_exhausted") stats.exhausted++;
      else throw new Error(`chargeDirect: ${r.reason}`);
    } else if (open.length < 4 && (open.length === 0 || roll < 0.55)) {
      const max = BigInt(1 + Math.floor(random() * 10));
      const id = `pi_w${worker}_${n++}`;
      const r = await store.reserve({ intent: { intentId: id, keyId, maxAmount: max, fingerprint: "fp", request: { worker }, createdAt: now, expiresAt: now + 3_600_000 }, now });
      if (r.ok) {
        open.push({ id, max });
        stats.reserved++;
      } else if (r.reason === "budget_exhausted") stats.exhausted++;
      else throw new Error(`reserve: ${r.reason}`);
    } else {
      await finishOne();
    }
  }
  while (open.length > 0) await finishOne();
  await store.close();
  process.stdout.write(`${JSON.stringify(stats, (_, v) => (typeof v === "bigint" ? v.toString() : v))}\n`);
}

process.stdout.write("ready\n");
const lines = createInterface({ input: process.stdin });
lines.once("line", () => {
  lines.close();
  run().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
});
