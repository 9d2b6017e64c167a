/** The feedback part of the Store. */

/** How the reviewer of a feedback record was established (docs/discovery.md "Feedback"). */
export type FeedbackVerification = "service_key" | "wallet_header" | "anonymous";

/** One stored feedback record. Records are immutable once inserted. */
export interface FeedbackRecord {
  /** `fb_…`; unique. */
  feedbackId: string;
  targetType: string;
  /** 1..512 characters. */
  targetId: string;
  category: string;
  /** Integer 1..5, when given. */
  rating?: number;
  /** Trimmed, 1..4000 characters, when given. */
  comment?: string;
  /** At most 20 labels (the store keeps whatever it is given, in order). */
  labels: string[];
  /**
   * Where the feedback comes from (request id, payment intent, model, endpoint…): a JSON object
   * the service bounds (at most 50 keys, 8 KiB serialized); the store keeps it verbatim. Absent
   * when none was given. Stored in the `context` column (migration 10).
   */
  context?: Record<string, unknown>;
  /** Free-form client data: a JSON object, bounded like `context`. Absent when none was given. */
  metadata?: Record<string, unknown>;
  verification: FeedbackVerification;
  /**
   * Lower-case wallet of the reviewer; absent when `anonymous`. Stored for moderation and abuse
   * handling; the HTTP API never returns it.
   */
  reviewer?: string;
  /** The service key that vouched for the reviewer (`service_key` only). */
  keyId?: string;
  /** The chain of that key, or of the `x-chain-id` paired with the wallet header. */
  chainId?: number;
  createdAt: number;
}

/** What feedback is about: a target type and an id within it. */
export interface FeedbackTarget {
  type: string;
  id: string;
}

/** The aggregates of one target, as {@link FeedbackStore.summarizeFeedback} computes them. */
export interface FeedbackAggregates {
  /** Records of the target. */
  count: number;
  /**
   * Ratings counted: every anonymous one, and of each proven reviewer (a `reviewer` address) only
   * the latest rating of the target, so one wallet is one voice however often it rates.
   */
  ratingCount: number;
  /** Sum of the ratings counted (an exact integer; the caller derives the average). */
  ratingSum: number;
  /** Ratings counted per value: index 0 counts rating 1, …, index 4 rating 5. */
  ratings: [number, number, number, number, number];
  /** Records per category; only categories that occur. */
  categories: Record<string, number>;
  /** Records per verification mode; only modes that occur. */
  verification: Partial<Record<FeedbackVerification, number>>;
}

/** Feedback persistence: append-only records with newest-first reads and per-target aggregates. */
export interface FeedbackStore {
  /**
   * Inserts one record; rejects on a duplicate `feedbackId`. A rated record of a proven reviewer
   * replaces that reviewer's earlier rating of the target in the aggregates (the records stay, and
   * are listed as they were). Atomic: of concurrent ratings by one reviewer, exactly one counts.
   */
  insertFeedback(record: FeedbackRecord): Promise<void>;
  /**
   * Up to `limit` records of `target`, newest first: `createdAt` descending, and among equal
   * `createdAt` the later insert first. Never scans other targets.
   */
  listFeedback(target: FeedbackTarget, options: { limit: number }): Promise<FeedbackRecord[]>;
  /**
   * The aggregates of `target` plus its `recentLimit` newest records (ordered as
   * {@link listFeedback}), read from one consistent snapshot: a concurrent insert is either in
   * both the aggregates and `recent`, or in neither. Computed without loading every record of the
   * target (SQL aggregates over an index; running totals in memory).
   */
  summarizeFeedback(target: FeedbackTarget, options: { recentLimit: number }): Promise<FeedbackAggregates & { recent: FeedbackRecord[] }>;
}
