/**
 * Test helper (not part of the package build): the `tollgate` CLI as a real child process, run
 * from its TypeScript sources (tsx with the `tollgate-source` condition). Used by the CLI tests
 * here and by the Postgres multi-instance tests.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(fileURLToPath(new URL(".", import.meta.url)), "../../../..");

/** A running (or finished) `tollgate` process. */
export interface CliProcess {
  readonly child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  out(): string;
  err(): string;
  /** The URL from the "listening on" line; rejects when the process exits first or after `timeoutMs`. */
  url(timeoutMs?: number): Promise<string>;
  /** SIGTERM (SIGINT to the group with `npmStart`), then SIGKILL after 5 s; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Options of {@link startCli}. */
export interface StartCliOptions {
  /**
   * Run it exactly as `npm start` does (npm → tsx → `cli.ts serve`), in a process group of its
   * own: `stop()` then sends SIGINT to the whole group, as Ctrl-C in a terminal does. `args` are
   * the options of `serve` (a leading `"serve"` is dropped). @default false
   */
  readonly npmStart?: boolean;
}

/** The npm CLI script: the one running this process when there is one (`npm test`, `npx vitest`). */
const npmCommand = (): string[] => (process.env["npm_execpath"] ? [process.execPath, process.env["npm_execpath"]] : ["npm"]);

/**
 * Starts `tollgate <args>` with `env` added to this process's environment. The dev chain is off
 * (`TOLLGATE_DEV_CHAIN=off`) unless `env` or `args` ask for it, so a test sees the gateway its
 * own options describe.
 */
export function startCli(args: readonly string[], env: Record<string, string> = {}, options: StartCliOptions = {}): CliProcess {
  const group = options.npmStart === true;
  const [command, ...argv] = group
    ? [...npmCommand(), "start", "--", ...(args[0] === "serve" ? args.slice(1) : args)]
    : [process.execPath, "--import", "tsx", "--conditions=tollgate-source", "packages/node/src/cli.ts", ...args];
  const child = spawn(command!, argv, {
    cwd: repoRoot,
    env: { ...process.env, TOLLGATE_DEV_CHAIN: "off", ...env, NODE_OPTIONS: "" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: group,
  });
  const signal = (name: NodeJS.Signals) => {
    try {
      if (group) process.kill(-child.pid!, name);
      else child.kill(name);
    } catch {
      // the group is already gone
    }
  };
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (c: string) => (stdout += c));
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return {
    child,
    exited,
    out: () => stdout,
    err: () => stderr,
    async url(timeoutMs = 45_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = /listening on (http:\/\/[^\s"]+)/.exec(stdout);
        if (m) return m[1]!;
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`tollgate ${args[0]} did not start (exit ${child.exitCode}): ${stderr || stdout}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        signal(group ? "SIGINT" : "SIGTERM");
        const timer = setTimeout(() => signal("SIGKILL"), 5_000);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
}

/** Runs `tollgate <args>` to its end. */
export async function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  const run = startCli(args, env);
  const code = await run.exited;
  return { code, out: run.out(), err: run.err() };
}
