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
  const groups = db.prepare<[string, string], { category: string; verification: string; rating: bigint | null; counted: bigint; n: bigint }>(`
    SELECT category, verification, rating, rating_counted AS counted, COUNT(*) AS n FROM feedback
    WHERE target_type = ? AND target_id = ?
    GROUP BY category, verification, rating, rating_counted`);
  // A proven reviewer's earlier rating of the target stops counting (feedback_counted_rating: at most one row).
  const supersede = db.prepare<[string, string, string]>(`
    UPDATE feedback SET rating_counted = 0
    WHERE target_type = ? AND target_id = ? AND reviewer = ? AND rating IS NOT NULL AND rating_counted = 1`);

  // A deferred transaction: both reads see one snapshot (WAL), so `recent` agrees with the counts.
  const summarize = db.transaction((type: string, id: string, recentLimit: number): Summary => {
    const summary: Summary = { count: 0, ratingCount: 0, ratingSum: 0, ratings: [0, 0, 0, 0, 0], categories: {}, verification: {}, recent: [] };
    for (const g of groups.all(type, id)) {
      const n = Number(g.n);
      summary.count += n;
      summary.categories[g.category] = (summary.categories[g.category] ?? 0) + n;
      const v = g.verification as FeedbackRecord["verification"];
      summary.verification[v] = (summary.verification[v] ?? 0) + n;
      if (g.rating !== null && g.counted === 1n) {
        const rating = Number(g.rating);
        summary.ratingCount += n;
        summary.ratingSum += rating * n;
        summary.ratings[rating - 1] = (summary.ratings[rating - 1] ?? 0) + n;
      }
    }
    summary.recent = recentLimit > 0 ? newest.all(type, id, recentLimit).map((r) => feedbackFromRow(r)) : [];
    return summary;
  });

  const insertRecord = db.transaction((r: FeedbackRecord) => {
    if (r.rating !== undefined && r.reviewer !== undefined) supersede.run(r.targetType, r.targetId, r.reviewer);
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
  });

  return {
    async insertFeedback(r) {
      insertRecord.immediate(r);
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

/** Schema of this capability (migration versions 3, 10 and 21; add later changes as new versions). */
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
  {
    version: 21,
    name: "feedback: one counted rating per reviewer and target",
    // Of a proven reviewer's ratings of a target only the latest counts in the summary; rows of
    // earlier versions are marked so. The unique partial index holds that to one row, and finds
    // the one a new rating replaces; feedback_summary stays covering with the flag.
    sql: `
      ALTER TABLE feedback ADD COLUMN rating_counted INTEGER NOT NULL DEFAULT 1 CHECK (rating_counted IN (0, 1));
      UPDATE feedback SET rating_counted = 0
      WHERE reviewer IS NOT NULL AND rating IS NOT NULL AND seq NOT IN (
        SELECT max(seq) FROM feedback WHERE reviewer IS NOT NULL AND rating IS NOT NULL
        GROUP BY target_type, target_id, reviewer);
      CREATE UNIQUE INDEX feedback_counted_rating ON feedback (target_type, target_id, reviewer)
        WHERE rating_counted = 1 AND rating IS NOT NULL AND reviewer IS NOT NULL;
      DROP INDEX feedback_summary;
      CREATE INDEX feedback_summary ON feedback (target_type, target_id, category, verification, rating, rating_counted);
    `,
  },
];
