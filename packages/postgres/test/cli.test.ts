/** The `tollgate` CLI on a real PostgreSQL server: migrations ahead of start, and what start-up says when the database is not usable. */
import { afterAll, expect, it } from "vitest";
import { runCli, startCli } from "../../node/src/testing/cli-process.js";
import { describeWithDatabase, dropSchema, freshSchema } from "./database.js";
import { call } from "./gateway-client.js";

/** Each test runs CLI processes (~3–5 s each; several times that on a loaded 2-core CI machine). */
const CLI_TIMEOUT = 60_000;

describeWithDatabase("tollgate CLI on PostgreSQL", (url) => {
  const [ahead, never] = [freshSchema("tollgate_cli"), freshSchema("tollgate_cli")];
  afterAll(async () => {
    for (const schema of [ahead, never]) await dropSchema(url, schema);
  });

  it("`migrate` applies the migrations ahead (twice is a no-op); `serve --db-migrate off` then starts on that schema", async () => {
    const [first, second] = [await runCli(["migrate", "--db", url, "--db-schema", ahead]), await runCli(["migrate"], { TOLLGATE_DB: url, TOLLGATE_DB_SCHEMA: ahead })];
    expect([first.code, second.code, first.err, second.err]).toEqual([0, 0, "", ""]);
    expect(first.out).toMatch(new RegExp(`^Migrations applied; the database is up to date \\(PostgreSQL .*, schema ${ahead}, pool of 10 connections\\)\\.\\n$`));
    const secret = "postgres-cli-internal-secret";
    const serve = startCli(["serve", "--port", "0", "--db", url, "--db-schema", ahead, "--db-migrate", "off", "--db-pool-size", "3"], { TOLLGATE_INTERNAL_SECRET: secret });
    try {
      const base = await serve.url();
      expect(serve.out()).toContain(`schema ${ahead}, pool of 3 connections`);
      const created = await call(base, "POST", "/api/keys", {
        headers: { "x-session-user-address": "0x00000000000000000000000000000000000000c1", "x-internal-secret": secret },
        body: { budgetLimit: "5000", expiresAt: Date.now() + 60_000, networkId: "8453", purpose: "api" },
      });
      expect([created.status, created.body.budgetLimit]).toEqual([201, "5000"]);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, CLI_TIMEOUT);

  it("`serve --db-migrate off` on a schema never migrated exits 1 and says to run `tollgate migrate`", async () => {
    const run = await runCli(["serve", "--port", "0", "--db", url, "--db-schema", never, "--db-migrate", "off"]);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(new RegExp(`^tollgate: cannot open the PostgreSQL store at .*is not migrated.*run \`tollgate migrate --db … --db-schema ${never}\` first\\)\\n$`));
  }, CLI_TIMEOUT);

  it("an unknown database or a wrong user is one line and exit 2, for serve and settle", async () => {
    const missing = new URL(url);
    missing.pathname = "/tollgate_no_such_database";
    const stranger = new URL(url);
    stranger.username = "tollgate_no_such_user";
    const runs = await Promise.all([runCli(["serve", "--port", "0", "--db", missing.toString()]), runCli(["settle", "--db", stranger.toString()])]);
    expect(runs.map((r) => r.code)).toEqual([2, 2]);
    expect(runs[0]!.err).toMatch(/^tollgate: cannot connect to PostgreSQL at .*tollgate_no_such_database: database "tollgate_no_such_database" does not exist\n$/);
    expect(runs[1]!.err).toMatch(/^tollgate: cannot connect to PostgreSQL at .*tollgate_no_such_user.*: .*tollgate_no_such_user.*\n$/);
  }, CLI_TIMEOUT);
});
