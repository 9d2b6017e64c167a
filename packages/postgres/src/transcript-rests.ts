/** {@link TranscriptRestStore} on PostgreSQL: each operation one statement. */
import type { TranscriptRestRecord, TranscriptRestStore } from "@tollgate/core";
import type { Migration } from "./migrations.js";
import type { Queryable } from "./queryable.js";
import { selectList, type TableName } from "./rows.js";

interface RestRow {
  id: string;
  version: string;
  paid: string;
  rest: string;
  result: string;
  expires_at: string;
}

const COLS = selectList("id version rest result", "paid expires_at");
const fromRow = (r: RestRow): TranscriptRestRecord => ({
  id: r.id,
  version: r.version,
  paid: BigInt(r.paid),
  rest: r.rest,
  result: r.result,
  expiresAt: Number(r.expires_at),
});

/** The transcription rests of x402 calls cut to what they paid for. */
export function createTranscriptRestOps(db: Queryable, t: TableName): TranscriptRestStore {
  const rests = t("transcript_rests");
  return {
    /**
     * One statement: the other expired entries are deleted, and the entry inserted; an entry already
     * under the id is replaced (with `onlyIfAbsent`, only when it has expired).
     */
    async putTranscriptRest(r, now, onlyIfAbsent = false, maxEntries = Number.MAX_SAFE_INTEGER) {
      const { rows } = await db.query(
        `WITH gone AS (DELETE FROM ${rests} WHERE expires_at <= $7::bigint AND id <> $1::text)
         INSERT INTO ${rests} AS r (id, version, paid, rest, result, expires_at)
         VALUES ($1::text, $2::text, $3::numeric, $4::text, $5::text, $6::bigint)
         ON CONFLICT (id) DO UPDATE SET version = excluded.version, paid = excluded.paid, rest = excluded.rest, result = excluded.result, expires_at = excluded.expires_at
         WHERE NOT $8::boolean OR r.expires_at <= $7::bigint
         RETURNING 1`,
        [r.id, r.version, r.paid.toString(), r.rest, r.result, r.expiresAt, now, onlyIfAbsent],
      );
      if (rows.length !== 1) return false;
      if (maxEntries === Number.MAX_SAFE_INTEGER) return true;
      // Beyond the bound, the least paid go (this one too if it paid least): a second statement, so concurrent puts may pass it by a few.
      const { rows: left } = await db.query(
        `WITH over AS (SELECT id FROM ${rests} ORDER BY paid, expires_at, id LIMIT GREATEST(0, (SELECT COUNT(*) FROM ${rests}) - $1::bigint)),
              gone AS (DELETE FROM ${rests} WHERE id IN (SELECT id FROM over) RETURNING id)
         SELECT 1 FROM ${rests} WHERE id = $2::text AND version = $3::text AND NOT EXISTS (SELECT 1 FROM gone WHERE gone.id = $2::text)`,
        [maxEntries, r.id, r.version],
      );
      return left.length === 1;
    },
    async getTranscriptRest(id, now) {
      const { rows } = await db.query<RestRow>(`SELECT ${COLS} FROM ${rests} WHERE id = $1::text AND expires_at > $2::bigint`, [id, now]);
      return rows[0] ? fromRow(rows[0]) : null;
    },
    /** One conditional DELETE (version and freshness re-checked on the latest version). */
    async takeTranscriptRest(id, version, now) {
      const { rows } = await db.query(`DELETE FROM ${rests} WHERE id = $1::text AND version = $2::text AND expires_at > $3::bigint RETURNING 1`, [
        id,
        version,
        now,
      ]);
      return rows.length === 1;
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
        id          text PRIMARY KEY,
        version     text NOT NULL,
        paid        numeric(78, 0) NOT NULL,
        rest        text NOT NULL,
        result      text NOT NULL,
        expires_at  bigint NOT NULL
      );
      CREATE INDEX transcript_rests_expiry ON transcript_rests (expires_at);
    `,
  },
];
