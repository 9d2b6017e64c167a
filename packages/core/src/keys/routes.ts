/** The routes of service keys (docs/payments.md "Service keys"). */
import { z } from "zod";
import { GatewayError } from "../errors.js";
import { idempotencyKeyHeader } from "../http/headers.js";
import { chainOfProof, proveWallet, WALLET_PROOF, WALLET_PROOF_NO_KEY } from "../http/wallet-proof.js";
import { json } from "../http/respond.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { amount, chainIdInput, clampedInt, optionalText, unixMs } from "../http/schemas.js";
import { budgetHeaders, keyView, remainingOf } from "./view.js";
import { sessionRoutes } from "./session-route.js";
import { checkGovernanceModels, fullView, governanceFields, governanceRoutes, keyWritesLimit, ownedKey, sendsServiceKey } from "./governance-routes.js";
import { rolled } from "./period.js";
import type { KeyBudget } from "../store/types.js";

const createBody = z
  .object({
    budgetLimit: amount(),
    expiresAt: unixMs,
    networkId: chainIdInput.optional(),
    chainId: chainIdInput.optional(),
    purpose: z.enum(["session", "api"]),
    name: z.string().trim().min(1).max(100).optional(),
    rateLimit: z.strictObject({ requestsPerMinute: z.number().int().min(1).max(1_000_000) }).optional(),
    budgetPeriod: governanceFields.budgetPeriod.optional(),
    models: governanceFields.models.optional(),
    modelBudgets: governanceFields.modelBudgets.optional(),
  })
  .superRefine((b, ctx) => {
    if (b.networkId === undefined && b.chainId === undefined) ctx.addIssue({ code: "custom", path: ["networkId"], message: "is required (networkId, or its alias chainId)" });
    if (b.networkId !== undefined && b.chainId !== undefined && b.networkId !== b.chainId)
      ctx.addIssue({ code: "custom", path: ["chainId"], message: "differs from networkId; send one of them" });
  });

const keyIdParams = z.object({ keyId: z.string().min(1).max(100) });

/** Builds the key route table (with `GET /api/session`, see session-route.ts). */
export function keyRoutes(): AnyRoute[] {
  return [
    ...sessionRoutes(),
    ...governanceRoutes(),
    defineRoute({
      method: "POST",
      path: "/api/keys",
      tag: "keys",
      summary: "Create a service key for the proven wallet (a wallet session, or the internal secret with x-session-user-address); the token is returned once.",
      body: createBody,
      authenticate: (request, gateway) => proveWallet(request, gateway, { serviceKey: false }),
      rateLimit: { wallet: keyWritesLimit },
      security: WALLET_PROOF_NO_KEY,
      handle: async ({ auth: wallet, body, gateway }) => {
        checkGovernanceModels(gateway, body);
        const { key, token } = await gateway.services.keys.create({
          owner: wallet.address,
          chainId: chainOfProof(wallet, body.networkId ?? body.chainId, body.networkId === undefined ? "chainId" : "networkId")!,
          purpose: body.purpose,
          budgetLimit: body.budgetLimit,
          expiresAt: body.expiresAt,
          name: body.name,
          rateLimit: body.rateLimit,
          budgetPeriod: body.budgetPeriod,
          models: body.models,
          modelBudgets: body.modelBudgets,
        });
        const view = keyView(key, gateway.clock.now());
        return json(Object.assign(view, { token }), { status: 201, headers: budgetHeaders(key) });
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/keys",
      tag: "keys",
      summary: "List the keys of the proven wallet, newest first (limit, cursor); a proof that holds on one chain (a smart wallet's session, a service key) lists that chain's keys.",
      query: z.object({ limit: clampedInt(50, 1, 200), cursor: optionalText(500) }),
      authenticate: proveWallet,
      security: WALLET_PROOF,
      handle: async ({ auth: wallet, query, gateway }) => {
        const page = await gateway.services.keys.list(wallet.address, Object.assign({ chainId: wallet.chainId }, query));
        const views = await Promise.all(page.keys.map((k) => fullView(gateway, k)));
        return json({ keys: views, next_cursor: page.nextCursor });
      },
    }),
    defineRoute({
      method: "POST",
      path: "/api/keys/settle",
      tag: "keys",
      summary:
        "Legacy: charge an amount to the bearer key at once (reserve and settle in one step). With x-idempotency-key a retry replays the first charge instead of charging again.",
      body: z.object({ amount: amount() }),
      authenticate: (request, gateway) => gateway.services.keys.authenticate(request.headers.authorization),
      rateLimit: { key: (key) => key },
      security: { accepts: ["serviceKey"], charges: true },
      handle: async ({ request, auth, body, gateway, trace }) => {
        const idempotencyKey = idempotencyKeyHeader(request);
        let key: KeyBudget = auth;
        let replay = false;
        if (idempotencyKey === undefined) key = await gateway.services.keys.chargeDirect(auth, body.amount, trace);
        else {
          // An intent keyed by the idempotency key: a retry finds it and replays its settlement.
          const ledger = gateway.services.ledger;
          const prepared = await ledger.prepare({ key: auth, chainId: auth.chainId, service: "keys", action: "settle", resource: "/api/keys/settle", method: "POST", maxAmount: body.amount, idempotencyKey });
          const settled = await ledger.settle({ intentId: prepared.intent.intentId, finalAmount: body.amount, bearer: auth, trace });
          key = settled.key ?? prepared.key;
          replay = prepared.replay;
        }
        return json(
          { success: true, keyId: key.keyId, amount: body.amount.toString(), budgetRemaining: remainingOf(key).toString() },
          { headers: Object.assign(budgetHeaders(key), replay ? { "x-idempotent-replay": "true" } : undefined) },
        );
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/keys/:keyId",
      tag: "keys",
      summary: "Inspect a key (bearer: a live key, the target itself or another key of the same owner; a revoked or expired bearer is 401).",
      params: keyIdParams,
      security: { accepts: ["serviceKey"] },
      handle: async ({ request, params, gateway }) => {
        const key = await gateway.services.keys.authorizeFor(request.headers.authorization, params.keyId);
        return json(await fullView(gateway, key), { headers: budgetHeaders(rolled(key, gateway.clock.now())) });
      },
    }),
    defineRoute({
      method: "DELETE",
      path: "/api/keys/:keyId",
      tag: "keys",
      summary:
        "Revoke a key: a live key of the same owner (the key itself or a sibling) or the owner's wallet proof (a session, or the internal secret for the named wallet); revoking again returns the first revocation.",
      params: keyIdParams,
      security: WALLET_PROOF,
      handle: async ({ request, params, gateway }) => {
        const keys = gateway.services.keys;
        if (sendsServiceKey(request)) await keys.authorizeFor(request.headers.authorization, params.keyId);
        else await ownedKey(request, gateway, params.keyId);
        const key = await keys.revoke(params.keyId);
        if (key.revokedAt === undefined) throw new GatewayError("internal_error");
        return json({ success: true, keyId: key.keyId, revokedAt: key.revokedAt });
      },
    }),
  ];
}
