/**
 * Feedback (docs/discovery.md "Feedback"): submissions with reviewer resolution, newest-first lists and
 * per-target summaries aggregated by the store.
 */
import type { CapabilityDeps } from "../capability.js";
import { invalidRequest } from "../errors.js";
import { parseWith } from "../validation.js";
import type { FeedbackRecord, FeedbackTarget, FeedbackVerification } from "../store/feedback-types.js";
import { DEFAULT_TARGET_TYPES } from "./options.js";
import { createAnonymousRatings } from "./anonymous-ratings.js";
import { FEEDBACK_CATEGORIES, FEEDBACK_LIMITS, feedbackSubmissionSchema, type FeedbackSubmission } from "./schemas.js";

/** Who wrote a piece of feedback, and how that is known. */
export type FeedbackReviewer =
  | { readonly verification: "anonymous" }
  /** The owner wallet of a valid (unrevoked, unexpired) service key sent as `Authorization`. */
  | { readonly verification: "service_key"; readonly address: string; readonly keyId: string; readonly chainId: number }
  /** A proven wallet (session, internal secret, host app) named with `x-chain-id`. */
  | { readonly verification: "wallet_header"; readonly address: string; readonly chainId: number };

/** The anonymous reviewer. */
export const ANONYMOUS: FeedbackReviewer = { verification: "anonymous" };

/** A target's summary. Every rating, category and verification mode is present, zeros included. */
export interface FeedbackSummary {
  target: FeedbackTarget;
  count: number;
  ratingCount: number;
  /** Mean rating rounded to 2 decimals (half up); null without ratings. */
  ratingAverage: number | null;
  ratings: Record<"1" | "2" | "3" | "4" | "5", number>;
  categories: Record<string, number>;
  verification: Record<FeedbackVerification, number>;
  /** The newest records, newest first. */
  recent: FeedbackRecord[];
}

/** What the feedback capability offers to routes and application code. Errors are `GatewayError`s. */
export interface FeedbackService {
  /** The configured target types. */
  readonly targetTypes: readonly string[];
  /** The target types that accept a rating. */
  readonly ratingTargets: readonly string[];
  /**
   * Counts one anonymous rating of `target` by `client` (an IP) against the daily allowance
   * (`feedback.anonymousRatingsPerDay` of one target, default 1; 100 in all): throws 429
   * `rate_limited` past it (./anonymous-ratings.ts). The HTTP route calls it for anonymous ratings.
   */
  admitAnonymousRating(client: string, target: FeedbackTarget): void;
  /**
   * Validates and stores a submission (either spelling, see `feedbackSubmissionSchema`). Throws
   * 400 `invalid_request` naming the field: an unconfigured `targetType`, a rating on a type that
   * takes none, or any rule of the schema. `admit`, when given, is called with the valid record
   * before it is stored, and may refuse it by throwing (a limit the caller keeps). @default reviewer anonymous
   */
  submit(input: FeedbackSubmission, reviewer?: FeedbackReviewer, admit?: (record: FeedbackRecord) => void): Promise<FeedbackRecord>;
  /** A target's records, newest first; `limit` is clamped to 1..100. @default limit 50 */
  list(target: FeedbackTarget, options?: { limit?: number }): Promise<FeedbackRecord[]>;
  /** A target's summary; `recentLimit` is clamped to 1..100. @default recentLimit 10 */
  summary(target: FeedbackTarget, options?: { recentLimit?: number }): Promise<FeedbackSummary>;
}

const clamp = (value: number | undefined, def: number, min: number, max: number): number =>
  value === undefined || !Number.isFinite(value) ? def : Math.min(max, Math.max(min, Math.trunc(value)));

/** Creates the feedback service. */
export function createFeedbackService(deps: CapabilityDeps): FeedbackService {
  const { store, clock, ids } = deps;
  const targetTypes: readonly string[] = deps.options.feedback?.targetTypes ?? DEFAULT_TARGET_TYPES;
  const ratingTargets: readonly string[] = deps.options.feedback?.ratingTargets ?? targetTypes;
  const types = new Set(targetTypes);
  const anonymous = createAnonymousRatings(clock, deps.options.feedback?.anonymousRatingsPerDay ?? 1);
  const rated = new Set(ratingTargets);

  deps.describe(() => {
    const ratings = ratingTargets.length === targetTypes.length ? "all" : ratingTargets.length === 0 ? "none" : ratingTargets.join(", ");
    return `feedback (/v1/feedback): on (target types ${targetTypes.join(", ")}; ratings on ${ratings})`;
  });

  /** The target as stored: a configured type and a trimmed id of 1..512 characters. */
  const checkTarget = (target: FeedbackTarget): FeedbackTarget => {
    if (!types.has(target.type)) throw invalidRequest(`targetType must be one of ${targetTypes.join(", ")}`, "targetType");
    const id = target.id.trim();
    if (id.length === 0 || id.length > FEEDBACK_LIMITS.targetId)
      throw invalidRequest(`targetId must be 1 to ${FEEDBACK_LIMITS.targetId} characters`, "targetId");
    return { type: target.type, id };
  };

  return {
    targetTypes,
    ratingTargets,
    admitAnonymousRating: (client, target) => anonymous.admit(client, target),

    async submit(input, reviewer = ANONYMOUS, admit) {
      const body = parseWith(feedbackSubmissionSchema, input, "body");
      const target = checkTarget({ type: body.targetType, id: body.targetId });
      if (body.rating !== undefined && !rated.has(target.type))
        throw invalidRequest(`targets of type ${target.type} take comments only, not a rating`, "rating");
      const record: FeedbackRecord = {
        feedbackId: ids.next("fb"),
        targetType: target.type,
        targetId: target.id,
        category: body.category,
        ...(body.rating === undefined ? {} : { rating: body.rating }),
        ...(body.comment === undefined ? {} : { comment: body.comment }),
        labels: body.labels,
        ...(body.context === undefined ? {} : { context: body.context }),
        ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
        verification: reviewer.verification,
        ...(reviewer.verification === "anonymous" ? {} : { reviewer: reviewer.address, chainId: reviewer.chainId }),
        ...(reviewer.verification === "service_key" ? { keyId: reviewer.keyId } : {}),
        createdAt: clock.now(),
      };
      admit?.(record);
      await store.insertFeedback(record);
      return record;
    },

    async list(target, options = {}) {
      return store.listFeedback(checkTarget(target), { limit: clamp(options.limit, 50, 1, 100) });
    },

    async summary(target, options = {}) {
      const t = checkTarget(target);
      const s = await store.summarizeFeedback(t, { recentLimit: clamp(options.recentLimit, 10, 1, 100) });
      const categories: Record<string, number> = Object.fromEntries(FEEDBACK_CATEGORIES.map((c) => [c, 0]));
      for (const [c, n] of Object.entries(s.categories)) categories[c] = (categories[c] ?? 0) + n;
      const [r1, r2, r3, r4, r5] = s.ratings;
      return {
        target: t,
        count: s.count,
        ratingCount: s.ratingCount,
        // Integer sum over integer count: one rounding, half up, to 2 decimals.
        ratingAverage: s.ratingCount === 0 ? null : Math.round((s.ratingSum * 100) / s.ratingCount) / 100,
        ratings: { "1": r1, "2": r2, "3": r3, "4": r4, "5": r5 },
        categories,
        verification: {
          service_key: s.verification.service_key ?? 0,
          wallet_header: s.verification.wallet_header ?? 0,
          anonymous: s.verification.anonymous ?? 0,
        },
        recent: s.recent,
      };
    },
  };
}
