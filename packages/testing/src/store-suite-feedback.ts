/** Conformance tests of {@link FeedbackStore}. */
import { expect } from "vitest";
import type { FeedbackRecord, FeedbackTarget } from "@tollgate/core";
import { OWNER, seededRandom, shuffle, T0, uniq, type StoreTest } from "./store-fixtures.js";

const TARGET: FeedbackTarget = { type: "model", id: "openai/gpt-4o" };

/** A fresh anonymous record on {@link TARGET} at T0. */
function makeFeedback(overrides: Partial<FeedbackRecord> = {}): FeedbackRecord {
  return {
    feedbackId: `fb_${uniq()}`,
    targetType: TARGET.type,
    targetId: TARGET.id,
    category: "general",
    labels: [],
    verification: "anonymous",
    createdAt: T0,
    ...overrides,
  };
}

export const feedbackTests = {
  "insertFeedback then listFeedback returns every field, reviewer included; records are copies": async ({ store }) => {
    const full = makeFeedback({
      rating: 4,
      comment: "fast and cheap — ünïcödé ✓",
      labels: ["latency", "eu-west"],
      category: "latency",
      verification: "service_key",
      reviewer: OWNER,
      keyId: "key_abc",
      chainId: 8453,
      context: { requestId: "req_1", chainId: 8453, endpoint: { method: "POST", path: "/v1/chat" } },
      metadata: { sdk: "ts", tags: ["a", 1, true, null], nested: { deep: { x: 1.5 } } },
    });
    const bare = makeFeedback({ rating: 1, createdAt: T0 + 1 });
    await store.insertFeedback(full);
    await store.insertFeedback(bare);
    const listed = await store.listFeedback(TARGET, { limit: 10 });
    expect(listed).toEqual([bare, full]);
    expect(Object.keys(listed[0]!).sort()).toEqual(Object.keys(bare).sort());
    listed[1]!.labels.push("mutated");
    listed[1]!.comment = "changed";
    expect((await store.listFeedback(TARGET, { limit: 10 }))[1]).toEqual(full);
  },

  "context and metadata round-trip exactly (unicode, NUL, nesting, empty objects) and are copies": async ({ store }) => {
    const odd = makeFeedback({
      rating: 2,
      context: { "k\u0000ey": "a\u0000b", emoji: "✓ 🚀", quote: '"\\', big: 9007199254740991, neg: -0.25 },
      metadata: {},
    });
    await store.insertFeedback(odd);
    const [listed] = await store.listFeedback(TARGET, { limit: 10 });
    expect(listed).toEqual(odd);
    (listed!.context as Record<string, unknown>).emoji = "changed";
    const { recent } = await store.summarizeFeedback(TARGET, { recentLimit: 10 });
    expect(recent).toEqual([odd]);
  },

  "insertFeedback rejects a duplicate feedbackId and keeps the first": async ({ store }) => {
    const first = makeFeedback({ rating: 5 });
    await store.insertFeedback(first);
    await expect(store.insertFeedback({ ...first, rating: 1 })).rejects.toThrow();
    expect(await store.listFeedback(TARGET, { limit: 10 })).toEqual([first]);
    expect((await store.summarizeFeedback(TARGET, { recentLimit: 10 })).ratingSum).toBe(5);
  },

  "listFeedback is newest first, insert order breaking ties, limited, and per target": async ({ store }) => {
    const random = seededRandom(3);
    // Inserted out of time order; groups of three share a createdAt.
    const times = shuffle(
      Array.from({ length: 12 }, (_, i) => T0 + Math.floor(i / 3) * 1000),
      random,
    );
    const inserted: FeedbackRecord[] = [];
    for (const createdAt of times) {
      const record = makeFeedback({ createdAt, comment: `c${inserted.length}` });
      inserted.push(record);
      await store.insertFeedback(record);
      // Other targets never show up: same id under another type, another id under the same type.
      await store.insertFeedback(makeFeedback({ targetType: "endpoint", createdAt }));
      await store.insertFeedback(makeFeedback({ targetId: `${TARGET.id}-2`, createdAt }));
    }
    const expected = inserted
      .map((r, i) => ({ r, i }))
      .sort((a, b) => b.r.createdAt - a.r.createdAt || b.i - a.i)
      .map(({ r }) => r.feedbackId);
    expect((await store.listFeedback(TARGET, { limit: 100 })).map((r) => r.feedbackId)).toEqual(expected);
    expect((await store.listFeedback(TARGET, { limit: 5 })).map((r) => r.feedbackId)).toEqual(expected.slice(0, 5));
    expect(await store.listFeedback(TARGET, { limit: 0 })).toEqual([]);
    expect(await store.listFeedback({ type: "agent", id: TARGET.id }, { limit: 10 })).toEqual([]);
  },

  "summarizeFeedback counts, sums and distributes exactly; recent is newest first": async ({ store }) => {
    const ratings = [5, 4, 4, undefined, 1, undefined, 5];
    const categories = ["general", "bug", "general", "latency", "bug", "general", "quality"];
    const modes = ["anonymous", "service_key", "wallet_header", "anonymous", "service_key", "anonymous", "wallet_header"] as const;
    const records = ratings.map((rating, i) =>
      makeFeedback({
        ...(rating === undefined ? { comment: `only text ${i}` } : { rating }),
        category: categories[i]!,
        verification: modes[i]!,
        // A reviewer each: one reviewer's later rating would replace its earlier one.
        ...(modes[i] === "anonymous" ? {} : { reviewer: `0x${String(i).padStart(40, "0")}`, chainId: 1 }),
        createdAt: T0 + i * 10,
      }),
    );
    for (const r of records) await store.insertFeedback(r);
    await store.insertFeedback(makeFeedback({ targetType: "endpoint", rating: 1 }));
    const summary = await store.summarizeFeedback(TARGET, { recentLimit: 3 });
    expect(summary).toEqual({
      count: 7,
      ratingCount: 5,
      ratingSum: 19,
      ratings: [1, 0, 0, 2, 2],
      categories: { general: 3, bug: 2, latency: 1, quality: 1 },
      verification: { anonymous: 3, service_key: 2, wallet_header: 2 },
      recent: [records[6], records[5], records[4]],
    });
    const all = await store.summarizeFeedback(TARGET, { recentLimit: 100 });
    expect(all.recent.map((r) => r.feedbackId)).toEqual([...records].reverse().map((r) => r.feedbackId));
    expect((await store.summarizeFeedback(TARGET, { recentLimit: 0 })).recent).toEqual([]);
  },

  "a proven reviewer's latest rating of a target replaces its earlier ones in the aggregates; anonymous ones all count; every record stays": async ({
    store,
  }) => {
    const other = "0x00000000000000000000000000000000000000cc";
    const byOwner = (rating: number | undefined, at: number) =>
      makeFeedback({
        ...(rating === undefined ? { comment: "text only" } : { rating }),
        verification: "service_key",
        reviewer: OWNER,
        chainId: 1,
        createdAt: T0 + at,
      });
    const records = [
      byOwner(5, 0),
      makeFeedback({ rating: 2, createdAt: T0 + 1 }),
      byOwner(1, 2),
      makeFeedback({ rating: 4, verification: "wallet_header", reviewer: other, chainId: 1, createdAt: T0 + 3 }),
      byOwner(undefined, 4),
      makeFeedback({ rating: 2, createdAt: T0 + 5 }),
      // The owner's rating of another target counts there, and does not touch this one.
      makeFeedback({ targetType: "endpoint", rating: 3, verification: "service_key", reviewer: OWNER, chainId: 1, createdAt: T0 + 6 }),
    ];
    for (const r of records) await store.insertFeedback(r);
    const summary = await store.summarizeFeedback(TARGET, { recentLimit: 10 });
    expect({ count: summary.count, ratingCount: summary.ratingCount, ratingSum: summary.ratingSum, ratings: summary.ratings }).toEqual({
      count: 6,
      ratingCount: 4,
      ratingSum: 9,
      ratings: [1, 2, 0, 1, 0],
    });
    expect(summary.verification).toEqual({ service_key: 3, anonymous: 2, wallet_header: 1 });
    expect((await store.listFeedback(TARGET, { limit: 10 })).map((r) => r.rating)).toEqual([2, undefined, 4, 1, 2, 5]);
    expect((await store.summarizeFeedback({ type: "endpoint", id: TARGET.id }, { recentLimit: 1 })).ratingSum).toBe(3);
    // Rating again: the newest replaces the one that counted.
    await store.insertFeedback(byOwner(4, 7));
    const again = await store.summarizeFeedback(TARGET, { recentLimit: 1 });
    expect([again.ratingCount, again.ratingSum, again.ratings]).toEqual([4, 12, [0, 2, 0, 2, 0]]);
  },

  "concurrent ratings of one target by one reviewer: exactly one counts": async ({ store }) => {
    const ratings = Array.from({ length: 20 }, (_, i) =>
      makeFeedback({ rating: (i % 5) + 1, verification: "service_key", reviewer: OWNER, chainId: 1, createdAt: T0 + i }),
    );
    await Promise.all(ratings.map((r) => store.insertFeedback(r)));
    const summary = await store.summarizeFeedback(TARGET, { recentLimit: 100 });
    expect(summary.count).toBe(20);
    expect(summary.ratingCount).toBe(1);
    expect(summary.ratings.reduce((a, b) => a + b, 0)).toBe(1);
    expect(summary.ratingSum).toBeGreaterThanOrEqual(1);
    expect(summary.ratingSum).toBeLessThanOrEqual(5);
  },

  "summarizeFeedback of a target without records is all zeros": async ({ store }) => {
    await store.insertFeedback(makeFeedback({ rating: 3 }));
    expect(await store.summarizeFeedback({ type: "model", id: "nobody" }, { recentLimit: 10 })).toEqual({
      count: 0,
      ratingCount: 0,
      ratingSum: 0,
      ratings: [0, 0, 0, 0, 0],
      categories: {},
      verification: {},
      recent: [],
    });
  },

  "target ids are compared exactly (case, long ids, separators)": async ({ store }) => {
    const long = "x".repeat(512);
    const ids = ["Model/A", "model/a", long, "a\u0000b", "a:b"];
    for (const id of ids) await store.insertFeedback(makeFeedback({ targetId: id, rating: 2 }));
    for (const id of ids) {
      const [only] = await store.listFeedback({ type: TARGET.type, id }, { limit: 10 });
      expect(only?.targetId).toBe(id);
      expect((await store.summarizeFeedback({ type: TARGET.type, id }, { recentLimit: 10 })).count).toBe(1);
    }
  },

  "concurrent inserts on one target are all counted": async ({ store }) => {
    const records = Array.from({ length: 50 }, (_, i) => makeFeedback({ rating: (i % 5) + 1, createdAt: T0 + (i % 7) }));
    await Promise.all(records.map((r) => store.insertFeedback(r)));
    const summary = await store.summarizeFeedback(TARGET, { recentLimit: 100 });
    expect(summary.count).toBe(50);
    expect(summary.ratings).toEqual([10, 10, 10, 10, 10]);
    expect(summary.ratingSum).toBe(150);
    expect(new Set(summary.recent.map((r) => r.feedbackId)).size).toBe(50);
  },
} satisfies Record<string, StoreTest>;
