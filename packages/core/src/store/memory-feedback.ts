/** The feedback part of the memory store. */
import type { FeedbackAggregates, FeedbackRecord, FeedbackStore, FeedbackTarget } from "./feedback-types.js";

/** One target's records (oldest first, by createdAt then insert order), its running totals, and each proven reviewer's counted rating. */
interface Bucket {
  readonly records: { record: FeedbackRecord; seq: number }[];
  readonly totals: FeedbackAggregates;
  readonly counted: Map<string, number>;
}

/** A deep copy: the JSON objects `context` and `metadata` are cloned through JSON, as a database would. */
const copy = (r: FeedbackRecord): FeedbackRecord => ({
  ...r,
  labels: [...r.labels],
  ...(r.context === undefined ? {} : { context: JSON.parse(JSON.stringify(r.context)) as Record<string, unknown> }),
  ...(r.metadata === undefined ? {} : { metadata: JSON.parse(JSON.stringify(r.metadata)) as Record<string, unknown> }),
});
const slot = (t: FeedbackTarget): string => `${t.type}\u0000${t.id}`;

function emptyTotals(): FeedbackAggregates {
  return { count: 0, ratingCount: 0, ratingSum: 0, ratings: [0, 0, 0, 0, 0], categories: {}, verification: {} };
}

/**
 * In-memory feedback operations (synchronous inside each method: that is their atomicity). Each
 * target keeps running totals, so a summary costs O(recentLimit) whatever the number of records.
 */
export function createMemoryFeedbackStore(): FeedbackStore {
  const buckets = new Map<string, Bucket>();
  const ids = new Set<string>();
  let seq = 0;

  const newestFirst = (bucket: Bucket | undefined, limit: number): FeedbackRecord[] => {
    if (!bucket) return [];
    const out: FeedbackRecord[] = [];
    const n = Math.max(0, Math.floor(limit));
    for (let i = bucket.records.length - 1; i >= 0 && out.length < n; i--) out.push(copy(bucket.records[i]!.record));
    return out;
  };

  return {
    async insertFeedback(record) {
      if (ids.has(record.feedbackId)) throw new Error(`memory store: duplicate feedbackId ${record.feedbackId}`);
      ids.add(record.feedbackId);
      const key = slot({ type: record.targetType, id: record.targetId });
      let bucket = buckets.get(key);
      if (!bucket) buckets.set(key, (bucket = { records: [], totals: emptyTotals(), counted: new Map() }));
      // Records usually arrive in time order (append); a late createdAt is placed by binary search.
      const { records } = bucket;
      let lo = 0;
      let hi = records.length;
      if (hi > 0 && records[hi - 1]!.record.createdAt > record.createdAt) {
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (records[mid]!.record.createdAt <= record.createdAt) lo = mid + 1;
          else hi = mid;
        }
      } else lo = hi;
      records.splice(lo, 0, { record: copy(record), seq: ++seq });
      const t = bucket.totals;
      t.count += 1;
      if (record.rating !== undefined) {
        // A proven reviewer's new rating replaces its earlier one in the totals.
        const earlier = record.reviewer === undefined ? undefined : bucket.counted.get(record.reviewer);
        if (earlier !== undefined) {
          t.ratingCount -= 1;
          t.ratingSum -= earlier;
          t.ratings[earlier - 1] = (t.ratings[earlier - 1] ?? 1) - 1;
        }
        if (record.reviewer !== undefined) bucket.counted.set(record.reviewer, record.rating);
        t.ratingCount += 1;
        t.ratingSum += record.rating;
        t.ratings[record.rating - 1] = (t.ratings[record.rating - 1] ?? 0) + 1;
      }
      t.categories[record.category] = (t.categories[record.category] ?? 0) + 1;
      t.verification[record.verification] = (t.verification[record.verification] ?? 0) + 1;
    },

    async listFeedback(target, { limit }) {
      return newestFirst(buckets.get(slot(target)), limit);
    },

    async summarizeFeedback(target, { recentLimit }) {
      const bucket = buckets.get(slot(target));
      const t = bucket?.totals ?? emptyTotals();
      return {
        count: t.count,
        ratingCount: t.ratingCount,
        ratingSum: t.ratingSum,
        ratings: [...t.ratings],
        categories: { ...t.categories },
        verification: { ...t.verification },
        recent: newestFirst(bucket, recentLimit),
      };
    },
  };
}
