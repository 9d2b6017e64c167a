/** Test helper: fresh SQLite stores in one temp directory, removed after the test file. */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll } from "vitest";
import { MIGRATIONS, migrate } from "./migrations.js";
import { createSqliteStore } from "./store.js";

/** Returns a `createStore` that opens a new SQLite file per call; the directory goes away after the file's tests. */
export function tempSqliteStores(label: string): () => ReturnType<typeof createSqliteStore> {
  const dir = join(tmpdir(), `tollgate-sqlite-${label}-${process.pid}-${Date.now()}`);
  let n = 0;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return () => createSqliteStore({ filename: join(dir, `${label}-${++n}.db`) });
}

/**
 * Opens (creating it) the database `filename` migrated only up to `version`, with safe integers,
 * as a release of that schema left it: for the tests of a later migration on old data.
 */
export function databaseAtVersion(filename: string, version: number): Database.Database {
  const db = new Database(filename);
  db.defaultSafeIntegers(true);
  migrate(
    db,
    MIGRATIONS.filter((m) => m.version <= version),
  );
  return db;
}
