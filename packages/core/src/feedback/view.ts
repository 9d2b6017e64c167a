/**
 * The wire views of feedback (CONTRACT.md "Feedback"). Each view names its fields one by one, so
 * the stored reviewer wallet, key id and chain can never reach a list or a summary.
 */
import type { FeedbackRecord } from "../store/feedback-types.js";
import type { FeedbackSummary } from "./service.js";

/** A list item: `{id, target, category, rating?, comment?, labels, verification, createdAt}`. */
export function feedbackItemView(r: FeedbackRecord) {
  return {
    id: r.feedbackId,
    target: { type: r.targetType, id: r.targetId },
    category: r.category,
    ...(r.rating === undefined ? {} : { rating: r.rating }),
    ...(r.comment === undefined ? {} : { comment: r.comment }),
    labels: [...r.labels],
    verification: r.verification,
    createdAt: r.createdAt,
  };
}

/** The answer of `POST /v1/feedback`. */
export function feedbackCreatedView(r: FeedbackRecord) {
  return { feedbackId: r.feedbackId, target: { type: r.targetType, id: r.targetId }, verification: r.verification, createdAt: r.createdAt };
}

/** The answer of `GET /v1/feedback/summary`. */
export function feedbackSummaryView(s: FeedbackSummary) {
  return {
    target: { ...s.target },
    count: s.count,
    ratingCount: s.ratingCount,
    ratingAverage: s.ratingAverage,
    ratings: { ...s.ratings },
    categories: { ...s.categories },
    verification: { ...s.verification },
    recent: s.recent.map(feedbackItemView),
  };
}
