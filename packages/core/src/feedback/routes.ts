/** The routes of SPEC.md "Feedback" (CONTRACT.md "Feedback"). */
import { json } from "../http/respond.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { clampedInt } from "../http/schemas.js";
import { feedbackSubmissionSchema, feedbackTargetQuery } from "./schemas.js";
import { feedbackCreatedView, feedbackItemView, feedbackSummaryView } from "./view.js";

/** Builds the feedback route table. */
export function feedbackRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/v1/feedback",
      tag: "feedback",
      summary:
        "Submit feedback on a target (targetType/targetId or target:{type,id}; rating and/or comment or message). Reviewer: a valid service key's owner, else x-session-user-address with x-chain-id, else anonymous.",
      body: feedbackSubmissionSchema,
      authenticate: (request, gateway) => gateway.services.feedback.reviewerOf(request.headers),
      security: { accepts: ["serviceKey", "session"], optional: true },
      handle: async ({ auth, body, gateway }) => {
        const record = await gateway.services.feedback.submit(body, auth);
        return json(feedbackCreatedView(record), { status: 201 });
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
        return json({ object: "list", data: records.map(feedbackItemView) });
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
        return json(feedbackSummaryView(summary));
      },
    }),
  ];
}
