/** The usage route: `GET /api/usage`, the dashboard's data for a proven wallet. */
import { z } from "zod";
import { chainOfProof, proveWallet, WALLET_PROOF } from "../http/wallet-proof.js";
import { json } from "../http/respond.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { chainIdInput } from "../http/schemas.js";
import { usageDay } from "./service.js";

const usageQuery = z.object({ from: usageDay.optional(), to: usageDay.optional(), chainId: chainIdInput.optional() });

/** Builds the usage route table. */
export function usageRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: "/api/usage",
      tag: "usage",
      summary:
        "Spend of the proven wallet's keys from the ledger, by UTC day (from..to inclusive, default the 30 days to today, at most 366) and by model, on ?chainId when given; totals.reserved is what open reservations hold now.",
      query: usageQuery,
      authenticate: proveWallet,
      security: WALLET_PROOF,
      handle: async ({ auth: wallet, query, gateway }) =>
        json(await gateway.services.usage.forWallet(wallet.address, Object.assign({}, query, { chainId: chainOfProof(wallet, query.chainId) }))),
    }),
  ];
}
