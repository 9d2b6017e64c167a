/**
 * Revoking a key from the dashboard with the wallet's session, through the typed client:
 * `client.keys.revoke` sends no key, so the gateway takes the session cookie as the owner's proof.
 * Tested against a real gateway in key-revoke.test.ts.
 */
import type { RevokedKey, TollgateClient } from "@tollgate/client";
import type { GovernedKey } from "./key-admin";

/** Whether the page offers "Revoke" for the key: a live key (active, or active with its budget used up). */
export function canRevoke(key: Pick<GovernedKey, "status">): boolean {
  return key.status === "active" || key.status === "exhausted";
}

/**
 * Revokes the signed-in wallet's key `keyId` (every token of the key is refused from then on).
 * Rejects with the client's errors: 401 once the session has ended, 403 for another wallet's key,
 * 404 for an unknown one.
 */
export function revokeKey(client: TollgateClient, keyId: string, signal?: AbortSignal): Promise<RevokedKey> {
  return client.keys.revoke(keyId, { signal });
}

/** The key's view after the revocation the gateway answered (`revokedAt`): status `revoked`, nothing else changed. */
export function revokedView(key: GovernedKey, revoked: Pick<RevokedKey, "revokedAt">): GovernedKey {
  return { ...key, status: "revoked", revokedAt: revoked.revokedAt };
}
