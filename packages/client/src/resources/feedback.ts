/** `client.feedback`: submit, list and summarize feedback on a target (docs/discovery.md "Feedback"). */
import type { APIPromise } from "../api-promise.js";
import type { Caller } from "../http/caller.js";
import type { RequestOptions } from "../options.js";

/** Feedback categories. */
export type FeedbackCategory = "general" | "bug" | "latency" | "quality" | "pricing" | "settlement" | "model_capability" | "safety" | "docs" | "integration";

/**
 * How the reviewer was identified: a valid service key's owner, a proven wallet header, or nobody.
 * A gateway with `compat: "compose"` names the key mode `compose_key` (the origin API's name).
 */
export type FeedbackVerification = "service_key" | "compose_key" | "wallet_header" | "anonymous";

/** A feedback target. */
export interface FeedbackTarget {
  /** `endpoint`, `x402`, `model`, `agent`, `workflow` by default (gateway configuration). */
  type: string;
  /** 1..512 characters. */
  id: string;
}

/** The fields of `feedback.create` besides the target. */
export interface FeedbackFields {
  /** Integer 1..5, where the target type accepts ratings. */
  rating?: number;
  /** At most 4000 characters once trimmed. */
  comment?: string;
  /** Alias of `comment` (the origin API's name); sending both with different values is a 400. */
  message?: string;
  /** @default "general" */
  category?: FeedbackCategory;
  /** At most 20 labels of at most 64 characters. */
  labels?: string[];
  /** Where the feedback comes from (request id, payment intent, model…): a JSON object of at most 50 keys and 8 KiB as JSON. */
  context?: Record<string, unknown>;
  /** Free-form data: a JSON object of at most 50 keys and 8 KiB as JSON. */
  metadata?: Record<string, unknown>;
}

/** The body of `feedback.create`: a target (`targetType`/`targetId`, or `target`) and a rating and/or a comment. */
export type FeedbackParams = FeedbackFields &
  ({ targetType: string; targetId: string; target?: never } | { target: FeedbackTarget; targetType?: never; targetId?: never });

/** The answer of `feedback.create` (201). */
export interface FeedbackCreated {
  /** `fb_…`. */
  feedbackId: string;
  target: FeedbackTarget;
  verification: FeedbackVerification;
  /** Unix ms. */
  createdAt: number;
}

/** One feedback record (reviewer wallets are never returned). */
export interface FeedbackItem {
  id: string;
  target: FeedbackTarget;
  category: FeedbackCategory;
  rating?: number;
  comment?: string;
  /** The same text as `comment` (the origin API's name). */
  message?: string;
  labels: string[];
  /** `{}` when none was given. */
  context: Record<string, unknown>;
  /** `{}` when none was given. */
  metadata: Record<string, unknown>;
  verification: FeedbackVerification;
  createdAt: number;
}

/** A target's feedback, newest first. */
export interface FeedbackList {
  object: "list";
  data: FeedbackItem[];
}

/** The aggregate of a target's feedback. */
export interface FeedbackSummary {
  target: FeedbackTarget;
  count: number;
  ratingCount: number;
  /** Two decimals, or null without ratings. */
  ratingAverage: number | null;
  /** Count per rating "1".."5". */
  ratings: Record<string, number>;
  categories: Record<string, number>;
  verification: Record<string, number>;
  recent: FeedbackItem[];
}

/** The `client.feedback` group. */
export interface FeedbackResource {
  /**
   * Submits feedback. The reviewer is the owner of the client's `apiKey` when it is valid (an
   * invalid key is ignored), else the wallet the `sessionToken` (or `internalSecret` with
   * `sessionAddress`) proves, with `networkId`, else anonymous.
   */
  create(params: FeedbackParams, options?: RequestOptions): APIPromise<FeedbackCreated>;
  /** A target's feedback, newest first (`limit` 1..100, default 50). */
  list(params: { targetType: string; targetId: string; limit?: number }, options?: RequestOptions): APIPromise<FeedbackList>;
  /** A target's aggregate (`recentLimit` 1..100, default 10). */
  summary(params: { targetType: string; targetId: string; recentLimit?: number }, options?: RequestOptions): APIPromise<FeedbackSummary>;
}

/** Builds `client.feedback`. */
export function feedbackResource(caller: Caller): FeedbackResource {
  return {
    create: (params, options) => caller.call({ method: "POST", path: "/v1/feedback", body: params, idempotent: false, bearer: "key-first" }, options),
    list: (params, options) => caller.call({ method: "GET", path: "/v1/feedback", query: { ...params }, idempotent: true }, options),
    summary: (params, options) => caller.call({ method: "GET", path: "/v1/feedback/summary", query: { ...params }, idempotent: true }, options),
  };
}
