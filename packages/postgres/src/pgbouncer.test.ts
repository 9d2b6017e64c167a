/**
 * The store behind a real PgBouncer in transaction mode (Debian's, started here in front of
 * DATABASE_URL's server): with `preparedStatements: false` the whole conformance suite passes, with
 * group commit and without; with named prepared statements the pooler hands a connection's
 * statements to server connections that never prepared them (PgBouncer before 1.21), which is why
 * the option exists.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeIntent, makeKey, runStoreConformance } from "@tollgate/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresStore } from "./store.js";
import { serverMissing, testDatabases } from "./test-databases.js";

const BIN = [process.env.PGBOUNCER_BIN, "/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find((p): p is string => !!p && existsSync(p));
const [server] = testDatabases("pgbouncer", ["server"]);

/** A free loopback port (PgBouncer takes a fixed one). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

/** Starts PgBouncer in transaction mode in front of `url`, with few server connections (so client connections share them). */
async function startBouncer(url: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const target = new URL(url);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "tollgate-pgbouncer-"));
  const db = decodeURIComponent(target.pathname.slice(1));
  const password = target.password ? ` password=${decodeURIComponent(target.password)}` : "";
  const ini = join(dir, "pgbouncer.ini");
  writeFileSync(
    ini,
    `[databases]
${db} = host=${target.hostname} port=${target.port || 5432} dbname=${db} user=${decodeURIComponent(target.username)}${password}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = any
pool_mode = transaction
default_pool_size = 4
max_client_conn = 400
`,
    { mode: 0o644 },
  );
  // PgBouncer refuses to run as root; it drops to `nobody` itself when started as root.
  const child: ChildProcess = spawn(BIN!, process.getuid?.() === 0 ? ["-u", "nobody", ini] : [ini], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString()));
  const bouncer = `postgres://${target.username}${target.password ? `:${target.password}` : ""}@127.0.0.1:${port}/${db}`;
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: bouncer });
    try {
      await client.connect();
      await client.query("SELECT 1");
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => {});
      if (attempt >= 50 || child.exitCode !== null) throw new Error(`PgBouncer did not start: ${String(error)}\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url: bouncer,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

if (!server) serverMissing("the PostgreSQL store behind PgBouncer");
else if (!BIN) {
  if (process.env.CI)
    it("the PostgreSQL store behind PgBouncer needs pgbouncer", () => {
      throw new Error("pgbouncer is not installed, and CI must run this test: apt-get install pgbouncer (or set PGBOUNCER_BIN)");
    });
  else it.skip("the PostgreSQL store behind PgBouncer (skipped: pgbouncer is not installed; apt-get install pgbouncer)", () => {});
} else {
  let bouncer: Awaited<ReturnType<typeof startBouncer>>;
  beforeAll(async () => {
    bouncer = await startBouncer(process.env.DATABASE_URL!);
  });
  afterAll(() => bouncer?.stop());

  for (const groupCommit of [true, false])
    runStoreConformance(`postgres behind PgBouncer (transaction mode, unnamed statements, group commit ${groupCommit ? "on" : "off"})`, {
      create: () => createPostgresStore({ connectionString: bouncer.url, schema: server.schema(), preparedStatements: false, groupCommit }),
    });

  describe("PgBouncer in transaction mode", () => {
    const reserves = async (preparedStatements: boolean, groupCommit: boolean) => {
      const store = await createPostgresStore({ connectionString: bouncer.url, schema: server.schema(), preparedStatements, groupCommit });
      const key = makeKey({ budgetLimit: 10n ** 9n });
      await store.insertKey(key);
      // Sequential ones, then concurrent ones (in groups, or each on a connection of the pool).
      const results = [];
      for (let i = 0; i < 5; i++) results.push(await store.reserve({ intent: makeIntent(key.keyId, 3n), now: key.createdAt }).catch((e: unknown) => e));
      results.push(
        ...(await Promise.all(
          Array.from({ length: 60 }, () => store.reserve({ intent: makeIntent(key.keyId, 3n), now: key.createdAt }).catch((e: unknown) => e)),
        )),
      );
      const stats = store.groupCommitStats?.();
      const reserved = (await store.getKeyById(key.keyId))?.budgetReserved;
      await store.close();
      return { results, stats, reserved };
    };

    it("unnamed statements: 65 reserves alone and in groups all commit, exactly once each", async () => {
      const { results, stats, reserved } = await reserves(false, true);
      expect(results.filter((r) => (r as { ok?: boolean }).ok === true)).toHaveLength(65);
      expect(reserved).toBe(65n * 3n);
      expect(stats!.groups).toBeGreaterThan(0);
    });

    it("named prepared statements (the default) fail there: the pool's connections share server connections that prepared other names", async () => {
      const { results, reserved } = await reserves(true, false);
      const failed = results.filter((r): r is Error => r instanceof Error);
      expect(failed.length).toBeGreaterThan(0);
      for (const e of failed) expect(e.message).toMatch(/prepared statement "tollgate_s\d+_\d+g?" (already exists|does not exist)/);
      // What failed was not written: the key holds exactly what the successes reserved.
      expect(reserved).toBe(BigInt(results.length - failed.length) * 3n);
    });
  });
}
