#!/usr/bin/env node
// Smoke test of the built examples (run after `npm run build`): each examples/<name>/dist/server.js
// starts on a free port with a temporary SQLite file, must print its listening line, answer
// GET /gateway/v1/models?limit=1 with 200 and one model, and exit 0 on SIGTERM. Any miss exits 1.
// The built examples import the workspace packages through their dist (the "import" condition).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const EXAMPLES = ["node", "express", "fastify"];
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

/** Rejects after `ms` with `message`; the timer does not keep the process alive. */
function timeout(ms, message) {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(message)), ms).unref());
}

async function smoke(name) {
  const dir = join(root, "examples", name);
  const entry = join(dir, "dist", "server.js");
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);
  const tmp = mkdtempSync(join(tmpdir(), `tollgate-smoke-${name}-`));
  const child = spawn(process.execPath, [entry], {
    cwd: dir,
    env: { ...process.env, PORT: "0", DB: join(tmp, "smoke.db") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = once(child, "exit");
  try {
    const url = await Promise.race([
      new Promise((resolve, reject) => {
        child.stdout.on("data", () => {
          const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
          if (match) resolve(match[1]);
        });
        child.once("exit", (code, signal) => reject(new Error(`exited early (code ${code}, signal ${signal})`)));
      }),
      timeout(START_TIMEOUT_MS, `no listening line within ${START_TIMEOUT_MS} ms`),
    ]);
    const res = await fetch(`${url}/gateway/v1/models?limit=1`, { signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET /gateway/v1/models?limit=1 answered ${res.status}: ${text.slice(0, 300)}`);
    const count = JSON.parse(text).data?.length;
    if (count !== 1) throw new Error(`GET /gateway/v1/models?limit=1 returned ${count} models, expected 1`);
    child.kill("SIGTERM");
    const [code, signal] = await Promise.race([exited, timeout(STOP_TIMEOUT_MS, `did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM`)]);
    if (code !== 0) throw new Error(`exited with code ${code} (signal ${signal}) after SIGTERM`);
    return url;
  } catch (error) {
    const cause = error.cause ? ` (${error.cause.message ?? error.cause})` : "";
    error.message = `${error.message}${cause}\n--- output of ${name} ---\n${output}`;
    throw error;
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    rmSync(tmp, { recursive: true, force: true });
  }
}

let failed = false;
for (const name of EXAMPLES) {
  try {
    const url = await smoke(name);
    console.log(`ok   examples/${name} (${url})`);
  } catch (error) {
    failed = true;
    console.error(`FAIL examples/${name}: ${error.message}`);
  }
}
if (failed) process.exit(1);
