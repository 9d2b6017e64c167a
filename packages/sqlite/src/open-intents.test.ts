/**
 * The open-intent cap's counter on a database that predates it: migration 13 counts each key's
 * authorized intents once, and the ledger keeps the count from there (the conformance suite's
 * `openIntents` group checks every step that moves it).
 */
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { makeIntent, makeKey } from "@tollgate/testing";
import { createSqliteStore } from "./store.js";
import { databaseAtVersion } from "./temp-stores.js";

const dir = join(tmpdir(), `tollgate-sqlite-open-${process.pid}-${Date.now()}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T = Date.UTC(2026, 10, 1, 12);

describe("sqlite open-intent counter", () => {
  it("migration 13 counts each key's authorized intents (overdue ones too); the cap then holds from that count", async () => {
    mkdirSync(dir, { recursive: true });
    const filename = join(dir, "v12.db");
    const old = databaseAtVersion(filename, 12);
    const insertKey = old.prepare(
      `INSERT INTO keys (key_id, token_hash, owner, chain_id, purpose, budget_limit, budget_used, budget_reserved, created_at, expires_at)
       VALUES (?, ?, '0xaa', 1, 'api', 1000, 0, ?, ${T}, ${T + 86_400_000})`,
    );
    insertKey.run("key_a", "a".repeat(64), 30n);
    insertKey.run("key_b", "b".repeat(64), 0n);
    const insertIntent = old.prepare(
      `INSERT INTO intents (intent_id, key_id, owner, chain_id, status, max_amount, fingerprint, request, created_at, expires_at)
       VALUES (?, ?, '0xaa', 1, ?, 10, 'fp', 'null', ${T}, ?)`,
    );
    // key_a: two open (one overdue at T + 2000), two finished; key_b: only finished ones.
    insertIntent.run("pi_1", "key_a", "authorized", T + 60_000);
    insertIntent.run("pi_2", "key_a", "authorized", T + 1_000);
    insertIntent.run("pi_3", "key_a", "settled", T + 60_000);
    insertIntent.run("pi_4", "key_a", "aborted", T + 60_000);
    insertIntent.run("pi_5", "key_b", "settled", T + 60_000);
    old.prepare("UPDATE keys SET budget_reserved = 20 WHERE key_id = 'key_a'").run();
    old.close();

    const store = createSqliteStore({ filename });
    const counts = () => {
      const db = new Database(filename, { readonly: true });
      try {
        return db.prepare("SELECT key_id, open_intents FROM keys ORDER BY key_id").all();
      } finally {
        db.close();
      }
    };
    expect(counts()).toEqual([
      { key_id: "key_a", open_intents: 2 },
      { key_id: "key_b", open_intents: 0 },
    ]);
    // At the cap of 2 before pi_2 is overdue; after, the reserve expires it and takes its slot.
    const early = await store.reserve({ intent: makeIntent("key_a", 10n, { createdAt: T + 500 }), now: T + 500, openLimit: 2 });
    expect(early.ok ? "reserved" : early.reason).toBe("too_many_open_intents");
    const late = await store.reserve({ intent: makeIntent("key_a", 10n, { createdAt: T + 2_000, expiresAt: T + 60_000 }), now: T + 2_000, openLimit: 2 });
    expect(late.ok && late.key.budgetReserved).toBe(20n);
    expect((await store.getIntent("pi_2"))?.status).toBe("expired");
    expect(counts()[0]).toEqual({ key_id: "key_a", open_intents: 2 });
    expect(await store.settle({ intentId: "pi_1", finalAmount: 4n, result: {}, now: T + 3_000 })).toMatchObject({ ok: true });
    expect(counts()[0]).toEqual({ key_id: "key_a", open_intents: 1 });
    await store.insertKey(makeKey({ keyId: "key_new", tokenHash: "c".repeat(64) }));
    expect(counts()[2]).toEqual({ key_id: "key_new", open_intents: 0 });
    await store.close();
  });
});
