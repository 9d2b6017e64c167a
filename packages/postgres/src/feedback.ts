/** {@link FeedbackStore} on PostgreSQL. */
import { feedbackFromRow, type FeedbackStore, type SqlFeedbackRow } from "@tollgate/core";
import type { Migration } from "./migrations.js";
import { inTransaction, retryOnConflict, type Queryable } from "./queryable.js";
import { dec, enc, selectList, type TableName } from "./rows.js";

type FeedbackRecord = Parameters<FeedbackStore["insertFeedback"]>[0];
type Summary = Awaited<ReturnType<FeedbackStore["summarizeFeedback"]>>;
type FeedbackRow = SqlFeedbackRow<string>;

const COLS = selectList(
  "feedback_id target_type target_id category comment verification reviewer key_id",
  "rating labels chain_id created_at context metadata",
);

const toRecord = (r: FeedbackRow) => feedbackFromRow(r, dec);

/** `db` runs the statements; `txDb` (the pool itself, not a wrapper that names statements) runs the transaction of a rating. */
export function createFeedbackOps(db: Queryable, t: TableName, txDb: Queryable = db): FeedbackStore {
  const feedback = t("feedback");
  const ofTarget = `FROM ${feedback} x WHERE target_type = $1::text AND target_id = $2::text`;
  // `seq` (an identity column) breaks createdAt ties by insert order.
  const newest = `SELECT ${COLS} ${ofTarget} ORDER BY x.created_at DESC, x.seq DESC LIMIT $3::int`;
  // One statement, so one snapshot: a concurrent insert is in both parts or in neither. The groups
  // come from the covering index feedback_summary (at most 10 × 3 × 6 of them whatever the number
  // of records); the newest records from feedback_by_target.
  const summary = `
    SELECT
      (SELECT json_agg(json_build_array(category, verification, rating::text, n::text))::text
       FROM (SELECT category, verification, CASE WHEN rating_counted THEN rating END AS rating, count(*) AS n ${ofTarget} GROUP BY category, verification, rating, rating_counted) g) AS groups,
      (SELECT json_agg(row_to_json(r) ORDER BY r.sort_created DESC, r.sort_seq DESC)::text
       FROM (SELECT ${COLS}, created_at AS sort_created, seq AS sort_seq ${ofTarget} ORDER BY x.created_at DESC, x.seq DESC LIMIT $3::int) r) AS recent`;

  const insertSql = `INSERT INTO ${feedback} (feedback_id, target_type, target_id, category, rating, comment, labels, verification, reviewer, key_id, chain_id, created_at, context, metadata)
         VALUES ($1::text, $2::text, $3::text, $4::text, $5::smallint, $6::text, $7::json, $8::text, $9::text, $10::text, $11::bigint, $12::bigint, $13::json, $14::json)`;
  // A proven reviewer's earlier rating of the target stops counting (feedback_counted_rating: at most one row).
  const supersede = `UPDATE ${feedback} SET rating_counted = false
    WHERE target_type = $1::text AND target_id = $2::text AND reviewer = $3::text AND rating IS NOT NULL AND rating_counted`;

  return {
    /**
     * One INSERT; the unique feedback_id rejects a duplicate. A proven reviewer's rating first
     * un-counts its earlier one, in one transaction: when a concurrent rating of the same reviewer
     * commits first, the unique index feedback_counted_rating refuses this one and it runs again
     * (its new snapshot sees the winner, which it then replaces).
     */
    async insertFeedback(r) {
      const params = [
        r.feedbackId,
        enc(r.targetType),
        enc(r.targetId),
        enc(r.category),
        r.rating ?? null,
        enc(r.comment),
        JSON.stringify(r.labels),
        r.verification,
        r.reviewer ?? null,
        r.keyId ?? null,
        r.chainId ?? null,
        r.createdAt,
        r.context === undefined ? null : JSON.stringify(r.context),
        r.metadata === undefined ? null : JSON.stringify(r.metadata),
      ];
      if (r.rating === undefined || r.reviewer === undefined) {
        await db.query(insertSql, params);
        return;
      }
      const reviewer = r.reviewer;
      await retryOnConflict(["feedback_counted_rating"], () =>
        inTransaction(txDb, async (tx) => {
          await tx.query(supersede, [enc(r.targetType), enc(r.targetId), reviewer]);
          await tx.query(insertSql, params);
        }),
      );
    },

    async listFeedback(target, { limit }) {
      const n = Math.max(0, Math.floor(limit));
      if (n === 0) return [];
      const { rows } = await db.query<FeedbackRow>(newest, [enc(target.type), enc(target.id), n]);
      return rows.map(toRecord);
    },

    async summarizeFeedback(target, { recentLimit }) {
      const { rows } = await db.query<{ groups: string | null; recent: string | null }>(summary, [
        enc(target.type),
        enc(target.id),
        Math.max(0, Math.floor(recentLimit)),
      ]);
      const out: Summary = { count: 0, ratingCount: 0, ratingSum: 0, ratings: [0, 0, 0, 0, 0], categories: {}, verification: {}, recent: [] };
      const groups = JSON.parse(rows[0]?.groups ?? "[]") as [string, string, string | null, string][];
      for (const [rawCategory, verification, rating, count] of groups) {
        const n = Number(count);
        const category = dec(rawCategory);
        out.count += n;
        out.categories[category] = (out.categories[category] ?? 0) + n;
        const v = verification as FeedbackRecord["verification"];
        out.verification[v] = (out.verification[v] ?? 0) + n;
        if (rating !== null) {
          const value = Number(rating);
          out.ratingCount += n;
          out.ratingSum += value * n;
          out.ratings[value - 1] = (out.ratings[value - 1] ?? 0) + n;
        }
      }
      out.recent = (JSON.parse(rows[0]?.recent ?? "[]") as FeedbackRow[]).map(toRecord);
      return out;
    },
  };
}

