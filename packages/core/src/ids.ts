/** Id prefixes used by the gateway. */
export type IdPrefix = "key" | "pi" | "fb" | "vid" | "req" | "rcpt" | "ch" | "run" | "ses" | "kev";

/** Mints prefixed ids (`key_…`, `pi_…`). Injectable so tests can have stable ids. */
export interface IdGenerator {
  /** Returns a new id `<prefix>_<random>` that has not been returned before. */
  next(prefix: IdPrefix): string;
}

// Web Crypto calls cost microseconds each; ids and tokens draw from a refilled 4 KiB pool instead.
const POOL_SIZE = 4096;
let pool = new Uint8Array(0);
let poolAt = POOL_SIZE;

/** `n` fresh bytes from the Web Crypto CSPRNG (available on Node 20 and edge runtimes). Each byte is handed out once. */
export function randomBytes(n: number): Uint8Array {
  if (n > POOL_SIZE / 4) return globalThis.crypto.getRandomValues(new Uint8Array(n));
  if (poolAt + n > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(POOL_SIZE));
    poolAt = 0;
  }
  const out = pool.slice(poolAt, poolAt + n);
  poolAt += n;
  return out;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** Lower-case hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]!]!;
  return s;
}

/**
 * Prefixes whose ids are time-ordered: the rows written on every paid call (intents, charges). An
 * index on a random key puts each new row on a random B-tree page, so a commit rewrites one page
 * per row; time-ordered ids append to the same last pages.
 */
const TIME_ORDERED: ReadonlySet<IdPrefix> = new Set(["pi", "ch"]);

/** Random bytes after the time of a time-ordered id: an intent id is a capability (settle and abort take it without a credential), so 128 bits. */
const ORDERED_RANDOM_BYTES: Partial<Record<IdPrefix, number>> = { pi: 16, ch: 10 };

/**
 * Random ids. Most are 12 bytes of CSPRNG output as 24 hex digits (96 bits, unguessable). Intent
 * and charge ids (`pi_`, `ch_`) are the creation time in ms (6 bytes, big-endian, 12 hex digits)
 * then random bits: 128 for an intent (44 hex digits in all), 80 for a charge (32). They sort by
 * creation, and the random part alone is unguessable.
 */
export const randomIds: IdGenerator = {
  next: (prefix) => `${prefix}_${TIME_ORDERED.has(prefix) ? Date.now().toString(16).padStart(12, "0") + toHex(randomBytes(ORDERED_RANDOM_BYTES[prefix] ?? 10)) : toHex(randomBytes(12))}`,
};

/** Sequential ids (`key_000001`), for tests and reproducible examples. */
export function createSequentialIds(): IdGenerator {
  const counters = new Map<string, number>();
  return {
    next(prefix) {
      const n = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, n);
      return `${prefix}_${String(n).padStart(6, "0")}`;
    },
  };
}
