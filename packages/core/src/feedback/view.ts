/**
 * The wire views of feedback (docs/discovery.md "Feedback"). Each view names its fields one by one, so
 * the stored reviewer wallet, key id and chain can never reach a list or a summary.
 *
 * Under `compat: "compose"` the verification mode `service_key` reads `compose_key` (the origin
 * API's name) in every view, summary counts included; without it the names are unchanged.
 */
import type { FeedbackRecord, FeedbackVerification } from "../store/feedback-types.js";
import type { FeedbackSummary } from "./service.js";

/** The compatibility mode of the gateway (`options.compat`). */
export type FeedbackCompat = "compose" | undefined;

/** A verification mode as the wire shows it: `service_key` is `compose_key` under compat. */
export type WireVerification = FeedbackVerification | "compose_key";

/** The wire name of a verification mode. */
export function verificationName(v: FeedbackVerification, compat: FeedbackCompat): WireVerification {
  return v === "service_key" && compat === "compose" ? "compose_key" : v;
}

/**
 * A list item: `{id, target, category, rating?, comment?, message?, labels, context, metadata,
 * verification, createdAt}`. `message` repeats `comment` (the origin's name); `context` and
 * `metadata` are `{}` when none was given.
 */
export function feedbackItemView(r: FeedbackRecord, compat?: FeedbackCompat) {
  return {
    id: r.feedbackId,
    target: { type: r.targetType, id: r.targetId },
    category: r.category,
    ...(r.rating === undefined ? {} : { rating: r.rating }),
    ...(r.comment === undefined ? {} : { comment: r.comment, message: r.comment }),
    labels: [...r.labels],
    context: { ...(r.context ?? {}) },
    metadata: { ...(r.metadata ?? {}) },
    verification: verificationName(r.verification, compat),
    createdAt: r.createdAt,
  };
}

/** The answer of `POST /v1/feedback`. */
export function feedbackCreatedView(r: FeedbackRecord, compat?: FeedbackCompat) {
  return {
    feedbackId: r.feedbackId,
    target: { type: r.targetType, id: r.targetId },
    verification: verificationName(r.verification, compat),
    createdAt: r.createdAt,
  };
}

/** The answer of `GET /v1/feedback/summary`; `verification` counts every mode under its wire name. */
export function feedbackSummaryView(s: FeedbackSummary, compat?: FeedbackCompat) {
  const { service_key: key, ...others } = s.verification;
  return {
    target: { ...s.target },
    count: s.count,
    ratingCount: s.ratingCount,
    ratingAverage: s.ratingAverage,
    ratings: { ...s.ratings },
    categories: { ...s.categories },
    verification: compat === "compose" ? { compose_key: key, ...others } : { ...s.verification },
    recent: s.recent.map((r) => feedbackItemView(r, compat)),
  };
}
