/**
 * The input schemas of feedback (docs/discovery.md "Feedback"), shared by the routes and by
 * `gateway.services.feedback.submit`, so that code and HTTP callers are held to the same rules.
 */
import { z } from "zod";

/** Feedback categories; `general` is the default. */
export const FEEDBACK_CATEGORIES = [
  "general",
  "bug",
  "latency",
  "quality",
  "pricing",
  "settlement",
  "model_capability",
  "safety",
  "docs",
  "integration",
] as const;
export type FeedbackCategory = (typeof FEEDBACK_CATEGORIES)[number];

/** Limits of a submission. `jsonBytes` and `jsonKeys` bound `context` and `metadata` each (UTF-8 bytes of their JSON; top-level keys). */
export const FEEDBACK_LIMITS = { targetType: 64, targetId: 512, comment: 4000, labels: 20, label: 64, jsonBytes: 8192, jsonKeys: 50 } as const;

/**
 * `context` and `metadata`: a plain JSON object of at most {@link FEEDBACK_LIMITS}.jsonKeys
 * top-level keys whose JSON is at most `jsonBytes` UTF-8 bytes; `null` counts as absent. The
 * value is normalised through JSON (so what is stored is exactly what is returned); a value JSON
 * cannot carry (bigint, a cycle) is refused.
 */
const jsonObject = z.unknown().transform((v, ctx): Record<string, unknown> | undefined => {
  if (v === undefined || v === null) return undefined;
  const fail = (message: string) => {
    ctx.addIssue({ code: "custom", message, input: v });
    return z.NEVER;
  };
  if (typeof v !== "object" || Array.isArray(v)) return fail("must be a JSON object");
  let text: string;
  try {
    text = JSON.stringify(v);
  } catch {
    return fail("must be JSON-serializable");
  }
  const value = JSON.parse(text) as Record<string, unknown>;
  const keys = Object.keys(value).length;
  if (keys > FEEDBACK_LIMITS.jsonKeys) return fail(`must have at most ${FEEDBACK_LIMITS.jsonKeys} keys (got ${keys})`);
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > FEEDBACK_LIMITS.jsonBytes) return fail(`must be at most ${FEEDBACK_LIMITS.jsonBytes} bytes as JSON (got ${bytes})`);
  return value;
});

const required = (what: string) => ({ error: (issue: { input: unknown }) => (issue.input === undefined ? "is required" : `must be ${what}`) });

/** A validated submission: one target, a rating and/or a comment. */
export interface FeedbackInput {
  targetType: string;
  targetId: string;
  /** Integer 1..5. */
  rating?: number;
  /** Trimmed, 1..4000 characters. */
  comment?: string;
  category: FeedbackCategory;
  /** Trimmed, unique, at most 20 of at most 64 characters each. */
  labels: string[];
  /** A JSON object (≤ 50 keys, ≤ 8 KiB as JSON), when given. */
  context?: Record<string, unknown>;
  /** A JSON object (≤ 50 keys, ≤ 8 KiB as JSON), when given. */
  metadata?: Record<string, unknown>;
}

/**
 * The body of `POST /v1/feedback`. Both spellings are accepted: `targetType`/`targetId` or
 * `target:{type,id}`, and `comment` or `message` (docs/api.md "Aliases and compat differences"); sending both spellings
 * with different values is a 400. `null` counts as absent for rating and comment.
 */
export const feedbackSubmissionSchema = z
  .object({
    targetType: z.string().optional(),
    targetId: z.string().optional(),
    target: z.object({ type: z.string().optional(), id: z.string().optional() }).optional(),
    rating: z
      .number(required("a number"))
      .int("must be an integer from 1 to 5")
      .min(1, "must be an integer from 1 to 5")
      .max(5, "must be an integer from 1 to 5")
      .nullish(),
    comment: z.string().nullish(),
    message: z.string().nullish(),
    category: z.enum(FEEDBACK_CATEGORIES).optional(),
    labels: z
      .array(z.string().trim().min(1, "must not be empty").max(FEEDBACK_LIMITS.label, `must be at most ${FEEDBACK_LIMITS.label} characters`))
      .max(FEEDBACK_LIMITS.labels, `must hold at most ${FEEDBACK_LIMITS.labels} labels`)
      .optional(),
    context: jsonObject.optional(),
    metadata: jsonObject.optional(),
  })
  .transform((b, ctx): FeedbackInput => {
    const fail = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message, input: b });
    const pick = (name: string, main: string | null | undefined, alias: string | null | undefined, aliasName: string): string | undefined => {
      const a = main?.trim() || undefined;
      const c = alias?.trim() || undefined;
      if (a !== undefined && c !== undefined && a !== c) fail(name, `differs from ${aliasName}; send one of them`);
      return a ?? c;
    };
    const targetType = pick("targetType", b.targetType, b.target?.type, "target.type");
    const targetId = pick("targetId", b.targetId, b.target?.id, "target.id");
    if (targetType === undefined) fail("targetType", "is required (targetType, or target.type)");
    else if (targetType.length > FEEDBACK_LIMITS.targetType) fail("targetType", `must be at most ${FEEDBACK_LIMITS.targetType} characters`);
    if (targetId === undefined) fail("targetId", "is required (targetId, or target.id)");
    else if (targetId.length > FEEDBACK_LIMITS.targetId) fail("targetId", `must be at most ${FEEDBACK_LIMITS.targetId} characters`);
    const comment = pick("comment", b.comment, b.message, "message");
    if (comment !== undefined && comment.length > FEEDBACK_LIMITS.comment)
      fail(b.comment?.trim() ? "comment" : "message", `must be at most ${FEEDBACK_LIMITS.comment} characters once trimmed (got ${comment.length})`);
    const rating = b.rating ?? undefined;
    if (rating === undefined && comment === undefined) fail("comment", "send a rating, a comment (or message), or both");
    if (targetType === undefined || targetId === undefined) return z.NEVER;
    return {
      targetType,
      targetId,
      ...(rating === undefined ? {} : { rating }),
      ...(comment === undefined ? {} : { comment }),
      category: b.category ?? "general",
      labels: [...new Set(b.labels ?? [])],
      ...(b.context === undefined ? {} : { context: b.context }),
      ...(b.metadata === undefined ? {} : { metadata: b.metadata }),
    };
  });

/** What `submit` takes: the raw body shape (either spelling). */
export type FeedbackSubmission = z.input<typeof feedbackSubmissionSchema>;

/** `targetType` and `targetId` of the GET routes (trimmed like the submission). */
export const feedbackTargetQuery = z.object({
  targetType: z.string(required("a string")).trim().min(1, "is required").max(FEEDBACK_LIMITS.targetType),
  targetId: z.string(required("a string")).trim().min(1, "is required").max(FEEDBACK_LIMITS.targetId),
});
