/** The cap on a wallet's live keys, as every store applies it in `insertKey`. */
import { GatewayError } from "../errors.js";
import type { KeyRecord } from "./types.js";

/** Whether `key` is live at `at` (neither revoked nor expired): what `liveLimit` counts and a session key must be. */
export function isLiveKey(key: Pick<KeyRecord, "revokedAt" | "expiresAt">, at: number): boolean {
  return key.revokedAt === undefined && key.expiresAt > at;
}

/** The refusal of a key insert past `liveLimit`: 409 `too_many_keys` with `details.limit`. */
export function tooManyKeys(owner: string, limit: number): GatewayError {
  return new GatewayError(
    "too_many_keys",
    `Wallet ${owner} already holds ${limit} live service keys, the most allowed; revoke one, or wait for one to expire.`,
    {
      details: { limit },
    },
  );
}