/** Schema of this capability (migration versions 3, 10 and 21; add later changes as new versions). */
export const FEEDBACK_MIGRATIONS: readonly Migration[] = [
  {
    version: 3,
    name: "feedback",
    // feedback_by_target serves the newest-first reads; feedback_summary covers the aggregate
    // query (an index-only scan when the visibility map allows).
    sql: `
      CREATE TABLE feedback (
        seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        feedback_id  text NOT NULL UNIQUE,
        target_type  text NOT NULL,
        target_id    text NOT NULL,
        category     text NOT NULL,
        rating       smallint CHECK (rating BETWEEN 1 AND 5),
        comment      text,
        labels       json NOT NULL,
        verification text NOT NULL CHECK (verification IN ('service_key', 'wallet_header', 'anonymous')),
        reviewer     text,
        key_id       text,
        chain_id     bigint,
        created_at   bigint NOT NULL,
        CHECK ((verification = 'anonymous') = (reviewer IS NULL))
      );
      CREATE INDEX feedback_by_target ON feedback (target_type, target_id, created_at DESC, seq DESC);
      CREATE INDEX feedback_summary ON feedback (target_type, target_id, category, verification, rating);
    `,
  },
  {
    version: 10,
    name: "feedback: context and metadata",
    // JSON objects (json keeps the text as given, like labels); NULL = none given. Bounds are the service's.
    sql: `ALTER TABLE feedback ADD COLUMN context json, ADD COLUMN metadata json;`,
  },
  {
    version: 21,
    name: "feedback: one counted rating per reviewer and target",
    // Of a proven reviewer's ratings of a target only the latest counts in the summary; rows of
    // earlier versions are marked so. The unique partial index holds that to one row (and makes a
    // concurrent second rating retry), and finds the one a new rating replaces; feedback_summary
    // stays covering with the flag.
    sql: `
      ALTER TABLE feedback ADD COLUMN rating_counted boolean NOT NULL DEFAULT true;
      UPDATE feedback SET rating_counted = false
      WHERE reviewer IS NOT NULL AND rating IS NOT NULL AND seq NOT IN (
        SELECT max(seq) FROM feedback WHERE reviewer IS NOT NULL AND rating IS NOT NULL
        GROUP BY target_type, target_id, reviewer);
      CREATE UNIQUE INDEX feedback_counted_rating ON feedback (target_type, target_id, reviewer)
        WHERE rating_counted AND rating IS NOT NULL AND reviewer IS NOT NULL;
      DROP INDEX feedback_summary;
      CREATE INDEX feedback_summary ON feedback (target_type, target_id, category, verification, rating, rating_counted);
    `,
  },
];
