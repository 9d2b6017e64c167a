// Starts the BUILT `tollgate` CLI (packages/node/dist/cli.js) on a free port, checks that the
// catalog answers and that a key can be created (a store write, proven with the internal secret
// from TOLLGATE_INTERNAL_SECRET; the owner-wallet header alone is refused), and stops it: once on a temporary
// SQLite file, and — when DATABASE_URL is set (CI) — once on PostgreSQL in a throwaway schema,
// which also proves the built CLI loads the built @tollgate/postgres. Run after `npm run build`.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

const OWNER = "0x00000000000000000000000000000000000000a1";
/** The host app's secret, given to the CLI as TOLLGATE_INTERNAL_SECRET: it proves the wallet named in x-session-user-address. */
const INTERNAL_SECRET = `smoke-internal-secret-${process.pid}-0123456789`;

async function smoke(label, dbArgs) {
  const child = spawn(process.execPath, ["packages/node/dist/cli.js", "serve", "--port", "0", ...dbArgs], {
    env: { ...process.env, TOLLGATE_INTERNAL_SECRET: INTERNAL_SECRET },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  try {
    const url = await new Promise((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error("the CLI did not print its URL within 20 s")), 20_000);
      child.stdout.on("data", (chunk) => {
        out += chunk;
        const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
        if (m) resolve(m[0]), clearTimeout(timer);
      });
      child.on("exit", (code) => reject(new Error(`the CLI exited early with code ${code}`)));
    });
    const models = await fetch(`${url}/v1/models?limit=1`);
    const body = await models.json();
    if (models.status !== 200 || body.object !== "list" || body.data.length !== 1) throw new Error(`unexpected answer ${models.status} ${JSON.stringify(body).slice(0, 200)}`);
    const createKey = (headers) =>
      fetch(`${url}/api/keys`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-session-user-address": OWNER, ...headers },
        body: JSON.stringify({ budgetLimit: "1000", expiresAt: Date.now() + 86_400_000, networkId: 8453, purpose: "api" }),
      });
    const unproven = await createKey({});
    const refusal = await unproven.json();
    if (unproven.status !== 401 || refusal.error?.code !== "wallet_unverified")
      throw new Error(`POST /api/keys with the wallet header alone answered ${unproven.status} ${JSON.stringify(refusal).slice(0, 200)}, expected 401 wallet_unverified`);
    const key = await createKey({ "x-internal-secret": INTERNAL_SECRET });
    if (key.status !== 201) throw new Error(`POST /api/keys answered ${key.status}: ${(await key.text()).slice(0, 200)}`);
    console.log(`smoke: built CLI on ${label} served ${body.total} models and created a key at ${url}`);
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

let failed = false;
const dir = mkdtempSync(join(tmpdir(), "tollgate-smoke-"));
try {
  // Without the dev chain: its settlement would refuse a key on chain 8453, and one on its own chain
  // needs a funded wallet (the dev chain's own flow is proven by examples/dev-chain-walk.ts in CI).
  await smoke("SQLite", ["--db", join(dir, "smoke.db"), "--dev-chain", "off"]);
} catch (error) {
  failed = true;
  console.error(`smoke (SQLite): ${error.message}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const url = process.env.DATABASE_URL;
if (url) {
  const schema = `smoke_${process.pid}_${Date.now().toString(36)}`;
  try {
    await smoke("PostgreSQL", ["--db", url, "--db-schema", schema]);
  } catch (error) {
    failed = true;
    console.error(`smoke (PostgreSQL): ${error.message}`);
  } finally {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
} else {
  console.log("smoke: DATABASE_URL unset, the PostgreSQL run is skipped");
}
process.exit(failed ? 1 : 0);
