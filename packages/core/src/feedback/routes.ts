/** The routes of feedback (docs/discovery.md "Feedback"). */
import type { GatewayContext } from "../context.js";
import { clientIp } from "../http/client-ip.js";
import { parseAddress, requestChainId } from "../http/headers.js";
import { json } from "../http/respond.js";
import type { GatewayRequest } from "../http/types.js";
import { tryProveWallet, WALLET_PROOF } from "../http/wallet-proof.js";
import { ANONYMOUS, type FeedbackReviewer } from "./service.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { clampedInt } from "../http/schemas.js";
import { feedbackSubmissionSchema, feedbackTargetQuery } from "./schemas.js";
import { feedbackCreatedView, feedbackItemView, feedbackSummaryView } from "./view.js";

/**
 * The reviewer of a request: a live service key → its owner (`service_key`, on the wire
 * `compose_key` under `compat: "compose"`, whatever the wallet
 * header names); else a wallet the
 * request proves (session, internal secret, host app, trusted header) with `x-chain-id` (or
 * `x-network-id`) → `wallet_header`; else `anonymous`. A dead key or an unproven header is not an
 * error here: the feedback is recorded as anonymous. A malformed header is still a 400.
 */
export async function reviewerOf(request: GatewayRequest, gateway: GatewayContext): Promise<FeedbackReviewer> {
  // A live key names its owner whatever the wallet header says (the header is then only checked for form).
  const key = await gateway.services.keys.authenticate(request.headers.authorization).catch(() => null);
  if (key) {
    const raw = request.headers["x-session-user-address"];
    if (raw) parseAddress(raw, "x-session-user-address");
    return { verification: "service_key", address: key.owner, keyId: key.keyId, chainId: key.chainId };
  }
  const wallet = await tryProveWallet(request, gateway);
  if (!wallet) return ANONYMOUS;
  if (wallet.key) return { verification: "service_key", address: wallet.address, keyId: wallet.key.keyId, chainId: wallet.key.chainId };
  const chainId = requestChainId(request);
  // A proof that holds on one chain (a smart wallet's session) does not vouch for the wallet on another.
  if (chainId === undefined || (wallet.chainId !== undefined && chainId !== wallet.chainId)) return ANONYMOUS;
  return { verification: "wallet_header", address: wallet.address, chainId };
}

/**
 * Counts an anonymous rating against its client's daily allowance (feedback/anonymous-ratings.ts):
 * one client cannot outvote a target's proven reviewers with ratings that each count. Throws 429
 * `rate_limited` past it. A client whose IP is unknown (an adapter without a socket and no trusted
 * proxy) is not counted.
 */
function limitAnonymousRating(request: GatewayRequest, gateway: GatewayContext, target: { type: string; id: string }): void {
  const ip = clientIp(request, gateway.rateLimits.trustedProxies);
  if (ip !== undefined) gateway.services.feedback.admitAnonymousRating(ip, target);
}

/** Builds the feedback route table. */
export function feedbackRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/v1/feedback",
      tag: "feedback",
      summary:
        "Submit feedback on a target (targetType/targetId or target:{type,id}; rating and/or comment or message; optional context and metadata JSON objects of at most 50 keys and 8 KiB each). Reviewer: a valid service key's owner, else a proven wallet (x-session-user-address with x-chain-id), else anonymous.",
      body: feedbackSubmissionSchema,
      authenticate: reviewerOf,
      rateLimit: { ip: "feedback" },
      security: { ...WALLET_PROOF, optional: true },
      handle: async ({ request, auth, body, gateway }) => {
        const record = await gateway.services.feedback.submit(body, auth, (r) => {
          if (r.verification === "anonymous" && r.rating !== undefined) limitAnonymousRating(request, gateway, { type: r.targetType, id: r.targetId });
        });
        return json(feedbackCreatedView(record, gateway.compat), { status: 201 });
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/feedback",
      tag: "feedback",
      summary: "List a target's feedback, newest first (targetType, targetId, limit 1..100, default 50). Reviewer wallets are never returned.",
      query: feedbackTargetQuery.extend({ limit: clampedInt(50, 1, 100) }),
      handle: async ({ query, gateway }) => {
        const records = await gateway.services.feedback.list({ type: query.targetType, id: query.targetId }, { limit: query.limit });
        return json({ object: "list", data: records.map((r) => feedbackItemView(r, gateway.compat)) });
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/feedback/summary",
      tag: "feedback",
      summary:
        "Aggregate a target's feedback: counts, rating average and distribution, categories, verification modes, recent records (recentLimit 1..100, default 10).",
      query: feedbackTargetQuery.extend({ recentLimit: clampedInt(10, 1, 100) }),
      handle: async ({ query, gateway }) => {
        const summary = await gateway.services.feedback.summary({ type: query.targetType, id: query.targetId }, { recentLimit: query.recentLimit });
        return json(feedbackSummaryView(summary, gateway.compat));
      },
    }),
  ];
}
