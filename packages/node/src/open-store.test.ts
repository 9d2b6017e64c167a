import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "./open-store.js";
import type { PostgresLoader } from "./open-store.js";

const dir = mkdtempSync(join(tmpdir(), "tollgate-open-store-"));

/** A loader that resolves `name` with Node's own resolver from a directory with no node_modules: a real "not installed". */
const notInstalled =
  (name: string): PostgresLoader =>
  async () =>
    createRequire(join(dir, "loader.cjs"))(name);

describe("openStore", () => {
  it("opens a SQLite file and names it in the banner line", async () => {
    const db = join(dir, "a", "t.db");
    const opened = await openStore({ db });
    expect(opened).toMatchObject({ ok: true, description: `SQLite ${db}` });
    if (!opened.ok) return;
    expect(await opened.store.getKeyById("key_nope")).toBeNull();
    await opened.store.close();
    expect(await openStore({ db: ":memory:" })).toMatchObject({ ok: true, description: "SQLite in memory" });
  });

  it("refuses --db-schema and --db-pool-size with a SQLite file (exit 2)", async () => {
    expect(await openStore({ db: join(dir, "b.db"), dbSchema: "gw" })).toEqual({
      ok: false,
      exitCode: 2,
      message: `--db-schema applies only to a postgres:// --db (got the SQLite file ${JSON.stringify(join(dir, "b.db"))})`,
    });
    expect(await openStore({ db: join(dir, "b.db"), dbSchema: "gw", dbPoolSize: 3 })).toMatchObject({ ok: false, exitCode: 2, message: expect.stringMatching(/^--db-schema and --db-pool-size apply only/) });
    expect(await openStore({ db: ":memory:", dbSchema: "gw", dbPoolSize: 3, dbMigrate: false, dbGroupCommit: false, dbPreparedStatements: false })).toMatchObject({
      message: expect.stringMatching(/^--db-schema, --db-pool-size, --db-migrate, --db-group-commit and --db-prepared-statements apply only/),
    });
  });

  it("reports a SQLite file that cannot be created (exit 1)", async () => {
    const blocker = join(dir, "file");
    writeFileSync(blocker, "");
    const opened = await openStore({ db: join(blocker, "t.db") });
    expect(opened).toMatchObject({ ok: false, exitCode: 1, message: expect.stringMatching(/^cannot open the database ".*file\/t\.db": \S/) });
  });

  it("says which package to install when @tollgate/postgres or pg is missing (exit 2)", async () => {
    const url = "postgres://u:pw@127.0.0.1:5432/t";
    expect(await openStore({ db: url }, notInstalled("@tollgate/postgres"))).toEqual({
      ok: false,
      exitCode: 2,
      message: "a postgres:// --db needs @tollgate/postgres: npm install @tollgate/postgres pg",
    });
    expect(await openStore({ db: url }, notInstalled("pg"))).toEqual({
      ok: false,
      exitCode: 2,
      message: "a postgres:// --db needs pg (the PostgreSQL driver @tollgate/postgres uses): npm install @tollgate/postgres pg",
    });
  });

  it("reports an unreachable server in one line without the password (exit 2)", async () => {
    const opened = await openStore({ db: "postgres://tollgate:hunter2@127.0.0.1:1/tollgate", dbSchema: "gw", dbPoolSize: 2 });
    expect(opened).toEqual({ ok: false, exitCode: 2, message: expect.stringMatching(/^cannot connect to PostgreSQL at postgres:\/\/tollgate:\*\*\*@127\.0\.0\.1:1\/tollgate: .*ECONNREFUSED/) });
    if (!opened.ok) {
      expect(opened.message).not.toContain("hunter2");
      expect(opened.message).not.toContain("\n");
    }
  });
});
