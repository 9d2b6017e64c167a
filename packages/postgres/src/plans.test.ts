/**
 * The generic plans of the ledger's statements never read the whole intents table. A prepared
 * statement keeps the plan it was given, and one planned while the table was small and never
 * analyzed (a fresh deployment, the first minute before autovacuum) would keep a sequential scan
 * as the table grows: before the expiry CTE of reserve repeated its conditions, every reserve
 * scanned all intents, ~6,000 rows per reserve after 12,000 calls. Checked on PGlite always and
 * on the real server with DATABASE_URL, on a table of a few hundred intents that was never
 * analyzed, with `plan_cache_mode = force_generic_plan`. The usage read is checked the same way: a
 * wallet's open reservations go through its keys, never through every wallet's intents; and a page
 * of a wallet's intents is one range of the owner index between its cursor and its boundary.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { heldKeysSince } from "@tollgate/core";
import { windowValues } from "./governance.js";
import { activeSessionSql, heldKeysSql, liveKeysSql } from "./keys.js";
import { ledgerSql } from "./ledger-sql.js";
import type { Queryable } from "./queryable.js";
import { chargeValues, tablesIn } from "./rows.js";
import { createPostgresStore } from "./store.js";
import { testDatabases } from "./test-databases.js";
import { usageSql } from "./usage.js";
import { videoJobValues } from "./video.js";

const OWNER = "0x00000000000000000000000000000000000000a1";

/** A literal of a value for EXECUTE's argument list (strings quoted, NULL as is). */
const literal = (v: unknown) => (v === null ? "NULL" : typeof v === "number" ? String(v) : `'${String(v).replaceAll("'", "''")}'`);

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/** The nodes reading `table` in the generic plan of `text` executed with `values`. */
async function tableNodesOf(session: Queryable, name: string, text: string, values: unknown[], table: string): Promise<PlanNode[]> {
  await session.query(`PREPARE ${name} AS ${text}`);
  const { rows } = await session.query<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) EXECUTE ${name}(${values.map(literal).join(", ")})`);
  await session.query(`DEALLOCATE ${name}`);
  const raw = rows[0]!["QUERY PLAN"];
  const [plan] = (typeof raw === "string" ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }];
  return nodes(plan.Plan).filter((n) => n["Relation Name"] === table);
}

/** The scans of `table` in the generic plan of `text` executed with `values`. */
async function scansOf(session: Queryable, name: string, text: string, values: unknown[], table: string): Promise<string[]> {
  return (await tableNodesOf(session, name, text, values, table)).map((n) => n["Node Type"]);
}

for (const database of testDatabases("plans")) {
  describe(`PostgreSQL ledger plans (${database.name})`, () => {
    it("reserve, settle, the sweeper, release-on-read, the usage read, a page of intents and a wallet's live keys use indexes on unanalyzed tables of hundreds of rows", async () => {
      const schema = database.schema();
      const store = await createPostgresStore({ pool: database.db, schema });
      const now = Date.now();
      await store.insertKey({
        keyId: "key_p",
        tokenHash: "p".repeat(64),
        owner: OWNER,
        chainId: 8453,
        purpose: "api",
        budgetLimit: 10n ** 12n,
        budgetUsed: 0n,
        budgetReserved: 0n,
        createdAt: now,
        expiresAt: now + 86_400_000,
      });
      for (let i = 0; i < 400; i++) {
        const intentId = `pi_${String(i).padStart(6, "0")}`;
        const r = await store.reserve({
          intent: { intentId, keyId: "key_p", maxAmount: 10n, fingerprint: "f", request: null, createdAt: now, expiresAt: now + 60_000 },
          now,
        });
        expect(r.ok).toBe(true);
        // Every other one stays authorized (and overdue for the plans below, at now + 120 s).
        if (i % 2 === 0) expect((await store.settle({ intentId, finalAmount: 5n, result: null, now })).ok).toBe(true);
      }

      // 300 more keys of the owner, most of them revoked or expired (a live-key count must not read those).
      await database.db.query(
        `INSERT INTO ${tablesIn(schema)("keys")} (key_id, token_hash, owner, chain_id, purpose, budget_limit, budget_used, budget_reserved, created_at, expires_at, revoked_at)
         SELECT 'key_x' || g, lpad(g::text, 64, '0'), '${OWNER}', 8453, 'api', 1000, 0, 0, ${now}, ${now} + CASE WHEN g % 4 = 0 THEN 86400000 ELSE 1000 END,
           CASE WHEN g % 2 = 1 THEN ${now} END
         FROM generate_series(1, 300) g`,
      );

      // SET and PREPARE belong to a session: one client of the server (PGlite has one session).
      const client = database.name === "server" ? new pg.Client({ connectionString: process.env.DATABASE_URL }) : undefined;
      await client?.connect();
      const session: Queryable = client ? { query: <R>(text: string) => client.query(text) as Promise<unknown> as Promise<{ rows: R[] }> } : database.db;
      try {
        await session.query("SET plan_cache_mode = force_generic_plan");
        const sql = ledgerSql(tablesIn(schema));
        const later = now + 120_000;
        const w = windowValues(later);
        const reserveArgs = ["key_p", later, "10", "pi_new", null, "f", "null", later, later + 60_000, ...w, 1000];
        const finishArgs = ["pi_000001", later, "settled", "5", "null", null, ...chargeValues(undefined), ...videoJobValues(undefined), ...w];
        // A range with whole days (the rollups) and a part of a day at each end (the charges).
        const usageArgs = [OWNER, 5, 86_400_000, null, later, 86_400_000, 2 * 86_400_000, 2 * 86_400_000, later, heldKeysSince(later)];
        const found = {
          reserve: await scansOf(session, "tg_plan_reserve", sql.reserve, reserveArgs, "intents"),
          // Its look for overdue intents runs only when its guard misses.
          reserveLean: await scansOf(session, "tg_plan_reserve_lean", sql.reserveLean, reserveArgs, "intents"),
          finish: await scansOf(session, "tg_plan_finish", sql.finish, finishArgs, "intents"),
          sweep: await scansOf(session, "tg_plan_sweep", sql.sweep, [later, 100, ...windowValues(later)], "intents"),
          releaseKeys: await scansOf(session, "tg_plan_release", sql.releaseKeys, [JSON.stringify(["key_p"]), later, ...windowValues(later)], "intents"),
          // A wallet's usage: its charges' intents by id, its keys' overdue intents by key (open ones come from keys.budget_reserved).
          usage: await scansOf(session, "tg_plan_usage", usageSql(tablesIn(schema)), usageArgs, "intents"),
        };
        // A page of the owner's intents (filtered, past a cursor) and its scan's boundary: one range of
        // the owner index each, bounded by row values, never the owner's history from end to end.
        const max = Number.MAX_SAFE_INTEGER;
        const pageArgs = [OWNER, now, "pi_000300", now, "pi_000100", 8453, "key_p", "authorized", later, 21];
        const pages = {
          page: await tableNodesOf(session, "tg_plan_page", sql.intentPage, pageArgs, "intents"),
          boundary: await tableNodesOf(session, "tg_plan_page_boundary", sql.intentPageBoundary, [OWNER, max, "", 999], "intents"),
        };
        for (const [statement, read] of Object.entries(pages)) {
          expect(
            read.map((n) => [n["Node Type"].replace("Index Only Scan", "Index Scan"), n["Index Name"]]),
            statement,
          ).toEqual([["Index Scan", "intents_by_owner"]]);
          expect(read[0]!["Index Cond"], statement).toMatch(/ROW\(created_at, intent_id\) < ROW\(\$2, \$3\)/);
        }
        expect(pages.page[0]!["Index Cond"]).toMatch(/ROW\(created_at, intent_id\) >= ROW\(\$4, \$5\)/);
        // A wallet's live keys (a key insert under its cap): its unrevoked keys that expire later, by index.
        const live = await tableNodesOf(session, "tg_plan_live_keys", liveKeysSql(tablesIn(schema)), [OWNER, later], "keys");
        expect(live.map((n) => n["Index Name"])).toEqual(["keys_live_by_owner"]);
        const activeSession = await tableNodesOf(session, "tg_plan_active_session", activeSessionSql(tablesIn(schema)), [OWNER, 8453, later], "keys");
        expect(activeSession).toHaveLength(1);
        expect(["keys_live_by_owner", "keys_active_session"]).toContain(activeSession[0]!["Index Name"]);
        // The keys that may still add to its charges on a chain (the funding check, the freeze of an
        // underfunded wallet): unrevoked by expiry, revoked by revocation time, never all its keys.
        const heldOnChain = await tableNodesOf(session, "tg_plan_held_keys", heldKeysSql(tablesIn(schema)), [OWNER, 8453, later, heldKeysSince(later)], "keys");
        expect(heldOnChain.map((n) => n["Index Name"]).sort()).toEqual(["keys_live_by_owner", "keys_revoked_by_owner"]);
        // Whole days come from the wallet's rollup rows by index, never from every wallet's.
        const rollups = await tableNodesOf(session, "tg_plan_usage_days", usageSql(tablesIn(schema)), usageArgs, "usage_days");
        expect(rollups.map((n) => n["Index Name"])).toEqual(["usage_days_by_owner"]);
        // Its open reservations: only the wallet's keys that may still hold one (unrevoked by
        // expiry, revoked by revocation time), never every key it ever had.
        const heldKeys = await tableNodesOf(session, "tg_plan_usage_keys", usageSql(tablesIn(schema)), usageArgs, "keys");
        expect(heldKeys.map((n) => n["Index Name"]).sort()).toEqual(["keys_live_by_owner", "keys_revoked_by_owner"]);
        for (const [statement, scans] of Object.entries(found)) {
          expect(scans.length, `${statement} reads intents`).toBeGreaterThan(0);
          expect(
            scans.filter((s) => s === "Seq Scan"),
            `${statement}: ${scans.join(", ")}`,
          ).toEqual([]);
        }
      } finally {
        await client?.end();
      }
    });
  });
}
