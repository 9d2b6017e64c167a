/**
 * The anvil a previous server of the same data directory left running: when that server was
 * killed outright (SIGKILL, a crash of the machine's supervisor), its anvil lives on and keeps
 * writing the state file. The next start must stop it first (SIGTERM: it then writes its latest
 * state, which the new anvil loads), or refuse when its server is still alive (two servers on one
 * data directory).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** What the OS says about a process: its parent and its command line; undefined when it does not exist (or cannot be inspected). */
export function inspectProcess(pid: number): { ppid: number; command: string } | undefined {
  try {
    if (process.platform === "linux") {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      return { ppid, command: readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ") };
    }
    if (process.platform === "win32") return undefined;
    const line = execFileSync("ps", ["-o", "ppid=,command=", "-p", String(pid)], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const m = /^(\d+)\s+(.*)$/.exec(line);
    return m ? { ppid: Number(m[1]), command: m[2]! } : undefined;
  } catch {
    return undefined;
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** The outcome of {@link stopStrayAnvil}. */
export type StrayOutcome = { kind: "none" } | { kind: "stopped"; pid: number } | { kind: "in-use"; pid: number; serverPid: number };

/**
 * Looks at the anvil recorded for `statePath`. Not running (or another program under that pid):
 * `none`. Running and its server (`serverPid`, still its parent) alive: `in-use`, untouched.
 * Otherwise an orphan: SIGTERM, then SIGKILL after `killAfterMs`; `stopped` once it is gone.
 */
export async function stopStrayAnvil(recorded: { pid: number; serverPid: number } | undefined, statePath: string, killAfterMs = 5_000): Promise<StrayOutcome> {
  if (!recorded) return { kind: "none" };
  const info = inspectProcess(recorded.pid);
  if (!info || !/anvil/.test(info.command) || !info.command.includes(statePath)) return { kind: "none" };
  if (info.ppid === recorded.serverPid && alive(recorded.serverPid)) return { kind: "in-use", ...recorded };
  process.kill(recorded.pid, "SIGTERM");
  const deadline = Date.now() + killAfterMs;
  while (alive(recorded.pid)) {
    if (Date.now() > deadline) {
      process.kill(recorded.pid, "SIGKILL");
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { kind: "stopped", pid: recorded.pid };
}
