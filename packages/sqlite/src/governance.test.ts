import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import type { KeyRecord, NewIntent, Store } from "@tollgate/core";
import { MIGRATIONS, migrate } from "./migrations.js";
import { createSqliteStore } from "./store.js";
import { databaseAtVersion } from "./temp-stores.js";

const dir = join(tmpdir(), `tollgate-sqlite-gov-${process.pid}-${Date.now()}`);
let n = 0;
const file = () => {
  mkdirSync(dir, { recursive: true });
  return join(dir, `gov-${++n}.db`);
};
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T = Date.UTC(2026, 2, 10, 12);
const key = (id: string, extra: Partial<KeyRecord> = {}): KeyRecord => ({
  keyId: id,
  tokenHash: id.padStart(64, "0"),
  owner: "0xaa",
  chainId: 1,
  purpose: "api",
  budgetLimit: 1000n,
  budgetUsed: 0n,
  budgetReserved: 0n,
  createdAt: T,
  expiresAt: T + 86_400_000 * 30,
  ...extra,
});
const intent = (id: string, keyId: string, maxAmount: bigint, extra: Partial<NewIntent> = {}): NewIntent => ({
  intentId: id,
  keyId,
  maxAmount,
  fingerprint: "fp",
  request: {},
  createdAt: T,
  expiresAt: T + 60_000,
  ...extra,
});
const event = (keyId: string, id: string) => ({ eventId: id, keyId, at: T, type: "rotate" as const, actor: "wallet:0xaa", changes: {} });

async function withStore(run: (store: Store) => Promise<void>): Promise<void> {
  const store = createSqliteStore({ filename: file() });
  try {
    await run(store);
  } finally {
    await store.close();
  }
}

