/**
 * `GET /api/session`: the active session key of the proven wallet on a chain, in the shape of the
 * origin's `ActiveSessionMetadata` (what `@compose-market/sdk`'s `keys.getActive` reads). The
 * token is never returned: only its hash is stored.
 */
import { z } from "zod";
import { WALLET_PROOF } from "../http/wallet-proof.js";
import { json } from "../http/respond.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { walletStatusAuth } from "../settlement/routes.js";
import type { KeyRecord } from "../store/types.js";
import { remainingOf } from "./view.js";

/** `expiringSoon` below this many seconds left (the origin's 5 minutes). */
export const EXPIRING_SOON_SECONDS = 300;

/** The answer of `GET /api/session`. Amounts are decimal strings of atomic units. */
export type ActiveSession =
  | { hasSession: false; reason: string }
  | {
      hasSession: true;
      keyId: string;
      budgetLimit: string;
      budgetUsed: string;
      /** Reserved by authorized payment intents (`budgetReserved` of the key view). */
      budgetLocked: string;
      budgetRemaining: string;
      /** Unix ms. */
      expiresAt: number;
      chainId: number;
      name?: string;
      status: {
        /** Unexpired with something left to reserve. */
        isActive: boolean;
        isExpired: boolean;
        /** Whole seconds to expiry, never negative. */
        expiresInSeconds: number;
        /** remaining / limit × 100, floored to hundredths (integer math on the atomic amounts). */
        budgetPercentRemaining: number;
        warnings: {
          /** Nothing left to reserve. */
          budgetDepleted: boolean;
          /** Less than 20 % of the limit remaining (exact comparison). */
          budgetLow: boolean;
          /** Under {@link EXPIRING_SOON_SECONDS} left. */
          expiringSoon: boolean;
          expired: boolean;
        };
      };
    };

/** remaining / limit in percent, floored to 2 decimals, computed on bigints. */
export function percentRemaining(remaining: bigint, limit: bigint): number {
  if (limit <= 0n || remaining <= 0n) return 0;
  return Number((remaining * 10_000n) / limit) / 100;
}

/** The session view of a live session key at `now`. */
export function activeSessionView(key: KeyRecord, now: number): ActiveSession {
  const remaining = remainingOf(key);
  const isExpired = key.expiresAt <= now;
  const expiresInSeconds = Math.max(0, Math.floor((key.expiresAt - now) / 1000));
  return {
    hasSession: true,
    keyId: key.keyId,
    budgetLimit: key.budgetLimit.toString(),
    budgetUsed: key.budgetUsed.toString(),
    budgetLocked: key.budgetReserved.toString(),
    budgetRemaining: remaining.toString(),
    expiresAt: key.expiresAt,
    chainId: key.chainId,
    ...(key.name === undefined ? {} : { name: key.name }),
    status: {
      isActive: !isExpired && key.revokedAt === undefined && remaining > 0n,
      isExpired,
      expiresInSeconds,
      budgetPercentRemaining: percentRemaining(remaining, key.budgetLimit),
      warnings: {
        budgetDepleted: remaining <= 0n,
        budgetLow: remaining * 5n < key.budgetLimit,
        expiringSoon: !isExpired && expiresInSeconds < EXPIRING_SOON_SECONDS,
        expired: isExpired,
      },
    },
  };
}

/** The route table of `GET /api/session` (registered by `keyRoutes`). */
export function sessionRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: "/api/session",
      tag: "keys",
      summary:
        "The active session key of the proven wallet on the chain in x-chain-id (or ?chainId, else the default chain): budget (limit, used, locked, remaining), expiry and warnings; never its token. {hasSession:false, reason} when there is none.",
      query: z.object({ chainId: z.string().optional() }),
      authenticate: walletStatusAuth,
      security: WALLET_PROOF,
      handle: async ({ auth, gateway }) => {
        if (auth.chainId === undefined)
          return json({ hasSession: false, reason: "No chain given (send x-chain-id) and this gateway has no default chain." } satisfies ActiveSession);
        const key = await gateway.services.keys.activeSession(auth.wallet, auth.chainId);
        if (!key) return json({ hasSession: false, reason: `No active session key for this wallet on chain ${auth.chainId}.` } satisfies ActiveSession);
        return json(activeSessionView(key, gateway.clock.now()));
      },
    }),
  ];
}
