/**
 * A local EVM node: anvil from the `@foundry-rs/anvil` npm package (its platform package ships
 * the binary, so nothing downloads at run time), spawned on a loopback interface with an
 * OS-assigned port. Used by the dev chain of `tollgate serve` and usable by test harnesses.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** One of anvil's funded dev accounts, as anvil printed it at start. */
export interface AnvilAccount {
  /** Lower-case address. */
  readonly address: `0x${string}`;
  readonly privateKey: `0x${string}`;
}

/** A running anvil started by {@link startAnvil}. */
export interface AnvilNode {
  /** `http://<host>:<port>`. */
  readonly rpcUrl: string;
  readonly chainId: number;
  readonly port: number;
  /** The OS process id of anvil. */
  readonly pid: number;
  /** The dev accounts anvil funded (by default the 10 of the well-known test mnemonic, 10 000 ETH each), in anvil's order. */
  readonly accounts: readonly AnvilAccount[];
  /**
   * Stops anvil: SIGTERM (anvil then writes `statePath`, when given), SIGKILL after
   * `killAfterMs` (default 5000). Idempotent; resolves once the process has exited.
   */
  stop(options?: { killAfterMs?: number }): Promise<void>;
}

/** Options of {@link startAnvil}. */
export interface StartAnvilOptions {
  /** @default 31337 */
  readonly chainId?: number;
  /** Interface to listen on. @default "127.0.0.1" */
  readonly host?: string;
  /** @default 0 (a free port chosen by the OS; read back from anvil's "Listening on" line) */
  readonly port?: number;
  /** Seconds per block; default: automine (one block per transaction). */
  readonly blockTime?: number;
  /**
   * Keep the chain in this file (anvil `--state`): loaded at start when it exists, written when
   * anvil stops on SIGTERM/SIGINT and every `stateIntervalSeconds`.
   */
  readonly statePath?: string;
  /** With `statePath`: also write the state every that many seconds (anvil `--state-interval`), bounding what a crash loses. */
  readonly stateIntervalSeconds?: number;
  /** Further anvil arguments, appended last. */
  readonly args?: readonly string[];
  /** How long to wait for anvil to listen and answer `eth_chainId`. @default 20000 */
  readonly startTimeoutMs?: number;
}

/**
 * The anvil executable: `ANVIL_BIN` when set, else the binary of the platform package
 * `@foundry-rs/anvil-<platform>-<arch>` (what `@foundry-rs/anvil`'s own launcher runs), else
 * `node_modules/.bin/anvil`, else `anvil` on the PATH.
 */
export function anvilBinaryPath(): string {
  if (process.env["ANVIL_BIN"]) return process.env["ANVIL_BIN"];
  const require = createRequire(import.meta.url);
  const exe = process.platform === "win32" ? "anvil.exe" : "anvil";
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const candidates = [
    () => join(dirname(require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)), "bin", exe),
    () => join(dirname(require.resolve("@foundry-rs/anvil/package.json")), "..", "..", ".bin", exe),
  ];
  for (const candidate of candidates) {
    try {
      const path = candidate();
      if (existsSync(path)) return path;
    } catch {
      // that package is not installed here
    }
  }
  return exe;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;
/** SIGTERM (not SIGKILL: anvil then still writes its state) every anvil still running when this process exits. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const child of running) child.kill("SIGTERM");
  });
}

/** The dev accounts from anvil's start banner ("Available Accounts" and "Private Keys": `(i) 0x…`). */
export function parseAnvilAccounts(banner: string): AnvilAccount[] {
  const addresses = new Map([...banner.matchAll(/^\((\d+)\) (0x[0-9a-fA-F]{40})\b/gm)].map((m) => [m[1], m[2]!.toLowerCase() as `0x${string}`]));
  const keys = [...banner.matchAll(/^\((\d+)\) (0x[0-9a-fA-F]{64})\s*$/gm)];
  return keys.flatMap((m) => {
    const address = addresses.get(m[1]);
    return address ? [{ address, privateKey: m[2]!.toLowerCase() as `0x${string}` }] : [];
  });
}

