/** The routes of settlement (docs/settlement.md "Settlement"). */
import { z } from "zod";
import { parseChainId, requestChainId } from "../http/headers.js";
import { chainOfProof, proveWallet, WALLET_PROOF, type ProvenWallet } from "../http/wallet-proof.js";
import { json } from "../http/respond.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import type { GatewayRequest } from "../http/types.js";
import type { GatewayContext } from "../context.js";

/**
 * The chain of a wallet-status request (settlement status, `GET /api/session`): `x-chain-id` (or
 * `x-network-id`), else `?chainId`, else the chain of a proof that holds on one chain only, else
 * the default chain (the first of `options.chains`); undefined when none is given and none is
 * configured (the header is optional: the answer is then "no active budget", not an error). A
 * malformed chain is still a 400; a chain the proof does not hold on is a 403 (`chainOfProof`).
 */
export function walletStatusChain(request: GatewayRequest, gateway: GatewayContext, wallet: ProvenWallet): number | undefined {
  const fromHeader = requestChainId(request);
  if (fromHeader !== undefined) return chainOfProof(wallet, fromHeader, "x-chain-id");
  const fromQuery = request.query.get("chainId");
  if (fromQuery !== null) return chainOfProof(wallet, parseChainId(fromQuery, "chainId"));
  return wallet.chainId ?? gateway.services.settlement.defaultChainId;
}

/** A wallet-status route's credential: the proven wallet and the chain it asks about. */
export async function walletStatusAuth(request: GatewayRequest, gateway: GatewayContext): Promise<{ wallet: string; chainId: number | undefined }> {
  const wallet = await proveWallet(request, gateway);
  return { wallet: wallet.address, chainId: walletStatusChain(request, gateway, wallet) };
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
      authenticate: walletStatusAuth,
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
