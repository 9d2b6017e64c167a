/** Options of the feedback capability (`createGateway({ feedback: … })`). */
import { z } from "zod";

/** The target types accepted when `feedback.targetTypes` is not set (docs/discovery.md "Feedback"). */
export const DEFAULT_TARGET_TYPES = ["endpoint", "x402", "model", "agent", "workflow"] as const;

const targetType = z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, "must be a lower-case slug: a-z first, then a-z, 0-9, _ or -, at most 64 characters");

function noDuplicates(list: readonly string[] | undefined, path: string, ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  list?.forEach((value, i) => {
    const first = seen.get(value);
    if (first !== undefined) ctx.addIssue({ code: "custom", path: [path, i], message: `repeats "${value}" (already at ${first})` });
    else seen.set(value, i);
  });
}

/** The zod schema of `options.feedback`. */
export const feedbackOptionsSchema = z
  .strictObject({
    /** Target types that accept feedback. @default ["endpoint", "x402", "model", "agent", "workflow"] */
    targetTypes: z.array(targetType).min(1).optional(),
    /** Which of `targetTypes` accept a rating (the others take comments only). @default every type of `targetTypes` */
    ratingTargets: z.array(targetType).optional(),
    /**
     * Anonymous ratings one client IP (an IPv6 /64) may give one target per day, counted in this
     * process (0: none). Proven reviewers are one voice per target instead. @default 1
     */
    anonymousRatingsPerDay: z.number().int().min(0).max(1_000_000).optional(),
  })
  .superRefine((o, ctx) => {
    noDuplicates(o.targetTypes, "targetTypes", ctx);
    noDuplicates(o.ratingTargets, "ratingTargets", ctx);
    const types = new Set<string>(o.targetTypes ?? DEFAULT_TARGET_TYPES);
    o.ratingTargets?.forEach((t, i) => {
      if (!types.has(t)) ctx.addIssue({ code: "custom", path: ["ratingTargets", i], message: `"${t}" is not one of targetTypes (${[...types].join(", ")})` });
    });
  })
  .optional();
export type FeedbackOptions = z.output<typeof feedbackOptionsSchema>;