describe("sqlite key governance", () => {
  it("a database at version 10 migrates to the latest; its keys and intents read without the new fields and keep working", async () => {
    const filename = file();
    const old = databaseAtVersion(filename, 10);
    old
      .prepare(
        `INSERT INTO keys (key_id, token_hash, owner, chain_id, purpose, budget_limit, budget_used, budget_reserved, created_at, expires_at)
      VALUES ('key_old', 'ab', '0xaa', 1, 'api', 1000, 100, 0, ${T}, ${T + 86_400_000})`,
      )
      .run();
    old.close();

    const store = createSqliteStore({ filename });
    const read = await store.getKeyById("key_old");
    expect(read).toEqual({
      keyId: "key_old",
      tokenHash: "ab",
      owner: "0xaa",
      chainId: 1,
      purpose: "api",
      budgetLimit: 1000n,
      budgetUsed: 100n,
      budgetReserved: 0n,
      createdAt: T,
      expiresAt: T + 86_400_000,
    });
    const r = await store.reserve({ intent: intent("pi_old", "key_old", 900n), now: T });
    expect(r.ok && [r.key.budgetReserved, r.intent.budgetScope]).toEqual([900n, undefined]);
    expect(await store.getModelSpend("key_old")).toEqual([]);
    await store.close();
    const db = new Database(filename);
    const latest = Math.max(...MIGRATIONS.map((m) => m.version));
    expect(db.prepare("SELECT max(version) AS v FROM schema_migrations").get()).toEqual({ v: latest });
    expect(migrate(db)).toEqual([]);
    db.close();
  });

  it("a scoped reserve refused by the key's own guard changes nothing: no scope row, no lastUsedAt", () =>
    withStore(async (store) => {
      await store.insertKey(key("key_r", { revokedAt: T - 1 }));
      const r = await store.reserve({ intent: intent("pi_r", "key_r", 10n, { budgetScope: { scope: "gpt-4o", limit: 100n } }), now: T });
      expect(r).toMatchObject({ ok: false, reason: "key_revoked" });
      expect(await store.getModelSpend("key_r")).toEqual([]);
      await store.insertKey(key("key_b", { budgetLimit: 50n }));
      const over = await store.reserve({ intent: intent("pi_b", "key_b", 60n, { budgetScope: { scope: "gpt-4o", limit: 100n } }), now: T });
      expect(over).toMatchObject({ ok: false, reason: "budget_exhausted" });
      const scoped = await store.reserve({ intent: intent("pi_c", "key_b", 40n, { budgetScope: { scope: "gpt-4o", limit: 30n } }), now: T });
      expect(scoped).toMatchObject({ ok: false, reason: "model_budget_exhausted" });
      expect((await store.getKeyById("key_b"))?.lastUsedAt).toBeUndefined();
      expect(await store.getModelSpend("key_b")).toEqual([]);
    }));

  it("a step that throws in a group rolls back and re-runs the others: scope counters stay exact", () =>
    withStore(async (store) => {
      await store.insertKey(key("key_g", { budgetPeriod: "daily", periodStart: Date.UTC(2026, 2, 10), modelBudgets: { "openai/*": 500n } }));
      const scope = { scope: "openai/*", limit: 500n };
      await store.reserve({ intent: intent("pi_dup", "key_g", 1n), now: T });
      const results = await Promise.allSettled([
        store.reserve({ intent: intent("pi_a", "key_g", 100n, { budgetScope: scope }), now: T }),
        store.reserve({ intent: intent("pi_dup", "key_g", 100n, { budgetScope: scope }), now: T }), // duplicate id: throws
        store.reserve({ intent: intent("pi_b", "key_g", 200n, { budgetScope: scope }), now: T }),
      ]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect(await store.getModelSpend("key_g")).toEqual([
        { keyId: "key_g", scope: "openai/*", budgetUsed: 0n, budgetReserved: 300n, periodStart: Date.UTC(2026, 2, 10) },
      ]);
      // The next day: the sweeper releases both into the rolled window, the key's and the scope's.
      const tomorrow = T + 86_400_000;
      await store.settle({ intentId: "pi_a", finalAmount: 80n, result: {}, now: T });
      expect(await store.expireIntents(tomorrow, 10)).toBe(2);
      expect(await store.getKeyById("key_g")).toMatchObject({ budgetUsed: 0n, budgetReserved: 0n, periodStart: Date.UTC(2026, 2, 11) });
      expect(await store.getModelSpend("key_g")).toMatchObject([{ budgetUsed: 0n, budgetReserved: 0n, periodStart: Date.UTC(2026, 2, 11) }]);
    }));

  it("a current token wins over another key's previous one; rotating onto a taken token throws and changes nothing", () =>
    withStore(async (store) => {
      await store.insertKey(key("key_1"));
      const first = "key_1".padStart(64, "0");
      await store.rotateKey({ keyId: "key_1", tokenHash: "1".repeat(64), previousValidUntil: T + 1000, event: event("key_1", "kev_1") });
      // Onto key_1's previous token, then onto its current one.
      await store.insertKey(key("key_3"));
      await expect(store.rotateKey({ keyId: "key_3", tokenHash: first, previousValidUntil: T, event: event("key_3", "kev_3") })).rejects.toThrow(/duplicate/);
      await expect(store.rotateKey({ keyId: "key_3", tokenHash: "1".repeat(64), previousValidUntil: T, event: event("key_3", "kev_4") })).rejects.toThrow();
      expect((await store.getKeyById("key_3"))?.previousTokenHash).toBeUndefined();
      expect((await store.listKeyEvents("key_3", { limit: 5 })).events).toEqual([]);
      await store.insertKey(key("key_2", { tokenHash: first }));
      expect((await store.getKeyByTokenHash(first))?.keyId).toBe("key_2");
    }));

  it("the schema refuses an unknown period", () =>
    withStore(async (store) => {
      await expect(store.insertKey(key("key_p", { budgetPeriod: "yearly" as "daily", periodStart: T }))).rejects.toThrow(/CHECK/);
    }));
});
