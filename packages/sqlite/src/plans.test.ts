/**
 * The statements over many intents use the indexes meant for them, on a real file that holds
 * settled, open and overdue intents, before and after ANALYZE: no statement reads the whole
 * intents table, the owner's page is one range of its index and needs no sort, the per-key expiry and the sweeper search only
 * the overdue intents (of the key, of all keys), the open count only the open ones, and a
 * wallet's open reservations (the usage read) go through its keys and their overdue intents only.
 */
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { makeKey } from "@tollgate/testing";
import { heldKeysSince } from "@tollgate/core";
import { OPEN_INTENTS_SQL } from "./health.js";
import { ACTIVE_SESSION_SQL, HELD_KEYS_SQL, LIVE_KEYS_SQL } from "./keys.js";
import { INTENT_SQL } from "./ledger.js";
import { createSqliteStore } from "./store.js";
import { DAY_CELLS_SQL, HELD_SQL } from "./usage.js";

const dir = join(tmpdir(), `tollgate-sqlite-plans-${process.pid}-${Date.now()}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OWNER = "0x00000000000000000000000000000000000000a1";
const T = Date.UTC(2026, 10, 1, 12);

/** The plan lines SQLite reports for `sql` with `params`. */
function planOf(db: Database.Database, sql: string, params: Record<string, unknown> | unknown[]): string[] {
  const stmt = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const rows = (Array.isArray(params) ? stmt.all(...params) : stmt.all(params)) as Array<{ detail: string }>;
  return rows.map((r) => r.detail);
}

/** A file with 300 settled, 40 open and 20 overdue intents of two keys of one owner. */
async function populated(): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const filename = join(dir, "plans.db");
  const store = createSqliteStore({ filename });
  for (const keyId of ["key_a", "key_b"])
    await store.insertKey(makeKey({ keyId, owner: OWNER, budgetLimit: 10n ** 12n, createdAt: T, expiresAt: T + 86_400_000 * 30 }));
  // 200 more keys of the owner, mostly revoked or expired: the live-key count must not read those.
  for (let i = 0; i < 200; i++)
    await store.insertKey(
      makeKey({ keyId: `key_x${i}`, owner: OWNER, createdAt: T, expiresAt: T + (i % 4 === 0 ? 86_400_000 : 1_000), ...(i % 2 ? { revokedAt: T } : {}) }),
    );
  const reserve = (i: number, at: number, ttl: number) =>
    store.reserve({
      intent: {
        intentId: `pi_${String(i).padStart(6, "0")}`,
        keyId: i % 2 ? "key_a" : "key_b",
        maxAmount: 10n,
        fingerprint: "",
        request: {},
        createdAt: at,
        expiresAt: at + ttl,
      },
      now: at,
    });
  for (let i = 0; i < 360; i++) {
    const at = T + i * 1000;
    expect((await reserve(i, at, i < 20 ? 500 : 3_600_000)).ok).toBe(true);
    if (i >= 60) expect((await store.settle({ intentId: `pi_${String(i).padStart(6, "0")}`, finalAmount: 5n, result: undefined, now: at + 1 })).ok).toBe(true);
  }
  await store.close();
  return filename;
}

/**
 * The plan of a wallet's open reservations: the reserved budgets of its keys that may still hold
 * one (unrevoked by expiry, revoked by revocation time: never all its keys), less each such key's
 * overdue authorized intents, searched by key and expiry; no table is read end to end.
 */
function expectHeldPlan(lines: string[]): void {
  expect(lines.filter((l) => /^SEARCH keys /.test(l))).toEqual([
    "SEARCH keys USING INDEX keys_live_by_owner (owner=? AND expires_at>?)",
    "SEARCH keys USING INDEX keys_revoked_by_owner (owner=? AND revoked_at>?)",
  ]);
  expect(lines).toContainEqual(expect.stringMatching(/^SEARCH i USING (COVERING )?INDEX intents_due_by_key \(key_id=\? AND expires_at<\?\)$/));
  for (const line of lines) expect(line).not.toMatch(/^SCAN (keys|intents|i)$/);
}

describe("sqlite intent plans", () => {
  it("a wallet's open reservations go through its keys even with the statistics of empty tables", async () => {
    mkdirSync(dir, { recursive: true });
    const filename = join(dir, "empty.db");
    await createSqliteStore({ filename }).close();
    const db = new Database(filename);
    try {
      db.exec("ANALYZE");
      expectHeldPlan(planOf(db, HELD_SQL, { wallet: OWNER, chain: 8453, from: 0, to: T, now: T, since: heldKeysSince(T) }));
    } finally {
      db.close();
    }
  });

  it("the owner's page, the per-key expiry, the sweeper, the open count, a wallet's holds and its live keys use their indexes, before and after ANALYZE", async () => {
    const db = new Database(await populated(), { readonly: true });
    const indexes = (
      db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'intents' AND sql IS NOT NULL ORDER BY name").all() as Array<{
        name: string;
      }>
    ).map((r) => r.name);
    expect(indexes).toEqual(["intents_by_owner", "intents_due", "intents_due_by_key", "intents_idempotency"]);
    const now = T + 400_000;
    const check = () => {
      // The count of a wallet's live keys (a key insert under its cap) reads only its unrevoked keys expiring later.
      const live = planOf(db, LIVE_KEYS_SQL, { owner: OWNER, at: now });
      expect(live).toHaveLength(1);
      expect(live[0]).toMatch(/^SEARCH keys USING (COVERING )?INDEX keys_live_by_owner \(owner=\? AND expires_at>\?\)$/);
      // So do the keys that may still add to its charges on a chain (the funding check, the freeze of
      // an underfunded wallet): unrevoked by expiry, revoked by revocation time, never all its keys;
      const held = planOf(db, HELD_KEYS_SQL, { owner: OWNER, chain_id: 8453, live_after: now, since: heldKeysSince(now) });
      expect(held.filter((l) => /^(SEARCH|SCAN) keys/.test(l))).toEqual([
        "SEARCH keys USING INDEX keys_live_by_owner (owner=? AND expires_at>?)",
        "SEARCH keys USING INDEX keys_revoked_by_owner (owner=? AND revoked_at>?)",
      ]);
      // and the look for its active session key on a chain (GET /api/session, settlement status).
      const session = planOf(db, ACTIVE_SESSION_SQL, { owner: OWNER, chain_id: 8453, now });
      expect(session[0]).toMatch(
        /^SEARCH keys USING INDEX (keys_live_by_owner \(owner=\? AND expires_at>\?\)|keys_active_session \(owner=\? AND chain_id=\?\))$/,
      );
      // A page is one range of the owner index between its cursor and its scan's boundary: deep
      // pages and filters never walk the owner's history from its newest intent or to its end.
      const range = "USING INDEX intents_by_owner (owner=? AND (created_at,intent_id)>(?,?) AND (created_at,intent_id)<(?,?))";
      const open = { before_created: Number.MAX_SAFE_INTEGER, before_id: "", from_created: Number.MIN_SAFE_INTEGER, from_id: "" };
      const none = { chain_id: null, key_id: null, status: null, now: null, limit: 21 };
      const page = planOf(db, INTENT_SQL.page, { owner: OWNER, ...open, ...none });
      expect(page.join(" | ")).toContain(range);
      expect(page.join(" | ")).not.toContain("TEMP B-TREE");
      const at = { owner: OWNER, before_created: T + 200_000, before_id: "pi_000200", from_created: T + 100_000, from_id: "pi_000100" };
      const paged = planOf(db, INTENT_SQL.page, { ...at, chain_id: 8453, key_id: "key_a", status: "authorized", now, limit: 21 });
      expect(paged.join(" | ")).toContain(range);
      expect(paged.join(" | ")).not.toContain("TEMP B-TREE");
      const boundary = planOf(db, INTENT_SQL.pageBoundary, { owner: OWNER, before_created: T + 200_000, before_id: "pi_000200", skip: 999 });
      expect(boundary).toEqual(["SEARCH intents USING COVERING INDEX intents_by_owner (owner=? AND (created_at,intent_id)<(?,?))"]);
      const ofKey = planOf(db, INTENT_SQL.expireDueOfKey, { now, key_id: "key_a" });
      expect(ofKey).toHaveLength(1);
      expect(ofKey[0]).toMatch(/^SEARCH intents USING (COVERING )?INDEX intents_due_by_key \(key_id=\? AND expires_at<\?\)$/);
      const sweep = planOf(db, INTENT_SQL.expireDue, { now, limit: 500 });
      expect(sweep.join(" | ")).toMatch(/SEARCH intents USING (COVERING )?INDEX intents_due \(expires_at<\?\)/);
      expect(sweep.join(" | ")).toMatch(/SEARCH intents USING (COVERING )?INDEX sqlite_autoindex_intents_1 \(intent_id=\?\)/);
      expect(planOf(db, OPEN_INTENTS_SQL, [now])).toEqual(["SEARCH intents USING COVERING INDEX intents_due (expires_at>?)"]);
      // A wallet's spend over whole days: its rollup rows, by owner and day.
      expect(planOf(db, DAY_CELLS_SQL, { wallet: OWNER, chain: null, from: T, to: now })).toContainEqual(
        expect.stringMatching(/^SEARCH usage_days USING INDEX usage_days_by_owner \(owner=\? AND day_start>\? AND day_start<\?\)$/),
      );
      // A wallet's open reservations: its keys, then each key's overdue intents (never every wallet's, nor its open ones).
      expectHeldPlan(planOf(db, HELD_SQL, { wallet: OWNER, chain: null, from: 0, to: now, now, since: heldKeysSince(now) }));
      // Not one of them reads the table itself from end to end.
      for (const line of [...page, ...paged, ...boundary, ...sweep]) expect(line).not.toMatch(/^SCAN intents$/);
    };
    try {
      check();
      const writable = new Database(db.name);
      writable.exec("ANALYZE");
      writable.close();
      check();
    } finally {
      db.close();
    }
  });
});
