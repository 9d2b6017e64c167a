/**
 * Test and benchmark helper (not exported by the package): a real PgBouncer, Debian's, started in
 * front of a PostgreSQL server in transaction mode.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** The pgbouncer binary: `PGBOUNCER_BIN`, or Debian's; undefined when not installed. */
export const PGBOUNCER_BIN = [process.env.PGBOUNCER_BIN, "/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find((p): p is string => !!p && existsSync(p));

/** A running PgBouncer: the URL to connect through, and how to stop it (its files are removed). */
export interface PgBouncer {
  readonly url: string;
  stop(): Promise<void>;
}

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

/**
 * Starts PgBouncer in transaction mode in front of the server of `url` (on a free loopback port,
 * any client user accepted, four server connections: client connections share them).
 * @throws when pgbouncer is not installed or does not answer within 5 s.
 */
export async function startPgBouncer(url: string): Promise<PgBouncer> {
  if (!PGBOUNCER_BIN) throw new Error("pgbouncer is not installed (apt-get install pgbouncer, or set PGBOUNCER_BIN)");
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
  const child: ChildProcess = spawn(PGBOUNCER_BIN!, process.getuid?.() === 0 ? ["-u", "nobody", ini] : [ini], { stdio: ["ignore", "ignore", "pipe"] });
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
