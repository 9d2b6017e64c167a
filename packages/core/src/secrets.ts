/** Secret comparison shared by every check of an operator secret. */
import { sha256, stringToBytes } from "viem";

const digest = (text: string) => sha256(stringToBytes(text), "bytes");

/** Compares two secrets in time independent of where they differ (both are hashed to 32 bytes first). */
export function secretsEqual(a: string, b: string): boolean {
  const x = digest(a);
  const y = digest(b);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}
