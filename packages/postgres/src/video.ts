/** {@link VideoStore} on PostgreSQL: each guarded method is one conditional UPDATE. */
import { videoJobFromRow, type SqlVideoJobRow, type VideoJobRecord, type VideoStore } from "@tollgate/core";
import type { Migration } from "./migrations.js";
import type { Queryable } from "./queryable.js";
import { castPlaceholders, dec, enc, selectList, toJson, type TableName } from "./rows.js";

type VideoRow = SqlVideoJobRow<string>;

const COLS = selectList("id model provider upstream upstream_id status url error lease_owner", "progress receipt created_at updated_at lease_until");

const toJob = (r: VideoRow) => videoJobFromRow(r, dec);

const TERMINAL = "('completed', 'failed')";

/** The columns of a job insert, in the order of {@link videoJobValues}. */
export const VIDEO_JOB_INSERT_COLUMNS = "id, model, provider, upstream, upstream_id, status, progress, url, error, receipt, created_at, updated_at";

/**
 * The twelve placeholders of a job insert starting at `$first`, cast to the column types (also for
 * an `INSERT … SELECT` whose row only exists when a guard passed: settle, the x402 mark).
 */
export function videoJobPlaceholders(first: number): string {
  return castPlaceholders(["text", "text", "text", "text", "text", "text", "double precision", "text", "text", "json", "bigint", "bigint"], first);
}

/** The values of {@link videoJobPlaceholders}; all NULL when there is no job to insert. */
export function videoJobValues(job: VideoJobRecord | undefined): (string | number | null)[] {
  if (!job) return Array.from({ length: 12 }, () => null);
  return [job.id, job.model, job.provider, job.upstream, job.upstreamId, job.status, job.progress ?? null, enc(job.url), enc(job.error), toJson(job.receipt), job.createdAt, job.updatedAt];
}

export function createVideoOps(db: Queryable, t: TableName): VideoStore {
  const jobs = t("video_jobs");
  return {
    async insertVideoJob(job) {
      await db.query(`INSERT INTO ${jobs} (${VIDEO_JOB_INSERT_COLUMNS}) VALUES (${videoJobPlaceholders(1)})`, videoJobValues(job));
    },

    async getVideoJob(id) {
      const { rows } = await db.query<VideoRow>(`SELECT ${COLS} FROM ${jobs} WHERE id = $1::text`, [id]);
      return rows[0] ? toJob(rows[0]) : null;
    },

    /**
     * One conditional UPDATE. A concurrent leaser waits for the row lock and then re-checks the
     * guard on the latest version, so of N owners exactly one wins. (Not SKIP LOCKED: the holder
     * renewing its lease while it updates the job must wait and win, not be told it lost.)
     */
    async leaseVideoJob({ id, owner, now, leaseMs }) {
      const { rows } = await db.query(
        `UPDATE ${jobs} SET lease_owner = $2::text, lease_until = $4::bigint
         WHERE id = $1::text AND status NOT IN ${TERMINAL}
           AND (lease_owner IS NULL OR lease_owner = $2::text OR lease_until <= $3::bigint)
         RETURNING 1`,
        [id, owner, now, now + leaseMs],
      );
      return rows.length === 1;
    },

    /** One conditional UPDATE on the lease holder and a non-terminal status. */
    async updateVideoJob({ id, owner, now, status, progress, url, error }) {
      const { rows } = await db.query<VideoRow>(
        `UPDATE ${jobs} SET status = $4::text, updated_at = $3::bigint,
           progress = COALESCE($5::double precision, progress), url = COALESCE($6::text, url), error = COALESCE($7::text, error),
           lease_owner = CASE WHEN $4::text IN ${TERMINAL} THEN NULL ELSE lease_owner END,
           lease_until = CASE WHEN $4::text IN ${TERMINAL} THEN NULL ELSE lease_until END
         WHERE id = $1::text AND lease_owner = $2::text AND status NOT IN ${TERMINAL}
         RETURNING ${COLS}`,
        [id, owner, now, status, progress ?? null, enc(url), enc(error)],
      );
      return rows[0] ? toJob(rows[0]) : null;
    },

    async listPendingVideoJobs({ now, limit }) {
      const { rows } = await db.query<VideoRow>(
        `SELECT ${COLS} FROM ${jobs} x
         WHERE status IN ('queued', 'processing') AND (lease_owner IS NULL OR lease_until <= $1::bigint)
         ORDER BY COALESCE(x.lease_until, 0), x.updated_at, x.id LIMIT $2::int`,
        [now, Math.max(0, Math.floor(limit))],
      );
      return rows.map(toJob);
    },
  };
}

/** Schema of this capability (migration version 2; add later changes as new versions). */
export const VIDEO_MIGRATIONS: readonly Migration[] = [
  {
    version: 2,
    name: "video jobs",
    sql: `
      CREATE TABLE video_jobs (
        id          text COLLATE "C" PRIMARY KEY,
        model       text NOT NULL,
        provider    text NOT NULL,
        upstream    text NOT NULL,
        upstream_id text NOT NULL,
        status      text NOT NULL CHECK (status IN ('queued', 'processing', 'completed', 'failed')),
        progress    double precision,
        url         text,
        error       text,
        receipt     json,
        created_at  bigint NOT NULL,
        updated_at  bigint NOT NULL,
        lease_owner text,
        lease_until bigint
      );
      CREATE INDEX video_jobs_pending ON video_jobs (updated_at, id) WHERE status IN ('queued', 'processing');
    `,
  },
];
