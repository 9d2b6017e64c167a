import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "./testing/cli-process.js";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

function cli(args: string[], env: Record<string, string> = {}): CliProcess {
  const run = startCli(args, env);
  children.push(run.child);
  return run;
}

describe("tollgate CLI", () => {
  it("serves on a free port with the SQLite file under a fresh directory, prints what is enabled, and stops on SIGTERM", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "tollgate-cli-")), "nested", "dir", "t.db");
    const run = cli(["serve", "--port", "0", "--db", db]);
    const url = await run.url();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(existsSync(db)).toBe(true);
    expect(run.out()).toContain(`database: SQLite ${db}`);
    expect(run.out()).toMatch(/catalog: \d+ models/);
    const res = await fetch(`${url}/v1/models?limit=1`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { object: string }).object).toBe("list");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
  });

  it("takes options from the environment; flags win", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "tollgate-cli-")), "t.db");
    const run = cli(["--port", "0"], { TOLLGATE_PORT: "1", TOLLGATE_DB: db, TOLLGATE_CORS_ORIGINS: "https://app.example.com" });
    await run.url();
    expect(run.out()).toContain("cors: https://app.example.com");
    run.child.kill("SIGINT");
    expect(await run.exited).toBe(0);
  });

  it("--internal-secret (or TOLLGATE_INTERNAL_SECRET) lets a host app create keys for the wallet it names; the header alone is refused", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "tollgate-cli-")), "t.db");
    const secret = "cli-test-internal-secret-0123";
    const run = cli(["serve", "--port", "0", "--db", db], { TOLLGATE_INTERNAL_SECRET: secret });
    const url = await run.url();
    expect(run.out()).toContain("wallet auth: verified (SIWE sessions, internal secret");
    expect(run.out()).not.toContain(secret);
    const owner = "0x00000000000000000000000000000000000000c1";
    const body = JSON.stringify({ budgetLimit: "1000", expiresAt: Date.now() + 60_000, networkId: 8453, purpose: "api" });
    const create = (headers: Record<string, string>) => fetch(`${url}/api/keys`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
    const unproven = await create({ "x-session-user-address": owner });
    expect([unproven.status, ((await unproven.json()) as { error: { code: string } }).error.code]).toEqual([401, "wallet_unverified"]);
    const wrong = await create({ "x-session-user-address": owner, "x-internal-secret": `${secret}x` });
    expect([wrong.status, ((await wrong.json()) as { error: { code: string } }).error.code]).toEqual([401, "unauthorized"]);
    const created = await create({ "x-session-user-address": owner, "x-internal-secret": secret });
    expect(created.status).toBe(201);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
  });

  it("--wallet-auth trusted-header believes the owner-wallet header as sent, and says so at start", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "tollgate-cli-")), "t.db");
    const run = cli(["serve", "--port", "0", "--db", db, "--wallet-auth", "trusted-header"]);
    const url = await run.url();
    expect(run.out()).toContain("wallet auth: TRUSTED-HEADER");
    const body = JSON.stringify({ budgetLimit: "1000", expiresAt: Date.now() + 60_000, networkId: 8453, purpose: "api" });
    const res = await fetch(`${url}/api/keys`, { method: "POST", headers: { "content-type": "application/json", "x-session-user-address": "0x00000000000000000000000000000000000000c1" }, body });
    expect(res.status).toBe(201);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
  });

  it("a --config whose provider entry is null is refused with its path (exit 2), never a stack trace and a process that hangs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-cli-"));
    const config = join(dir, "config.json");
    writeFileSync(config, JSON.stringify({ media: { providers: { openai: null } } }));
    // With the dev chain on auto (its default), which reads the providers before the options are checked.
    const run = cli(["serve", "--port", "0", "--db", join(dir, "t.db"), "--config", config], { TOLLGATE_DEV_CHAIN: "auto" });
    expect(await run.exited).toBe(2);
    expect(run.err()).toContain("media.providers.openai");
    expect(run.err()).not.toContain("TypeError");
  });

  it("exits 2 with one line on stderr for a bad value", async () => {
    const run = cli(["serve", "--port", "abc"]);
    expect(await run.exited).toBe(2);
    expect(run.err()).toBe('tollgate: --port must be an integer between 1 and 65535 (0 picks a free port) (got "abc")\n');
  });

  it("migrate applies the migrations of a SQLite file and exits 0; it takes only the database options", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "tollgate-cli-")), "m.db");
    const run = cli(["migrate", "--db", db]);
    expect(await run.exited).toBe(0);
    expect(run.out()).toBe(`Migrations applied; the database is up to date (SQLite ${db}).\n`);
    expect(existsSync(db)).toBe(true);
    const wrong = cli(["migrate", "--port", "1"]);
    expect(await wrong.exited).toBe(2);
    expect(wrong.err()).toBe("tollgate: unknown option --port (see --help)\n");
  });

  it("exits 2 with one line (no stack, no password) when the postgres:// --db cannot be reached, for serve and settle", async () => {
    const db = "postgres://tollgate:hunter2@127.0.0.1:1/tollgate";
    const [serve, settle] = [cli(["serve", "--port", "0", "--db", db]), cli(["settle"], { TOLLGATE_DB: db })];
    expect([await serve.exited, await settle.exited]).toEqual([2, 2]);
    for (const run of [serve, settle]) {
      expect(run.err()).toMatch(/^tollgate: cannot connect to PostgreSQL at postgres:\/\/tollgate:\*\*\*@127\.0\.0\.1:1\/tollgate: [^\n]*ECONNREFUSED[^\n]*\n$/);
      expect(run.err()).not.toContain("hunter2");
    }
  });

  it("exits 2 on --db-schema with a SQLite file", async () => {
    const run = cli(["serve", "--port", "0", "--db", ":memory:", "--db-schema", "gw"]);
    expect(await run.exited).toBe(2);
    expect(run.err()).toBe('tollgate: --db-schema applies only to a postgres:// --db (got the SQLite file ":memory:")\n');
  });

  it("exits 2 on an unknown flag or command", async () => {
    const flag = cli(["serve", "--nope"]);
    const command = cli(["nope"]);
    expect([await flag.exited, await command.exited]).toEqual([2, 2]);
    expect(flag.err()).toBe("tollgate: unknown option --nope (see --help)\n");
    expect(command.err()).toBe('tollgate: unknown command "nope" (see tollgate --help)\n');
  });

  it("prints help for `serve --help` and `help`, listing every option and env variable", async () => {
    const serveHelp = cli(["serve", "--help"]);
    const help = cli(["help"]);
    expect([await serveHelp.exited, await help.exited]).toEqual([0, 0]);
    expect(serveHelp.out()).toContain("Usage: tollgate serve [options]");
    for (const name of ["--port", "--host", "--db <file|url>", "--db-schema", "--db-pool-size", "TOLLGATE_DB_SCHEMA", "postgres://", "--catalog", "--extended-catalog", "--models-service-url", "--cors-origins", "TOLLGATE_PORT", "TOLLGATE_CORS_ORIGINS", "--internal-secret", "TOLLGATE_INTERNAL_SECRET", "--wallet-auth", "TOLLGATE_WALLET_AUTH"])
      expect(serveHelp.out()).toContain(name);
    expect(help.out()).toContain("Commands:");
    expect(help.out()).toContain("--models-service-url");
  });
});
