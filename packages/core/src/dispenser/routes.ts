/** The routes of the dispenser (docs/settlement.md "Dispenser"). No credential. */
import { z } from "zod";
import { GatewayError, toErrorEnvelope } from "../errors.js";
import { json } from "../http/respond.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { addressSchema as address, chainIdInput } from "../http/schemas.js";

/** Builds the dispenser route table. */
export function dispenserRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/api/dispenser/claim",
      tag: "dispenser",
      summary:
        "Send the claim amount of test USDC to an address, once per (address, chain). 409 with alreadyClaimed on a repeat; 503 when the dispenser is off, paused or out of claims.",
      body: z.object({ address, chainId: chainIdInput }),
      rateLimit: { ip: "dispenser" },
      handle: async ({ body, gateway, requestId }) => {
        // An invalid address is a 400 always (the body is checked first); then not configured is a 503.
        gateway.services.dispenser.assertConfigured();
        const outcome = await gateway.services.dispenser.claim(body.address, body.chainId);
        if (outcome.ok) return json({ success: true, claimAmount: outcome.claimAmount, chainId: outcome.chainId, txHash: outcome.txHash });
        // The documented body (docs/settlement.md "Dispenser"), whose `error` is the standard envelope object so envelope clients work too.
        const { claim } = outcome;
        const conflict = new GatewayError("already_claimed", `${claim.address} has already claimed on chain ${claim.chainId}.`, {
          details: { address: claim.address, chainId: claim.chainId, status: claim.status, ...(claim.txHash ? { txHash: claim.txHash, claimedAt: claim.claimedAt } : {}) },
        });
        return json({ success: false, alreadyClaimed: true, claimAmount: outcome.claimAmount, error: toErrorEnvelope(conflict, requestId).body.error }, { status: 409 });
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/dispenser/status",
      tag: "dispenser",
      summary:
        "Status of every chain: dispenser wallet, live USDC balance (balance = dispenserBalance, atomic; dispenserBalanceFormatted), claims taken and left, paused; plus claimAmount, claimAmountFormatted (\"$1.00 USDC\") and maxClaims (largest chain cap; 0 without dispenser chains, null when one is unlimited).",
      handle: async ({ gateway }) => json(await gateway.services.dispenser.status()),
    }),
    defineRoute({
      method: "GET",
      path: "/api/dispenser/status/:chainId",
      tag: "dispenser",
      summary: "Status of one chain's dispenser: 200 {available:true, status}, or 404 {available:false, reason}.",
      params: z.object({ chainId: chainIdInput }),
      handle: async ({ params, gateway }) => {
        const status = await gateway.services.dispenser.chainStatus(params.chainId);
        if (status) return json({ available: true, status });
        const reason = gateway.services.dispenser.configured ? `No dispenser is configured on chain ${params.chainId}.` : "The dispenser is not configured.";
        return json({ available: false, reason }, { status: 404 });
      },
    }),
    defineRoute({
      method: "GET",
      path: "/api/dispenser/check/:address",
      tag: "dispenser",
      summary: "Whether an address has claimed, and its claims per chain.",
      params: z.object({ address }),
      handle: async ({ params, gateway }) => json(await gateway.services.dispenser.check(params.address)),
    }),
  ];
}
