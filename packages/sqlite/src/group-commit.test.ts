import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createGroupCommit } from "./group-commit.js";
import { createSqliteStore } from "./store.js";

const dir = mkdtempSync(join(tmpdir(), "tollgate-group-commit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** A WAL database with one table, and a second connection that sees only committed rows. */
function open() {
  const filename = join(dir, `g-${++n}.db`);
  const db = new Database(filename);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  const other = new Database(filename, { readonly: true });
  const committed = () =>
    other
      .prepare("SELECT id FROM t ORDER BY id")
      .all()
      .map((r) => (r as { id: number }).id);
  return { db, other, committed, insert: db.prepare("INSERT INTO t (id, v) VALUES (?, ?)") };
}

describe("group commit", () => {
  it("steps of one turn share one transaction, and every caller is answered only after its COMMIT", async () => {
    const { db, other, committed, insert } = open();
    const group = createGroupCommit(db);
    const seenInside: Array<{ inTx: boolean; othersSee: number[] }> = [];
    const runs = [1, 2, 3].map((id) =>
      group.run(() => {
        insert.run(id, `row ${id}`);
        // The previous steps' rows are written but not committed: the other connection sees none.
        seenInside.push({ inTx: db.inTransaction, othersSee: committed() });
        return id;
      }),
    );
    expect(committed()).toEqual([]); // nothing runs before the turn ends
    const order: string[] = [];
    await Promise.all(runs.map((p) => p.then((id) => order.push(`${id}:${committed().join(",")}`))));
    expect(seenInside).toEqual([
      { inTx: true, othersSee: [] },
      { inTx: true, othersSee: [] },
      { inTx: true, othersSee: [] },
    ]);
    // Each answer came after the one COMMIT: all three rows were visible to every caller.
    expect(order).toEqual(["1:1,2,3", "2:1,2,3", "3:1,2,3"]);
    other.close();
    db.close();
  });

  it("a step that throws rejects alone; none of its writes is kept and the other steps commit", async () => {
    const { db, other, committed, insert } = open();
    const group = createGroupCommit(db);
    const results = await Promise.allSettled([
      group.run(() => insert.run(1, "a").changes),
      group.run(() => {
        insert.run(2, "written before the throw");
        insert.run(1, "duplicate primary key"); // throws: SQLITE_CONSTRAINT_PRIMARYKEY
      }),
      group.run(() => insert.run(3, "c").changes),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE|PRIMARY/i);
    expect(committed()).toEqual([1, 3]);
    other.close();
    db.close();
  });

  it("a lone step is its own transaction; a large queue is committed in groups of at most maxGroup", async () => {
    const { db, other, committed, insert } = open();
    const group = createGroupCommit(db, 10);
    await expect(group.run(() => insert.run(1, "a").changes)).resolves.toBe(1);
    // What each step sees committed tells which group it ran in: 1 row, then 11, then 21.
    const seen = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        group.run(() => {
          const committedBefore = committed().length;
          insert.run(i + 2, "b");
          return committedBefore;
        }),
      ),
    );
    expect(seen).toEqual([...Array(10).fill(1), ...Array(10).fill(11), ...Array(5).fill(21)]);
    expect(committed()).toHaveLength(26);
    other.close();
    db.close();
  });
});

describe("background checkpoints", () => {
  const key = (i: number) => ({
    keyId: `key_${i}`,
    tokenHash: i.toString(16).padStart(64, "0"),
    owner: "0xaa",
    chainId: 1,
    purpose: "api" as const,
    name: "x".repeat(500),
    budgetLimit: 1n,
    budgetUsed: 0n,
    budgetReserved: 0n,
    createdAt: 1,
    expiresAt: 2,
  });

  it("the serving connection never checkpoints on COMMIT; the worker does, and close runs a last one", async () => {
    const filename = join(dir, "checkpoint-rare.db");
    // A worker that checkpoints once a minute: within the test only close() checkpoints.
    const store = createSqliteStore({ filename, checkpointIntervalMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 300)); // the worker has started and turned auto-checkpoint off
    const before = statSync(filename).size;
    // Far past SQLite's 1000-page auto-checkpoint threshold.
    for (let i = 0; i < 3000; i++) await store.insertKey(key(i));
    expect(statSync(`${filename}-wal`).size).toBeGreaterThan(1000 * 4096);
    expect(statSync(filename).size).toBe(before);
    await store.close();
    expect(statSync(filename).size).toBeGreaterThan(before + 1000 * 1024);
    const reopened = createSqliteStore({ filename, checkpointIntervalMs: 0 });
    expect(await reopened.getKeyById("key_2999")).toMatchObject({ keyId: "key_2999" });
    await reopened.close();
  });

  it("a running worker copies the WAL into the database file while the store serves", async () => {
    const filename = join(dir, "checkpoint-often.db");
    const store = createSqliteStore({ filename, checkpointIntervalMs: 20 });
    const before = statSync(filename).size;
    for (let i = 0; i < 500; i++) await store.insertKey(key(i));
    const deadline = Date.now() + 5_000;
    while (statSync(filename).size <= before + 100 * 1024 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(statSync(filename).size).toBeGreaterThan(before + 100 * 1024);
    await store.close();
  });

  it("under paid calls that never pause, the worker still gets the log started over (the WAL does not grow without end)", async () => {
    const filename = join(dir, "checkpoint-steady.db");
    const store = createSqliteStore({ filename, checkpointIntervalMs: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300)); // the worker has started
    const now = Date.now();
    await store.insertKey({ ...key(0), budgetLimit: 10n ** 15n, expiresAt: now + 3_600_000 });
    // The WAL header's checkpoint sequence number (bytes 12–15) grows each time a writer starts the log over.
    const sequence = () => {
      const fd = openSync(`${filename}-wal`, "r");
      try {
        const header = Buffer.alloc(16);
        readSync(fd, header, 0, 16, 0);
        return header.readUInt32BE(12);
      } finally {
        closeSync(fd);
      }
    };
    const first = sequence();
    // 32 clients reserving and settling back to back: a group commit every turn, ~10 KiB of WAL per call.
    let calls = 0;
    const call = async () => {
      const intentId = `pi_${String(calls++).padStart(12, "0")}`;
      const intent = { intentId, keyId: "key_0", maxAmount: 10n, fingerprint: "f", request: null, createdAt: now, expiresAt: now + 3_600_000 };
      expect((await store.reserve({ intent, now })).ok).toBe(true);
      expect((await store.settle({ intentId, finalAmount: 1n, result: null, now })).ok).toBe(true);
    };
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (calls < 20_000) await call();
      }),
    );
    // Without restarts the log would hold every frame of the run (~200 MiB); restarted, a writer cuts it back to 64 MiB.
    expect(sequence()).toBeGreaterThan(first);
    expect(statSync(`${filename}-wal`).size).toBeLessThan(80 * 1024 * 1024);
    expect((await store.getKeyById("key_0"))?.budgetUsed).toBe(20_000n);
    await store.close();
  });

  it("checkpointIntervalMs is checked", () => {
    expect(() => createSqliteStore({ filename: join(dir, "bad.db"), checkpointIntervalMs: -1 })).toThrow(TypeError);
    expect(() => createSqliteStore({ filename: join(dir, "bad.db"), checkpointIntervalMs: 1.5 })).toThrow(TypeError);
  });
});
