/**
 * Whether `tollgate serve` starts the dev chain: `--dev-chain auto|on|off` against the rest of the
 * configuration. Pure: the same inputs always give the same decision.
 */
import { dirname, join, resolve } from "node:path";
import { z } from "zod";

/** `auto` (the default): only where it cannot be mistaken for a real deployment; `on`: always (a usage error where it cannot apply); `off`: never. */
export type DevChainMode = "auto" | "on" | "off";

/** The `--dev-chain` value: `auto`, `on` or `off` (any case). */
export const devChainModeSchema = z.string().transform((raw, ctx): DevChainMode => {
  const v = raw.trim().toLowerCase();
  if (v === "auto" || v === "on" || v === "off") return v;
  ctx.issues.push({ code: "custom", message: `must be auto, on or off (got ${JSON.stringify(raw)})`, input: raw });
  return z.NEVER;
});

/** What {@link decideDevChain} looks at. */
export interface DevChainInputs {
  readonly mode: DevChainMode;
  /** The gateway options from `--config` and the flags: a chain there means the operator configured one. */
  readonly options: {
    readonly chains?: readonly unknown[] | undefined;
    readonly x402?: unknown;
    readonly dispenser?: unknown;
    readonly settlement?: unknown;
    readonly media?: { readonly providers?: Readonly<Record<string, { readonly type: string }>> | undefined } | undefined;
  };
  /** The `--host` the server listens on (undefined: its default, loopback). */
  readonly host?: string | undefined;
  /** The `--db` value. */
  readonly db: string;
  /** `NODE_ENV`. */
  readonly nodeEnv: string | undefined;
}

/**
 * The decision: `start` with the directory that keeps the chain (beside the SQLite file, so the
 * chain lives and dies with the ledger; undefined for `:memory:`); `skip` with the reason (`auto`
 * only: shown at start); `off` (asked for, nothing to say); or a usage `error`.
 */
export type DevChainDecision =
  { kind: "start"; dir: string | undefined } | { kind: "skip"; reason: string } | { kind: "off" } | { kind: "error"; message: string };

/** Hosts only this machine reaches. */
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|::1|\[::1\])$/i;

const isPostgres = (db: string): boolean => /^postgres(ql)?:\/\//i.test(db);

/** Where a SQLite file's dev chain lives: `<its directory>/dev-chain` (`./data/dev-chain` for PostgreSQL with `on`); undefined for `:memory:`. */
export function devChainDir(db: string): string | undefined {
  if (db === ":memory:") return undefined;
  return isPostgres(db) ? resolve("data", "dev-chain") : join(dirname(resolve(db)), "dev-chain");
}

/**
 * Decides per the rules: `off` never starts it. A configured chain (`chains`, `x402`, `dispenser`
 * or `settlement` in the options) or `NODE_ENV=production` turns `auto` off, and makes `on` a
 * usage error (the dev chain never runs in a production configuration). `auto` also stays off on
 * PostgreSQL (a database several instances share, each of which would start its own chain);
 * `on` starts it there anyway. A provider other than `local` turns `auto` off and makes `on` an
 * error too: the dev chain's x402 and dispenser hand out worthless test USDC, which must never pay
 * for a real upstream. `auto` also stays off on a host beyond loopback (anyone who can reach the
 * server could claim that test money).
 */
export function decideDevChain(inputs: DevChainInputs): DevChainDecision {
  const { mode, options, db, nodeEnv } = inputs;
  if (mode === "off") return { kind: "off" };
  const configured = (options.chains?.length ?? 0) > 0 || options.x402 !== undefined || options.dispenser !== undefined || options.settlement !== undefined;
  const production = nodeEnv === "production";
  const real = Object.entries(options.media?.providers ?? {}).find(([, p]) => (p as { type?: unknown } | null)?.type !== "local")?.[0];
  if (mode === "on") {
    if (real !== undefined)
      return { kind: "error", message: `--dev-chain on cannot be combined with a real provider (${real} in --config): its test USDC would pay for real upstream calls` };
    if (configured)
      return {
        kind: "error",
        message: "--dev-chain on cannot be combined with a configured chain (chains, x402, dispenser or settlement in --config): drop one of them",
      };
    if (production) return { kind: "error", message: "--dev-chain on is refused with NODE_ENV=production: the dev chain holds test money only" };
    return { kind: "start", dir: devChainDir(db) };
  }
  if (configured) return { kind: "skip", reason: "a chain is configured" };
  if (production) return { kind: "skip", reason: "NODE_ENV=production" };
  if (isPostgres(db)) return { kind: "skip", reason: "the database is PostgreSQL; --dev-chain on starts one anyway" };
  if (real !== undefined) return { kind: "skip", reason: `a real provider is configured (${real}): test USDC must not pay for its calls` };
  if (inputs.host !== undefined && !LOOPBACK.test(inputs.host)) return { kind: "skip", reason: `listening on ${inputs.host}, beyond this machine; --dev-chain on starts one anyway` };
  return { kind: "start", dir: devChainDir(db) };
}
