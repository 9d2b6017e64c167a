/**
 * The dev chain in `tollgate serve`: decides from `--dev-chain` and the rest of the configuration
 * whether to start it, starts it, adds its gateway options, and says so at start.
 */
import { existsSync } from "node:fs";
import { isAbsolute, relative } from "node:path";
import { formatUsdc, type GatewayOptions } from "@tollgate/core";
import { startDevChain, type DevChain } from "./dev-chain.js";
import { decideDevChain, type DevChainMode } from "./mode.js";

/** The dev chain as `tollgate serve` uses it. */
export interface ServeDevChain {
  /** The gateway options to serve with: the given ones, plus `chains`, `x402`, `dispenser` and `settlement` when the dev chain runs. */
  readonly options: GatewayOptions;
  /** The running chain, if any. */
  readonly chain: DevChain | undefined;
  /** Lines for the start banner (each printed indented under "listening on"), given the server's base URL. */
  describe(url: string): string[];
  /** Stops the chain (anvil writes its state file first); a no-op when none runs. */
  stop(): Promise<void>;
}

/** {@link prepareDevChain}'s outcome: the dev chain (possibly none), or a problem with the CLI exit code (2 usage, 1 failure). */
export type PrepareDevChainResult = ({ ok: true } & ServeDevChain) | { ok: false; exitCode: 1 | 2; message: string };

const none = (options: GatewayOptions, lines: string[] = []): PrepareDevChainResult => ({
  ok: true,
  options,
  chain: undefined,
  describe: () => lines,
  stop: async () => {},
});

/**
 * Starts the dev chain when {@link decideDevChain} says so. A failure to start is fatal with
 * `--dev-chain on` (exit 1) and a warning line with `auto` (the gateway then serves without a
 * chain, as it would have without the dev chain).
 */
export async function prepareDevChain(
  config: { devChain: DevChainMode; db: string; host?: string | undefined },
  options: GatewayOptions,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<PrepareDevChainResult> {
  const decision = decideDevChain({ mode: config.devChain, options, db: config.db, nodeEnv: env["NODE_ENV"], host: config.host });
  if (decision.kind === "error") return { ok: false, exitCode: 2, message: decision.message };
  if (decision.kind === "off") return none(options);
  if (decision.kind === "skip") return none(options, [`dev chain: off (${decision.reason})`]);
  let chain: DevChain;
  try {
    chain = await startDevChain({ dir: decision.dir, internalSecret: options.internalSecret });
  } catch (error) {
    const reason = (error as Error).message.split("\n")[0];
    if (config.devChain === "on") return { ok: false, exitCode: 1, message: `the dev chain did not start: ${reason}` };
    return none(options, [`dev chain: could not start (${reason}); x402, the dispenser and settlement stay off (--dev-chain off skips it)`]);
  }
  return { ok: true, options: { ...options, ...chain.gatewayOptions }, chain, describe: (url) => devChainBanner(chain, url), stop: () => chain.stop() };
}

/** The repository's walk script (absent where the CLI runs from an installed package). */
const WALK_SCRIPT = "examples/dev-chain-walk.ts";

/** `path` relative to the working directory when it is inside it. */
const shortPath = (path: string): string => {
  const rel = relative(process.cwd(), path);
  return rel.startsWith("..") || isAbsolute(rel) ? path : rel;
};

/** The start banner of a running dev chain: what it is, where, and the commands to use it. */
export function devChainBanner(chain: DevChain, url: string): string[] {
  const { roles } = chain;
  const secret = chain.secretGenerated ? chain.internalSecret : "<your internal secret>";
  const claim = JSON.stringify({ address: "0xYOUR_ADDRESS", chainId: chain.chainId });
  return [
    `dev chain: ON — a local anvil with TEST money only (TestUSDC: worthless, anyone can mint it), ready in ${Math.round(chain.readyMs)} ms`,
    `  rpc         ${chain.rpcUrl} (chain ${chain.chainId}), ${chain.statePath ? `${chain.fresh ? "new" : "resumed"}; kept in ${chain.statePath} beside the ledger` : "not kept (in-memory database)"}`,
    `  usdc        ${chain.usdc}`,
    `  dispenser   ${roles.dispenser} holds ${formatUsdc(chain.dispenserBalance)} (test money); claim: curl -X POST ${url}/api/dispenser/claim -H 'content-type: application/json' -d '${claim}'`,
    `  x402        paid to ${roles.payee}, settled by the local facilitator ${roles.facilitator}`,
    `  settlement  wallets approve the spender ${roles.spender} before creating keys on chain ${chain.chainId} (their budgets need the allowance); treasury ${roles.payee}; batch: curl -X POST ${url}/api/settlement/batch -H 'x-internal-secret: ${secret}'`,
    ...(chain.recordPath && existsSync(WALK_SCRIPT)
      ? [`  try it      npx tsx ${WALK_SCRIPT} ${url} ${shortPath(chain.recordPath)} (claim, an x402-paid call, a key-billed call, a settlement batch)`]
      : []),
    `  real chain  put chains, x402, dispenser and settlement in a --config file (see docs/x402.md); --dev-chain off skips the dev chain`,
  ];
}