/**
 * Starts anvil and resolves once its RPC answers `eth_chainId` with `chainId`. Rejects (after
 * stopping the process) when the binary is missing, anvil exits early (e.g. an unreadable state
 * file) or it does not answer within `startTimeoutMs`. The child is SIGTERMed when this process
 * exits; call `stop()` to stop it earlier (and wait for its state file).
 */
export async function startAnvil(options: StartAnvilOptions = {}): Promise<AnvilNode> {
  const chainId = options.chainId ?? 31337;
  const host = options.host ?? "127.0.0.1";
  const startTimeout = options.startTimeoutMs ?? 20_000;
  const args = ["--host", host, "--port", String(options.port ?? 0), "--chain-id", String(chainId)];
  if (options.blockTime !== undefined) args.push("--block-time", String(options.blockTime));
  if (options.statePath !== undefined) args.push("--state", options.statePath);
  if (options.statePath !== undefined && options.stateIntervalSeconds !== undefined) args.push("--state-interval", String(options.stateIntervalSeconds));
  args.push(...(options.args ?? []));

  installExitHook();
  const binary = anvilBinaryPath();
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  // A binary that cannot be spawned emits "error" and never "exit".
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => child.pid === undefined && resolve());
  });
  void exited.then(() => running.delete(child));

  let stopping: Promise<void> | undefined;
  const stop = ({ killAfterMs = 5_000 } = {}): Promise<void> =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
      await exited;
      clearTimeout(timer);
    })());

  let output = "";
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`anvil did not start within ${startTimeout} ms:\n${output}`)), startTimeout);
      const settle = (fn: () => void) => {
        clearTimeout(timer);
        fn();
      };
      child.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        const match = /Listening on \S*:(\d+)/.exec(output);
        if (match) settle(() => resolve(Number(match[1])));
      });
      child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.once("error", (error) =>
        settle(() => reject(new Error(`could not run anvil (${binary}): ${error.message}; install @foundry-rs/anvil or set ANVIL_BIN`))),
      );
      child.once("exit", (code, signal) => settle(() => reject(new Error(`anvil exited at start (code ${code}, signal ${signal}):\n${output.trim()}`))));
    });
    // Keep draining the pipes so anvil never blocks on a full one; what it logs later is dropped.
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.removeAllListeners("data");
      stream.resume();
    }
    const accounts = parseAnvilAccounts(output);
    if (accounts.length === 0) throw new Error(`anvil printed no dev accounts:\n${output}`);
    const rpcUrl = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
    await waitForRpc(rpcUrl, chainId, startTimeout);
    await waitForSignalHandlers(child.pid!, startTimeout);
    return { rpcUrl, chainId, port, pid: child.pid!, accounts, stop };
  } catch (error) {
    await stop({ killAfterMs: 1_000 });
    throw error;
  }
}

/** One JSON-RPC call; rejects on a transport failure or an RPC error. */
export async function rpcCall<T>(rpcUrl: string, method: string, params: unknown[] = [], timeoutMs = 5_000): Promise<T> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** SIGINT and SIGTERM in the caught-signal mask of /proc/<pid>/status. */
const STOP_SIGNALS = (1n << 1n) | (1n << 14n);

/**
 * Waits until anvil catches SIGINT and SIGTERM (Linux: the `SigCgt` mask of /proc/<pid>/status;
 * elsewhere it returns at once). anvil says it listens, and answers RPC, before it installs those
 * handlers: a SIGTERM in between kills it at once, without writing its state file (measured: 9 of
 * 40 stops sent right after "Listening on"), so `stop()` could lose what was done since the start.
 */
async function waitForSignalHandlers(pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/status`, "utf8");
    } catch {
      return; // no procfs: nothing to wait on
    }
    const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status);
    if (!caught || (BigInt(`0x${caught[1]}`) & STOP_SIGNALS) === STOP_SIGNALS) return;
    if (Date.now() > deadline) throw new Error(`anvil (pid ${pid}) did not install its SIGINT/SIGTERM handlers within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function waitForRpc(rpcUrl: string, chainId: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const id = await rpcCall<string>(rpcUrl, "eth_chainId", [], 1_000);
      if (Number(id) === chainId) return;
      lastError = new Error(`eth_chainId answered ${id}, not ${chainId}`);
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`anvil at ${rpcUrl} did not answer eth_chainId: ${String(lastError)}`);
}
