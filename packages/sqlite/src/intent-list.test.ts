/**
 * A wallet's intent listing over a long history on a real file: a filtered page examines at most
 * INTENT_LIST_SCAN intents (the default the HTTP route uses), so a key whose only intent is the
 * wallet's oldest is reached page by page, each page one bounded range of the owner index; and a
 * page deep in the history starts at its cursor. (plans.test.ts pins the plans; the conformance
 * suite checks the same paging on every store with a small scan.)
 */
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { INTENT_LIST_SCAN, type IntentCursor } from "@tollgate/core";
import { makeKey } from "@tollgate/testing";
import { createSqliteStore } from "./store.js";

const dir = join(tmpdir(), `tollgate-sqlite-intent-list-${process.pid}-${Date.now()}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OWNER = "0x00000000000000000000000000000000000000a1";
const T = Date.UTC(2026, 10, 1, 12);
const N = 2 * INTENT_LIST_SCAN + 500;
const id = (i: number) => `pi_${String(i).padStart(6, "0")}`;

describe("sqlite intent listing over a long history", () => {
  it("a filtered page stops after INTENT_LIST_SCAN intents with a cursor; paging on reaches the oldest match", async () => {
    mkdirSync(dir, { recursive: true });
    const filename = join(dir, "history.db");
    const setup = createSqliteStore({ filename });
    for (const keyId of ["key_busy", "key_old"])
      await setup.insertKey(makeKey({ keyId, owner: OWNER, budgetLimit: 10n ** 12n, createdAt: T, expiresAt: T + 86_400_000 }));
    await setup.close();
    const db = new Database(filename);
    const insert = db.prepare(
      `INSERT INTO intents (intent_id, key_id, owner, chain_id, status, max_amount, final_amount, fingerprint, request, created_at, expires_at, finished_at)
       VALUES (?, ?, '${OWNER}', 8453, 'settled', 2, 1, 'fp', 'null', ?, ?, ?)`,
    );
    // Intent 0, the oldest, is key_old's only one; the N - 1 after it are key_busy's.
    db.transaction(() => {
      for (let i = 0; i < N; i++) insert.run(id(i), i === 0 ? "key_old" : "key_busy", T + i, T + i + 60_000, T + i + 1);
    })();
    db.close();

    const store = createSqliteStore({ filename });
    try {
      const pages: Array<{ ids: string[]; next: IntentCursor | null }> = [];
      let cursor: IntentCursor | null = null;
      do {
        const page = await store.listIntents(OWNER, { limit: 50, keyId: "key_old", ...(cursor ? { cursor } : {}) });
        pages.push({ ids: page.intents.map((i) => i.intentId), next: page.nextCursor });
        cursor = page.nextCursor;
      } while (cursor && pages.length < 10);
      // Newest first: each page examined the next INTENT_LIST_SCAN intents and moved on, with a
      // cursor naming the millisecond it stopped at, not the (hidden) intent there.
      expect(pages).toEqual([
        { ids: [], next: { createdAt: T + N - INTENT_LIST_SCAN, intentId: "" } },
        { ids: [], next: { createdAt: T + N - 2 * INTENT_LIST_SCAN, intentId: "" } },
        { ids: [id(0)], next: null },
      ]);

      // A page deep in the history starts at its cursor.
      const deep = await store.listIntents(OWNER, { limit: 3, cursor: { createdAt: T + 3, intentId: id(3) } });
      expect(deep).toEqual({
        intents: [expect.objectContaining({ intentId: id(2) }), expect.objectContaining({ intentId: id(1) }), expect.objectContaining({ intentId: id(0) })],
        nextCursor: null,
      });
    } finally {
      await store.close();
    }
  });
});
