/**
 * Session timeouts of the pool the store creates (`sessionTimeouts`): a key row locked by another
 * session (an operator's open transaction) fails the store's write on it after `lockMs` instead of
 * stalling it, and with it every ledger write of the instance queued behind it; a session left
 * idle inside a transaction is ended by the server. Migrations still wait for their locks. On the
 * real server only (PGlite has one connection, so no lock is ever held elsewhere).
 */
import { makeIntent, makeKey } from "@tollgate/testing";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { quoteIdent } from "./rows.js";
import { createPostgresStore, sessionSettings } from "./store.js";
import { serverMissing, testDatabases } from "./test-databases.js";

const T0 = Date.UTC(2026, 0, 1); // makeKey's and makeIntent's
const url = process.env.DATABASE_URL;

/** Runs `fn` with a session of its own on the server, as an operator's `psql` would be, and ends it (releasing its locks) whatever happens. */
async function withSession(fn: (c: pg.Client) => Promise<void>): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  c.on("error", () => {});
  await c.connect();
  try {
    await fn(c);
  } finally {
    await c.end().catch(() => {});
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("sessionTimeouts: validated", () => {
  it("whole milliseconds from 0, or false; anything else is a TypeError before connecting", async () => {
    for (const bad of [{ lockMs: -1 }, { lockMs: 1.5 }, { idleInTransactionMs: "5" }, null, 5]) {
      await expect(createPostgresStore({ connectionString: "postgres://127.0.0.1:9/x", sessionTimeouts: bad as never })).rejects.toThrow(/sessionTimeouts/);
    }
    expect(sessionSettings(false)).toBeUndefined();
    expect(sessionSettings(undefined)).toBe("SET lock_timeout = 5000; SET idle_in_transaction_session_timeout = 30000");
    expect(sessionSettings({ lockMs: 0 })).toBe("SET lock_timeout = 0; SET idle_in_transaction_session_timeout = 30000");
  });
});

if (!url) serverMissing("session timeouts");
for (const { schema } of testDatabases("sessiontimeouts", ["server"])) {
  describe("sessionTimeouts on a real server", () => {
    it("a key row locked elsewhere: the write on it fails after lockMs, writing nothing; a write on another key goes through", async () => {
      const s = schema();
      const store = await createPostgresStore({ connectionString: url!, schema: s, sessionTimeouts: { lockMs: 300 } });
      const [locked, free] = [makeKey(), makeKey()];
      await store.insertKey(locked);
      await store.insertKey(free);
      await withSession(async (operator) => {
        await operator.query("BEGIN");
        await operator.query(`SELECT 1 FROM ${quoteIdent(s)}.keys WHERE key_id = $1 FOR UPDATE`, [locked.keyId]);
        const stuck = store.reserve({ intent: makeIntent(locked.keyId, 10n), now: T0 }).then(
          () => "reserved",
          (error: { code?: string }) => error.code,
        );
        await new Promise((r) => setImmediate(r));
        const other = await store.reserve({ intent: makeIntent(free.keyId, 10n), now: T0 });
        expect(other.ok).toBe(true);
        expect(await stuck).toBe("55P03"); // lock_not_available
        await operator.query("ROLLBACK");
      });
      expect((await store.getKeyById(locked.keyId))?.budgetReserved).toBe(0n);
      expect((await store.reserve({ intent: makeIntent(locked.keyId, 10n), now: T0 })).ok).toBe(true);
      await store.close();
    }, 20_000);

    it("with preparedStatements: false (a pooler in transaction mode) nothing is set: the write waits for the lock", async () => {
      const s = schema();
      const store = await createPostgresStore({ connectionString: url!, schema: s, preparedStatements: false, sessionTimeouts: { lockMs: 100 } });
      const k = makeKey();
      await store.insertKey(k);
      await withSession(async (operator) => {
        await operator.query("BEGIN");
        await operator.query(`SELECT 1 FROM ${quoteIdent(s)}.keys WHERE key_id = $1 FOR UPDATE`, [k.keyId]);
        const waiting = store.reserve({ intent: makeIntent(k.keyId, 10n), now: T0 });
        await sleep(600);
        await operator.query("COMMIT");
        expect((await waiting).ok).toBe(true);
      });
      await store.close();
    }, 20_000);

    it("the settings end a session left idle inside a transaction, which releases its locks", async () => {
      await withSession(async (idle) => {
        await idle.query(sessionSettings({ idleInTransactionMs: 200 })!);
        await idle.query("BEGIN");
        await idle.query("SELECT 1");
        await sleep(800);
        await expect(idle.query("SELECT 1")).rejects.toThrow(/idle-in-transaction|terminat|Connection/i);
      });
    }, 20_000);

    it("migrations wait for their lock whatever lockMs says (another instance migrating the same schema)", async () => {
      const s = schema();
      let creating: ReturnType<typeof createPostgresStore> | undefined;
      await withSession(async (other) => {
        await other.query("BEGIN");
        await other.query("SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))", [0x746f6c6c, s]);
        creating = createPostgresStore({ connectionString: url!, schema: s, sessionTimeouts: { lockMs: 100 } });
        await sleep(600);
        await other.query("COMMIT");
      });
      const store = await creating!;
      await store.insertKey(makeKey());
      await store.close();
    }, 20_000);
  });
}
