/** {@link TranscriptRestStore} on SQLite: each operation one statement, or one BEGIN IMMEDIATE transaction. */
import type Database from "better-sqlite3";
import type { TranscriptRestRecord, TranscriptRestStore } from "@tollgate/core";
import type { Migration } from "./migrations.js";

interface RestRow {
  id: string;
  version: string;
  paid: bigint;
  rest: string;
  result: string;
  expires_at: bigint;
}

const fromRow = (r: RestRow): TranscriptRestRecord => ({
  id: r.id,
  version: r.version,
  paid: r.paid,
  rest: r.rest,
  result: r.result,
  expiresAt: Number(r.expires_at),
});

/** The transcription rests of x402 calls cut to what they paid for. */
export function createTranscriptRestOps(db: Database.Database): TranscriptRestStore {
  const prune = db.prepare("DELETE FROM transcript_rests WHERE expires_at <= ?");
  const replace = db.prepare(`
    INSERT INTO transcript_rests (id, version, paid, rest, result, expires_at) VALUES (@id, @version, @paid, @rest, @result, @expires_at)
    ON CONFLICT (id) DO UPDATE SET version = excluded.version, paid = excluded.paid, rest = excluded.rest, result = excluded.result, expires_at = excluded.expires_at`);
  const insert = db.prepare(`
    INSERT INTO transcript_rests (id, version, paid, rest, result, expires_at) VALUES (@id, @version, @paid, @rest, @result, @expires_at)
    ON CONFLICT (id) DO NOTHING`);
  const get = db.prepare<[string, number], RestRow>("SELECT * FROM transcript_rests WHERE id = ? AND expires_at > ?");
  const take = db.prepare("DELETE FROM transcript_rests WHERE id = ? AND version = ? AND expires_at > ?");
  const count = db.prepare<[], bigint>("SELECT COUNT(*) FROM transcript_rests").pluck();
  const evict = db.prepare<[number]>("DELETE FROM transcript_rests WHERE id IN (SELECT id FROM transcript_rests ORDER BY paid, expires_at, id LIMIT ?)");
  const has = db.prepare<[string, string], bigint>("SELECT 1 FROM transcript_rests WHERE id = ? AND version = ?").pluck();
  /** Expired entries go first, so that an expired one never blocks an `onlyIfAbsent` put; the least paid go last, beyond the bound. */
  const put = db.transaction(
    (params: { id: string; version: string } & Record<string, unknown>, now: number, onlyIfAbsent: boolean, maxEntries: number): boolean => {
      prune.run(now);
      if ((onlyIfAbsent ? insert : replace).run(params).changes !== 1) return false;
      const over = Number(count.get()!) - maxEntries;
      if (over > 0) evict.run(over);
      return has.get(params.id, params.version) !== undefined;
    },
  );
  return {
    async putTranscriptRest(r, now, onlyIfAbsent = false, maxEntries = Number.MAX_SAFE_INTEGER) {
      return put.immediate(
        { id: r.id, version: r.version, paid: r.paid, rest: r.rest, result: r.result, expires_at: r.expiresAt },
        now,
        onlyIfAbsent,
        maxEntries,
      );
    },
    async getTranscriptRest(id, now) {
      const row = get.get(id, now);
      return row ? fromRow(row) : null;
    },
    async takeTranscriptRest(id, version, now) {
      return take.run(id, version, now).changes === 1;
    },
  };
}

/** Schema of this capability (migration version 23; add later changes as new versions). */
export const TRANSCRIPT_REST_MIGRATIONS: readonly Migration[] = [
  {
    version: 23,
    name: "transcription rests kept in the store",
    sql: `
      CREATE TABLE transcript_rests (
        id          TEXT PRIMARY KEY,
        version     TEXT NOT NULL,
        paid        INTEGER NOT NULL,
        rest        TEXT NOT NULL,
        result      TEXT NOT NULL,
        expires_at  INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX transcript_rests_expiry ON transcript_rests (expires_at);
    `,
  },
];
