/**
 * System calls per answered call of a server process, counted by `strace -c -f` attached to it
 * (all its threads) for one load window. strace stops the process at every system call, so such
 * a window counts and never times: its throughput is far below the unattached one (and a group
 * commit groups fewer steps), which the caller must say next to the counts.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { ensureCommand } from "../wrk.js";

/** The counts of one window: per system call, and all of them, each divided by the calls answered. */
export interface SyscallCount {
  requests: number;
  perCall: Map<string, number>;
  totalPerCall: number;
}

/** Whether strace can be used (installed from Debian's package if missing). */
export const canTrace = (): boolean => ensureCommand("strace");

/**
 * Attaches strace to `pid`, runs `load` once attached, detaches, and reads the summary strace
 * wrote to `file`. Rejects when strace cannot attach (e.g. ptrace is not allowed).
 */
export async function countSyscalls(pid: number, file: string, load: () => Promise<{ requests: number }>): Promise<SyscallCount> {
  const strace = spawn("strace", ["-c", "-f", "-p", String(pid), "-o", file], { stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise<number | null>((done) => strace.once("exit", (code) => done(code)));
  let stderr = "";
  await new Promise<void>((attached, fail) => {
    strace.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/attached/.test(stderr)) attached();
    });
    void exited.then((code) => fail(new Error(`strace exited (${code}) before attaching: ${stderr.trim()}`)));
  });
  let requests: number;
  try {
    ({ requests } = await load());
  } finally {
    strace.kill("SIGINT");
    await exited;
  }
  const perCall = new Map<string, number>();
  let total = 0;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const fields = line.trim().split(/\s+/);
    // "% time  seconds  usecs/call  calls  [errors]  syscall"; the errors column may be blank.
    if (fields.length < 5 || !/^[\d.]+$/.test(fields[0]!)) continue;
    const calls = Number(fields[3]);
    const name = fields.at(-1)!;
    if (name === "total") total = calls;
    else perCall.set(name, calls / requests);
  }
  return { requests, perCall, totalPerCall: total / requests };
}
