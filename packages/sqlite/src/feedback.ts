/** {@link FeedbackStore} on SQLite. */
import type Database from "better-sqlite3";
import type { Migration } from "./migrations.js";
import { feedbackFromRow, type FeedbackStore, type SqlFeedbackRow } from "@tollgate/core";

type FeedbackRecord = Parameters<FeedbackStore["insertFeedback"]>[0];
type Summary = Awaited<ReturnType<FeedbackStore["summarizeFeedback"]>>;
type FeedbackRow = SqlFeedbackRow<bigint>;

export function createFeedbackOps(db: Database.Database): FeedbackStore {
  const insert = db.prepare(`
    INSERT INTO feedback (feedback_id, target_type, target_id, category, rating, comment, labels, verification, reviewer, key_id, chain_id, created_at, context, metadata)
    VALUES (@feedback_id, @target_type, @target_id, @category, @rating, @comment, @labels, @verification, @reviewer, @key_id, @chain_id, @created_at, @context, @metadata)`);
  // `seq` (the rowid) breaks createdAt ties by insert order; both ride on the feedback_by_target index.
  const newest = db.prepare<[string, string, number], FeedbackRow>(`
    SELECT * FROM feedback WHERE target_type = ? AND target_id = ?
    ORDER BY created_at DESC, seq DESC LIMIT ?`);
  // One pass over the covering index feedback_summary, already in GROUP BY order: no table
  // lookups and no sort, at most 10 × 3 × 6 groups whatever the number of records.
  const groups = db.prepare<[string, string], { category: string; verification: string; rating: bigint | null; n: bigint }>(`
    SELECT category, verification, rating, COUNT(*) AS n FROM feedback
    WHERE target_type = ? AND target_id = ?
    GROUP BY category, verification, rating`);

  // A deferred transaction: both reads see one snapshot (WAL), so `recent` agrees with the counts.
  const summarize = db.transaction((type: string, id: string, recentLimit: number): Summary => {
    const summary: Summary = { count: 0, ratingCount: 0, ratingSum: 0, ratings: [0, 0, 0, 0, 0], categories: {}, verification: {}, recent: [] };
    for (const g of groups.all(type, id)) {
      const n = Number(g.n);
      summary.count += n;
      summary.categories[g.category] = (summary.categories[g.category] ?? 0) + n;
      const v = g.verification as FeedbackRecord["verification"];
      summary.verification[v] = (summary.verification[v] ?? 0) + n;
      if (g.rating !== null) {
        const rating = Number(g.rating);
        summary.ratingCount += n;
        summary.ratingSum += rating * n;
        summary.ratings[rating - 1] = (summary.ratings[rating - 1] ?? 0) + n;
      }
    }
    summary.recent = recentLimit > 0 ? newest.all(type, id, recentLimit).map((r) => feedbackFromRow(r)) : [];
    return summary;
  });

  return {
    async insertFeedback(r) {
      insert.run({
        feedback_id: r.feedbackId,
        target_type: r.targetType,
        target_id: r.targetId,
        category: r.category,
        rating: r.rating ?? null,
        comment: r.comment ?? null,
        labels: JSON.stringify(r.labels),
        verification: r.verification,
        reviewer: r.reviewer ?? null,
        key_id: r.keyId ?? null,
        chain_id: r.chainId ?? null,
        created_at: r.createdAt,
        context: r.context === undefined ? null : JSON.stringify(r.context),
        metadata: r.metadata === undefined ? null : JSON.stringify(r.metadata),
      });
    },

    async listFeedback(target, { limit }) {
      const n = Math.max(0, Math.floor(limit));
      return n === 0 ? [] : newest.all(target.type, target.id, n).map((r) => feedbackFromRow(r));
    },

    async summarizeFeedback(target, { recentLimit }) {
      return summarize(target.type, target.id, Math.max(0, Math.floor(recentLimit)));
    },
  };
}

/** Schema of this capability (migration versions 3 and 10; add later changes as new versions). */
export const FEEDBACK_MIGRATIONS: readonly Migration[] = [
  {
    version: 3,
    name: "feedback",
    // `seq` is an explicit rowid alias so that the insert order used as a tie-break survives
    // VACUUM. feedback_by_target serves the newest-first reads (rowid is implied as its last
    // column); feedback_summary covers the aggregate query so it never touches the table.
    sql: `
      CREATE TABLE feedback (
        seq          INTEGER PRIMARY KEY,
        feedback_id  TEXT NOT NULL UNIQUE,
        target_type  TEXT NOT NULL,
        target_id    TEXT NOT NULL,
        category     TEXT NOT NULL,
        rating       INTEGER CHECK (rating BETWEEN 1 AND 5),
        comment      TEXT,
        labels       TEXT NOT NULL,
        verification TEXT NOT NULL CHECK (verification IN ('service_key', 'wallet_header', 'anonymous')),
        reviewer     TEXT,
        key_id       TEXT,
        chain_id     INTEGER,
        created_at   INTEGER NOT NULL,
        CHECK ((verification = 'anonymous') = (reviewer IS NULL))
      ) STRICT;
      CREATE INDEX feedback_by_target ON feedback (target_type, target_id, created_at);
      CREATE INDEX feedback_summary ON feedback (target_type, target_id, category, verification, rating);
    `,
  },
  {
    version: 10,
    name: "feedback: context and metadata",
    // JSON objects as text; NULL = none given (rows of version 3 read as absent). Bounds are the service's.
    sql: `
      ALTER TABLE feedback ADD COLUMN context TEXT CHECK (context IS NULL OR json_valid(context));
      ALTER TABLE feedback ADD COLUMN metadata TEXT CHECK (metadata IS NULL OR json_valid(metadata));
    `,
  },
];
