/**
 * Key governance routes: `PATCH /api/keys/{keyId}` (update), `POST /api/keys/{keyId}/rotate`
 * and `GET /api/keys/{keyId}/events`.
 *
 * Who may do what: changing a key's money, models, expiry or rate needs the owner's wallet proven
 * without a service key (a wallet session, or the internal secret with the wallet header) — a key
 * that could raise its own limit would be worth the whole wallet. A key may rename itself. Rotation
 * needs the owner's proof too; reading the events also accepts a live key of the same owner.
 */
import { z } from "zod";
import type { GatewayContext } from "../context.js";
import { GatewayError } from "../errors.js";
import { json } from "../http/respond.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { amount, clampedInt, optionalText, unixMs } from "../http/schemas.js";
import { chainOfProof, proveWallet, WALLET_PROOF, WALLET_PROOF_NO_KEY, type ProvenWallet } from "../http/wallet-proof.js";
import type { GatewayRequest } from "../http/types.js";
import type { KeyPatch, KeyRecord } from "../store/types.js";
import { checkModelPatterns, DEFAULT_ROTATION_GRACE_MS, MAX_ROTATION_GRACE_MS, type Actor } from "./governance.js";
import { BUDGET_PERIODS, rolled } from "./period.js";
import { bearerToken, looksLikeToken } from "./token.js";
import { budgetHeaders, keyView } from "./view.js";

/** The governance fields shared by key creation and update. */
export const governanceFields = {
  budgetPeriod: z.enum(BUDGET_PERIODS),
  models: z.array(z.string().trim().min(1).max(200)).min(1, "must list at least one model (omit it to allow every model)").max(100),
  modelBudgets: z
    .record(z.string().trim().min(1).max(200), amount({ allowZero: true }))
    .refine((r) => Object.keys(r).length <= 100, "must have at most 100 entries"),
};

const patchBody = z.strictObject({
  name: z.string().trim().min(1).max(100).nullable().optional(),
  budgetLimit: amount().optional(),
  expiresAt: unixMs.optional(),
  budgetPeriod: governanceFields.budgetPeriod.nullable().optional(),
  models: governanceFields.models.nullable().optional(),
  modelBudgets: governanceFields.modelBudgets.nullable().optional(),
  rateLimit: z.strictObject({ requestsPerMinute: z.number().int().min(1).max(1_000_000) }).nullable().optional(),
});

const keyIdParams = z.object({ keyId: z.string().min(1).max(100) });

/**
 * The per-wallet limit of the routes that write a wallet's keys (`rateLimits.perWallet.keys`):
 * counted by the proven owner; the internal secret (the host app's own server) is not counted.
 */
export const keyWritesLimit = {
  group: "keys",
  of: (wallet: ProvenWallet) => (wallet.via === "internal_secret" ? undefined : wallet.address),
} as const;

/** Who a key update comes from: the key itself (renaming itself), or its owner's proven wallet. */
type UpdateAuth = { readonly key: KeyRecord; readonly wallet?: undefined } | { readonly key?: undefined; readonly wallet: ProvenWallet };

/** Checks `models` and `modelBudgets` patterns against the catalog (400 naming the field). */
export function checkGovernanceModels(gateway: GatewayContext, body: { models?: readonly string[] | null | undefined; modelBudgets?: Record<string, bigint> | null | undefined }): void {
  if (body.models) checkModelPatterns(gateway.services.catalog, body.models, "models");
  if (body.modelBudgets) checkModelPatterns(gateway.services.catalog, Object.keys(body.modelBudgets), "modelBudgets");
}

/** The target key when the request proves its owner's wallet without a service key; 404/403 otherwise. */
export async function ownedKey(request: GatewayRequest, gateway: GatewayContext, keyId: string): Promise<{ key: KeyRecord; actor: Actor }> {
  return ownedBy(await proveWallet(request, gateway, { serviceKey: false }), gateway, keyId);
}

/** The target key when it belongs to the proven wallet; 404/403 otherwise. */
async function ownedBy(wallet: ProvenWallet, gateway: GatewayContext, keyId: string): Promise<{ key: KeyRecord; actor: Actor }> {
  const key = await gateway.services.store.getKeyById(keyId);
  if (!key) throw new GatewayError("key_not_found", `Key ${keyId} does not exist.`);
  if (key.owner !== wallet.address) throw new GatewayError("forbidden", "The key belongs to another wallet than the one proven.");
  chainOfProof(wallet, key.chainId, "keyId");
  return { key, actor: `wallet:${wallet.address}` };
}

/** True when the request's bearer is a service-key token (not a wallet session). */
export const sendsServiceKey = (request: GatewayRequest) => {
  const token = bearerToken(request.headers.authorization);
  return token !== undefined && looksLikeToken(token);
};

