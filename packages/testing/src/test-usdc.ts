/**
 * Compiles the test contracts of `@tollgate/core`'s `contracts/` (TestUSDC.sol, TestSmartWallet.sol)
 * with the bundled solc-js compiler (never a remote download). Test-only: the run-time gateway
 * needs only `USDC_ABI` (chain/usdc-abi.ts).
 *
 * The result is cached in `os.tmpdir()/tollgate-solc-<sha256(source + solc version)>.json`, so only
 * the first run on a machine pays the (multi-second) compile; later runs read a small JSON file.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Abi, Hex } from "viem";

export interface CompiledContract {
  readonly abi: Abi;
  /** Creation bytecode, 0x-prefixed. */
  readonly bytecode: Hex;
}

const require = createRequire(import.meta.url);
const memo = new Map<string, CompiledContract>();

/** `contracts/<file>` of the installed `@tollgate/core` (the Solidity sources ship with it). */
export function contractSourcePath(file = "TestUSDC.sol"): string {
  const candidate = join(dirname(require.resolve("@tollgate/core/package.json")), "contracts", file);
  if (!existsSync(candidate)) throw new Error(`${file} not found (expected ${candidate})`);
  return candidate;
}

/** `contracts/TestUSDC.sol`. */
export const testUsdcSourcePath = (): string => contractSourcePath("TestUSDC.sol");

/** Compiles TestUSDC (memoized in-process, cached on disk across processes). */
export const compileTestUsdc = (): CompiledContract => compileTestContract("TestUSDC");

/** Compiles `contracts/<name>.sol`'s contract `name` (memoized in-process, cached on disk across processes). */
export function compileTestContract(name: string): CompiledContract {
  const known = memo.get(name);
  if (known) return known;
  const file = `${name}.sol`;
  const source = readFileSync(contractSourcePath(file), "utf8");
  const solcVersion = (require("solc/package.json") as { version: string }).version;
  const key = createHash("sha256").update(source).update("\0").update(solcVersion).digest("hex");
  const cacheFile = join(tmpdir(), `tollgate-solc-${key}.json`);

  if (existsSync(cacheFile)) {
    try {
      const cached = JSON.parse(readFileSync(cacheFile, "utf8")) as CompiledContract;
      if (Array.isArray(cached.abi) && typeof cached.bytecode === "string" && cached.bytecode.startsWith("0x")) {
        memo.set(name, cached);
        return cached;
      }
    } catch {
      // corrupt cache file: recompile and overwrite
    }
  }

  // solc-js is CommonJS and loads an ~8 MB emscripten module: require it only on a cache miss.
  const solc = require("solc") as { compile(input: string): string };
  const input = {
    language: "Solidity",
    sources: { [file]: { content: source } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: "cancun",
      outputSelection: { [file]: { [name]: ["abi", "evm.bytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) {
    throw new Error(`${file} failed to compile:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  }
  const contract = output.contracts?.[file]?.[name];
  if (!contract) throw new Error(`solc produced no ${name} contract`);
  const compiled: CompiledContract = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };

  // Write atomically (tmp + rename) so parallel vitest workers never read a half-written file.
  const tmp = `${cacheFile}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(compiled));
    renameSync(tmp, cacheFile);
  } catch {
    // caching is best-effort
  }
  memo.set(name, compiled);
  return compiled;
}
