// Starts the BUILT `tollgate` CLI (packages/node/dist/cli.js) on a free port with a temporary
// SQLite file, checks that the catalog answers, and stops it. Run after `npm run build`.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "tollgate-smoke-"));
const child = spawn(process.execPath, ["packages/node/dist/cli.js", "serve", "--port", "0", "--db", join(dir, "smoke.db")], { stdio: ["ignore", "pipe", "inherit"] });
const fail = (msg) => {
  console.error(`smoke: ${msg}`);
  child.kill("SIGKILL");
  process.exit(1);
};
const timer = setTimeout(() => fail("the CLI did not print its URL within 20 s"), 20_000);
let out = "";
child.stdout.on("data", async (chunk) => {
  out += chunk;
  const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
  if (!m || timer._done) return;
  timer._done = true;
  clearTimeout(timer);
  const res = await fetch(`${m[0]}/v1/models?limit=1`);
  const body = await res.json();
  if (res.status !== 200 || body.object !== "list" || body.data.length !== 1) fail(`unexpected answer ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  child.kill("SIGTERM");
  child.on("exit", () => {
    rmSync(dir, { recursive: true, force: true });
    console.log(`smoke: built CLI served ${body.total} models at ${m[0]}`);
  });
});
child.on("exit", (code) => {
  if (!timer._done) fail(`the CLI exited early with code ${code}`);
});
