/**
 * Migration 21 on a database that predates it: of each proven reviewer's ratings of a target only
 * the latest counts in the summary from then on (the rows stay); ratings given after it replace
 * the reviewer's counted one.
 */
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { migrate } from "./migrations.js";
import { createSqliteStore } from "./store.js";
import { databaseAtVersion } from "./temp-stores.js";

const dir = join(tmpdir(), `tollgate-sqlite-feedback-ratings-${process.pid}-${Date.now()}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("sqlite feedback ratings", () => {
  it("migration 21 counts only each reviewer's latest rating of a database at version 20", async () => {
    mkdirSync(dir, { recursive: true });
    const filename = join(dir, "v20.db");
    const old = databaseAtVersion(filename, 20);
    const insert = old.prepare(
      `INSERT INTO feedback (feedback_id, target_type, target_id, category, rating, labels, verification, reviewer, created_at)
       VALUES (?, 'model', 'gpt-4o', 'general', ?, '[]', ?, ?, ?)`,
    );
    const wallet = "0x00000000000000000000000000000000000000aa";
    insert.run("fb_1", 5, "service_key", wallet, 1);
    insert.run("fb_2", 3, "anonymous", null, 2);
    insert.run("fb_3", 1, "service_key", wallet, 3);
    insert.run("fb_4", 1, "anonymous", null, 4);
    insert.run("fb_5", 2, "wallet_header", wallet, 5);
    expect(migrate(old)).toEqual([21, 22, 23]);
    old.close();

    const store = createSqliteStore({ filename });
    try {
      const target = { type: "model", id: "gpt-4o" };
      const before = await store.summarizeFeedback(target, { recentLimit: 10 });
      expect([before.count, before.ratingCount, before.ratingSum, before.ratings]).toEqual([5, 3, 6, [1, 1, 1, 0, 0]]);
      await store.insertFeedback({
        feedbackId: "fb_6",
        targetType: "model",
        targetId: "gpt-4o",
        category: "general",
        rating: 5,
        labels: [],
        verification: "service_key",
        reviewer: wallet,
        keyId: "key_1",
        chainId: 1,
        createdAt: 6,
      });
      const after = await store.summarizeFeedback(target, { recentLimit: 10 });
      expect([after.count, after.ratingCount, after.ratingSum, after.ratings]).toEqual([6, 3, 9, [1, 0, 1, 0, 1]]);
    } finally {
      await store.close();
    }
  });
});
