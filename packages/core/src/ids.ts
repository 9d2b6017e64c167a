/** Id prefixes used by the gateway. */
export type IdPrefix = "key" | "pi" | "fb" | "vid" | "req" | "rcpt" | "ch" | "run" | "ses";

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

/** Lower-case hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

/** Random ids: 12 bytes of CSPRNG output as hex (96 bits, unguessable). */
export const randomIds: IdGenerator = {
  next: (prefix) => `${prefix}_${toHex(randomBytes(12))}`,
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
