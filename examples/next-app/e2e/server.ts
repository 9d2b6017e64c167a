/** Starts and stops the built app with `next start` for the browser test. */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { createRequire } from "node:module";
import { join } from "node:path";

/** A running `next start`; `stop` ends its whole process group and is safe to call twice. */
export interface AppServer {
  url: string;
  /** Everything the server printed so far (for failure reports). */
  output(): string;
  stop(): Promise<void>;
}

// Every server started and not yet stopped, so a signal handler can stop one still starting up.
const running = new Set<() => Promise<void>>();

/** Stops every server {@link startApp} started (also those not ready yet). */
export async function stopAllApps(): Promise<void> {
  await Promise.allSettled([...running].map((stop) => stop()));
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once("exit", () => resolve()));
}

/**
 * Runs `next start` for the app in `appDir` on a free local port with `env` added, and resolves
 * once the gateway answers `GET /v1/models`.
 * @throws Error when the app is not built, the server exits, or it is not ready in `timeoutMs`.
 */
export async function startApp(appDir: string, env: Record<string, string>, timeoutMs = 60_000): Promise<AppServer> {
  if (!existsSync(join(appDir, ".next", "BUILD_ID")))
    throw new Error(`No production build in ${appDir}/.next: run \`npm run build -w examples/next-app\` first.`);
  const port = await freePort();
  const nextBin = createRequire(join(appDir, "package.json")).resolve("next/dist/bin/next");
  // Own process group: `next start` runs the server in a child process, and stop() must end both.
  const child = spawn(process.execPath, [nextBin, "start", "--port", String(port), "--hostname", "127.0.0.1"], {
    cwd: appDir,
    // A production deployment names the host users sign in at (without it, sign-in answers 503).
    env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1", TOLLGATE_AUTH_DOMAINS: `127.0.0.1:${port}`, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  child.stdout?.on("data", (c: Buffer) => (log += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (log += c.toString()));

  const stop = async () => {
    running.delete(stop);
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    const group = -child.pid;
    try {
      process.kill(group, "SIGTERM");
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(group, "SIGKILL");
      } catch {
        // already gone
      }
    }, 5000);
    await exited(child);
    clearTimeout(timer);
  };

  running.add(stop);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`next start exited (${child.exitCode ?? child.signalCode}):\n${log}`);
    const ready = await fetch(`${url}/v1/models?limit=1`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return { url, output: () => log, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`next start was not ready after ${timeoutMs} ms:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
