/**
 * `<data dir>/dev-chain/dev-chain.json`: what the dev chain of this data directory is (token
 * address, the generated internal secret, the current RPC URL, the anvil process). Rewritten at
 * each start; read back by the next start and by scripts such as examples/dev-chain-walk.ts.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const address = z
  .string()
  .regex(/^0x[0-9a-f]{40}$/)
  .transform((v) => v as `0x${string}`);

/** The zod schema of the record file. */
export const devChainRecordSchema = z.object({
  version: z.literal(1),
  chainId: z.number().int().positive(),
  /** The RPC URL of the running (or last) anvil: its port changes at every start. */
  rpcUrl: z.string(),
  /** The TestUSDC contract. */
  usdc: address,
  /** The generated secret of `POST /api/settlement/batch` (and `x-internal-secret`): made once per data directory, used unless the server is given one. */
  internalSecret: z.string().min(16),
  /** Addresses of the dev accounts in each role. */
  roles: z.object({ facilitator: address, dispenser: address, spender: address, payee: address }),
  /** The anvil process and the server that started it, to recognise an orphan after a crash. */
  anvil: z.object({ pid: z.number().int().positive(), serverPid: z.number().int().positive() }).optional(),
});

/** The content of `dev-chain.json`. */
export type DevChainRecord = z.output<typeof devChainRecordSchema>;

/** The file name of the record inside the dev-chain directory. */
export const RECORD_FILE = "dev-chain.json";

/** The record of `dir`, or undefined when it is missing or unreadable (a fresh start then). */
export function readDevChainRecord(dir: string): DevChainRecord | undefined {
  const path = join(dir, RECORD_FILE);
  if (!existsSync(path)) return undefined;
  try {
    const parsed = devChainRecordSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the record atomically (temporary file + rename), readable by the owner only: it holds the internal secret. */
export function writeDevChainRecord(dir: string, record: DevChainRecord): void {
  const path = join(dir, RECORD_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
