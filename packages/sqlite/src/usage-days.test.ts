/**
 * Migration 15 on a database that predates it: the per-day rollups of the usage read are summed
 * from the charges already there, and the trigger adds each new charge (the conformance suite's
 * `usage` group checks the read itself on every store, over whole days and parts of a day).
 */
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { migrate } from "./migrations.js";
import { createSqliteStore } from "./store.js";
import { databaseAtVersion } from "./temp-stores.js";

const dir = join(tmpdir(), `tollgate-sqlite-usage-days-${process.pid}-${Date.now()}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DAY = 86_400_000;
const T = Date.UTC(2026, 10, 1);

describe("sqlite usage rollups", () => {
  it("migration 15 sums the charges of a database at version 14 per key, day and model; new charges then add to them", async () => {
    mkdirSync(dir, { recursive: true });
    const filename = join(dir, "v14.db");
    const old = databaseAtVersion(filename, 14);
    old
      .prepare(
        `INSERT INTO keys (key_id, token_hash, owner, chain_id, purpose, budget_limit, budget_used, budget_reserved, created_at, expires_at)
         VALUES ('key_u', '${"u".repeat(64)}', '0xuu', 8453, 'api', 1000000, 0, 0, ${T}, ${T + 30 * DAY})`,
      )
      .run();
    const intent = old.prepare(
      `INSERT INTO intents (intent_id, key_id, owner, chain_id, status, max_amount, final_amount, released_amount, fingerprint, request, created_at, expires_at)
       VALUES (?, 'key_u', '0xuu', 8453, 'settled', ?, ?, 0, 'f', ?, ?, ?)`,
    );
    const charge = old.prepare(
      `INSERT INTO charges (charge_id, intent_id, key_id, owner, chain_id, amount, status, created_at) VALUES (?, ?, 'key_u', '0xuu', 8453, ?, 'queued', ?)`,
    );
    const add = (n: number, at: number, amount: bigint, modelId: string | null) => {
      intent.run(`pi_u${n}`, amount, amount, JSON.stringify(modelId === null ? { service: "s" } : { service: "s", modelId }), at, at + 60_000);
      charge.run(`ch_u${n}`, `pi_u${n}`, amount, at);
    };
    add(1, T + 1, 5n, "m1");
    add(2, T + 2, 7n, "m1");
    add(3, T + 3, 11n, null);
    // Past 2^32, so both halves of the sum are exercised.
    add(4, T + DAY, (1n << 40n) + 13n, "m2");

    expect(migrate(old)).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23]);
    const rollups = () => old.prepare("SELECT day_start, model_id, spent_hi, spent_lo, calls FROM usage_days ORDER BY day_start, model_id").all();
    expect(rollups()).toEqual([
      { day_start: BigInt(T), model_id: "", spent_hi: 0n, spent_lo: 11n, calls: 1n },
      { day_start: BigInt(T), model_id: "m1", spent_hi: 0n, spent_lo: 12n, calls: 2n },
      { day_start: BigInt(T + DAY), model_id: "m2", spent_hi: 1n << 8n, spent_lo: 13n, calls: 1n },
    ]);
    // The trigger adds the next charge, in the statement that inserts it.
    add(5, T + DAY + 9, 17n, "m2");
    expect(rollups()[2]).toEqual({ day_start: BigInt(T + DAY), model_id: "m2", spent_hi: 1n << 8n, spent_lo: 30n, calls: 2n });
    old.close();

    const store = createSqliteStore({ filename });
    try {
      const usage = await store.usageByWallet({ wallet: "0xuu", fromMs: T, toMs: T + 2 * DAY, now: T + 2 * DAY });
      expect(usage.cells.sort((a, b) => a.dayStart - b.dayStart || String(a.modelId).localeCompare(String(b.modelId)))).toEqual([
        { dayStart: T, modelId: "m1", spent: 12n, calls: 2 },
        { dayStart: T, modelId: null, spent: 11n, calls: 1 },
        { dayStart: T + DAY, modelId: "m2", spent: (1n << 40n) + 30n, calls: 2 },
      ]);
    } finally {
      await store.close();
    }
  });
});
