/** The routes of settlement (docs/settlement.md "Settlement"). */
import { z } from "zod";
import { parseChainId, requestChainId } from "../http/headers.js";
import { proveWallet, WALLET_PROOF } from "../http/wallet-proof.js";
import { json } from "../http/respond.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import type { GatewayRequest } from "../http/types.js";
import type { GatewayContext } from "../context.js";

/**
 * The chain of a wallet-status request (settlement status, `GET /api/session`): `x-chain-id` (or
 * `x-network-id`), else `?chainId`, else the default chain (the first of `options.chains`);
 * undefined when none is given and none is configured (the header is optional: the
 * answer is then "no active budget", not an error). A malformed chain is still a 400.
 */
export function walletStatusChain(request: GatewayRequest, gateway: GatewayContext): number | undefined {
  const fromHeader = requestChainId(request);
  if (fromHeader !== undefined) return fromHeader;
  const fromQuery = request.query.get("chainId");
  if (fromQuery !== null) return parseChainId(fromQuery, "chainId");
  return gateway.services.settlement.defaultChainId;
}

/** Builds the settlement route table. */
export function settlementRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: "/api/settlement/status",
      tag: "settlement",
      summary:
        "The active session budget of the proven wallet on the chain in x-chain-id (or ?chainId, else the default chain; {hasActiveBudget:false} when no chain is given and none is configured), with its charges waiting for settlement.",
      query: z.object({ chainId: z.string().optional() }),
      authenticate: async (request, gateway) => ({ wallet: (await proveWallet(request, gateway)).address, chainId: walletStatusChain(request, gateway) }),
      security: WALLET_PROOF,
      handle: async ({ auth, gateway }) =>
        json(auth.chainId === undefined ? { hasActiveBudget: false } : await gateway.services.settlement.status(auth.wallet, auth.chainId)),
    }),
    defineRoute({
      method: "POST",
      path: "/api/settlement/batch",
      tag: "settlement",
      summary:
        "Internal (x-internal-secret): settle queued charges on-chain, one transferFrom per (wallet, chain); failed groups stay queued. Safe to run concurrently.",
      authenticate: (request, gateway) => gateway.services.settlement.authorize(request.headers["x-internal-secret"]),
      security: { accepts: ["internalSecret"] },
      handle: async ({ gateway }) => json(await gateway.services.settlement.runBatch()),
    }),
  ];
}
