import { chmodSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runStoreConformance } from "@tollgate/testing";
import Database from "better-sqlite3";
import { afterAll, expect, it } from "vitest";
import { MIGRATIONS, migrate } from "./migrations.js";
import { createSqliteStore } from "./store.js";

// A fresh file per test, in a nested directory that the store must create.
const dir = join(tmpdir(), `tollgate-sqlite-${process.pid}-${Date.now()}`);
let n = 0;
const file = () => join(dir, "nested", `store-${++n}.db`);

runStoreConformance("sqlite", { create: async () => createSqliteStore({ filename: file() }) });

it("sqlite: data survives reopening, migrations apply once, options are checked", async () => {
  const filename = file();
  const store = createSqliteStore({ filename, durability: "full" });
  const key = { keyId: "key_a", tokenHash: "cd".repeat(32), owner: "0xaa", chainId: 1, purpose: "api" as const, budgetLimit: 2n ** 62n, budgetUsed: 0n, budgetReserved: 0n, createdAt: 1, expiresAt: 2 };
  await store.insertKey(key);
  await store.close();
  await store.close();
  const reopened = createSqliteStore({ filename });
  expect(await reopened.getKeyById("key_a")).toEqual(key);
  await reopened.close();
  const db = new Database(filename);
  expect(migrate(db)).toEqual([]);
  expect(db.prepare("SELECT version FROM schema_migrations ORDER BY version").all()).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
  expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
  db.close();
  expect(() => createSqliteStore({ filename: "" })).toThrow(TypeError);
  expect(() => createSqliteStore({ filename, durability: "fast" as "full" })).toThrow(TypeError);
});

it.skipIf(process.platform === "win32")("sqlite: a new database file and its -wal file are private to the owner (0600); an existing file keeps its mode", async () => {
  const filename = file();
  const store = createSqliteStore({ filename });
  const mode = (path: string) => statSync(path).mode & 0o777;
  expect(mode(filename)).toBe(0o600);
  await store.insertKey({ keyId: "key_m", tokenHash: "ef".repeat(32), owner: "0xaa", chainId: 1, purpose: "api", budgetLimit: 1n, budgetUsed: 0n, budgetReserved: 0n, createdAt: 1, expiresAt: 2 });
  expect(statSync(`${filename}-wal`).size).toBeGreaterThan(0);
  expect(mode(`${filename}-wal`)).toBe(0o600);
  expect(mode(`${filename}-shm`)).toBe(0o600);
  await store.close();

  // An existing (here empty) file is opened as it is: the store does not chmod it.
  const existing = file();
  writeFileSync(existing, "");
  chmodSync(existing, 0o640);
  const reopened = createSqliteStore({ filename: existing });
  expect(mode(existing)).toBe(0o640);
  await reopened.close();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));