/** The key view with its per-model counters. */
export async function fullView(gateway: GatewayContext, key: KeyRecord) {
  const spend = key.modelBudgets ? await gateway.services.store.getModelSpend(key.keyId) : [];
  return keyView(key, gateway.clock.now(), spend);
}

/** Builds the governance route table. */
export function governanceRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "PATCH",
      path: "/api/keys/:keyId",
      tag: "keys",
      summary:
        "Update a key (owner's wallet proof; the key itself may change only its name): name, budgetLimit (never below the window's used + reserved), expiresAt (future), budgetPeriod, models, modelBudgets, rateLimit; null clears. Every change is recorded.",
      params: keyIdParams,
      body: patchBody,
      authenticate: async (request, gateway): Promise<UpdateAuth> =>
        sendsServiceKey(request) ? { key: await gateway.services.keys.authenticate(request.headers.authorization) } : { wallet: await proveWallet(request, gateway, { serviceKey: false }) },
      // Keys renaming themselves share one window per owner, apart from the owner's own: together
      // they are bounded like the owner, and cannot use up the owner's window.
      rateLimit: { wallet: { group: "keys", of: (auth) => (auth.wallet ? keyWritesLimit.of(auth.wallet) : `renames:${auth.key.owner}`) } },
      security: { accepts: ["walletSession", ["internalSecret", "session"], "serviceKey"] },
      handle: async ({ auth, params, body, gateway }) => {
        let target: { key: KeyRecord; actor: Actor };
        if (auth.key) {
          const key = auth.key;
          if (key.keyId !== params.keyId) throw new GatewayError("forbidden", "A service key may update only itself, and only its name; the owner's wallet changes the rest.");
          const others = Object.keys(body).filter((f) => f !== "name");
          if (others.length > 0) throw new GatewayError("forbidden", `A service key may change only its own name; ${others.join(", ")} need the owner's wallet proof.`, { param: others[0]! });
          target = { key, actor: `key:${key.keyId}` };
        } else target = await ownedBy(auth.wallet, gateway, params.keyId);
        checkGovernanceModels(gateway, body);
        const patch = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as KeyPatch;
        if (target.key.revokedAt !== undefined) throw new GatewayError("invalid_state", `Key ${target.key.keyId} is revoked; a revoked key cannot be changed.`, { details: { status: "revoked" } });
        const key = await gateway.services.keyGovernance.update(target.key, patch, target.actor);
        return json(await fullView(gateway, key), { headers: budgetHeaders(rolled(key, gateway.clock.now())) });
      },
    }),
    defineRoute({
      method: "POST",
      path: "/api/keys/:keyId/rotate",
      tag: "keys",
      summary: `Issue a new token for a key (owner's wallet proof); budget, history and intents stay. The old token works for graceSeconds (default ${DEFAULT_ROTATION_GRACE_MS / 1000}, max ${MAX_ROTATION_GRACE_MS / 1000}), then answers 401 key_rotated.`,
      params: keyIdParams,
      body: z.strictObject({ graceSeconds: z.number().int().min(0).max(MAX_ROTATION_GRACE_MS / 1000).optional() }).optional(),
      authenticate: (request, gateway) => proveWallet(request, gateway, { serviceKey: false }),
      rateLimit: { wallet: keyWritesLimit },
      security: WALLET_PROOF_NO_KEY,
      handle: async ({ auth, params, body, gateway }) => {
        const { key, actor } = await ownedBy(auth, gateway, params.keyId);
        const graceMs = body?.graceSeconds === undefined ? DEFAULT_ROTATION_GRACE_MS : body.graceSeconds * 1000;
        const rotated = await gateway.services.keyGovernance.rotate(key, graceMs, actor);
        return json(Object.assign(await fullView(gateway, rotated.key), { token: rotated.token, previousTokenValidUntil: rotated.key.previousTokenValidUntil }));
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/keys/:keyId/events",
      tag: "keys",
      summary: "The changes of a key, newest first: who (wallet or key), when, and each field's old and new value (owner's proof, or a live key of the owner).",
      params: keyIdParams,
      query: z.object({ limit: clampedInt(50, 1, 200), cursor: optionalText(200) }),
      security: WALLET_PROOF,
      handle: async ({ request, params, query, gateway }) => {
        if (sendsServiceKey(request)) await gateway.services.keys.authorizeFor(request.headers.authorization, params.keyId);
        else await ownedKey(request, gateway, params.keyId);
        const page = await gateway.services.keyGovernance.events(params.keyId, query.limit, query.cursor);
        return json({ events: page.events, next_cursor: page.nextCursor });
      },
    }),
  ];
}

