/** {@link VideoStore} on SQLite: each guarded method is one conditional UPDATE. */
import type Database from "better-sqlite3";
import { videoJobFromRow, type SqlVideoJobRow, type VideoJobRecord, type VideoStore } from "@tollgate/core";
import type { Migration } from "./migrations.js";

type VideoRow = SqlVideoJobRow<bigint>;

/**
 * The insert of a new job as a synchronous function (throws on a duplicate id), for
 * `insertVideoJob` and for the transactions that insert a job together with their own change
 * (settle in ledger.ts, the x402 mark in x402.ts).
 */
export function videoJobInserter(db: Database.Database): (job: VideoJobRecord) => void {
  const insert = db.prepare(`
    INSERT INTO video_jobs (id, model, provider, upstream, upstream_id, status, progress, url, error, receipt, created_at, updated_at)
    VALUES (@id, @model, @provider, @upstream, @upstream_id, @status, @progress, @url, @error, @receipt, @created_at, @updated_at)`);
  return (job) => {
    insert.run({
      id: job.id,
      model: job.model,
      provider: job.provider,
      upstream: job.upstream,
      upstream_id: job.upstreamId,
      status: job.status,
      progress: job.progress ?? null,
      url: job.url ?? null,
      error: job.error ?? null,
      receipt: job.receipt === undefined ? null : JSON.stringify(job.receipt),
      created_at: job.createdAt,
      updated_at: job.updatedAt,
    });
  };
}

export function createVideoOps(db: Database.Database): VideoStore {
  const insert = videoJobInserter(db);
  const byId = db.prepare<[string], VideoRow>("SELECT * FROM video_jobs WHERE id = ?");
  const lease = db.prepare<{ id: string; owner: string; now: number; until: number }>(`
    UPDATE video_jobs SET lease_owner = @owner, lease_until = @until
    WHERE id = @id AND status NOT IN ('completed', 'failed')
      AND (lease_owner IS NULL OR lease_owner = @owner OR lease_until <= @now)`);
  const update = db.prepare<Record<string, unknown>, VideoRow>(`
    UPDATE video_jobs SET status = @status, updated_at = @now,
      progress = COALESCE(@progress, progress), url = COALESCE(@url, url), error = COALESCE(@error, error),
      lease_owner = CASE WHEN @status IN ('completed', 'failed') THEN NULL ELSE lease_owner END,
      lease_until = CASE WHEN @status IN ('completed', 'failed') THEN NULL ELSE lease_until END
    WHERE id = @id AND lease_owner = @owner AND status NOT IN ('completed', 'failed')
    RETURNING *`);
  const pending = db.prepare<{ now: number; limit: number }, VideoRow>(`
    SELECT * FROM video_jobs
    WHERE status IN ('queued', 'processing') AND (lease_owner IS NULL OR lease_until <= @now)
    ORDER BY COALESCE(lease_until, 0), updated_at, id LIMIT @limit`);
  return {
    async insertVideoJob(job) {
      insert(job);
    },
    async getVideoJob(id) {
      const row = byId.get(id);
      return row ? videoJobFromRow(row) : null;
    },
    async leaseVideoJob({ id, owner, now, leaseMs }) {
      return lease.run({ id, owner, now, until: now + leaseMs }).changes === 1;
    },
    async updateVideoJob({ id, owner, now, status, progress, url, error }) {
      const row = update.get({ id, owner, now, status, progress: progress ?? null, url: url ?? null, error: error ?? null });
      return row ? videoJobFromRow(row) : null;
    },
    async listPendingVideoJobs({ now, limit }) {
      return pending.all({ now, limit }).map((r) => videoJobFromRow(r));
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
        id          TEXT PRIMARY KEY,
        model       TEXT NOT NULL,
        provider    TEXT NOT NULL,
        upstream    TEXT NOT NULL,
        upstream_id TEXT NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('queued', 'processing', 'completed', 'failed')),
        progress    INTEGER,
        url         TEXT,
        error       TEXT,
        receipt     TEXT,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        lease_owner TEXT,
        lease_until INTEGER
      ) STRICT;
      CREATE INDEX video_jobs_pending ON video_jobs (updated_at, id) WHERE status IN ('queued', 'processing');
    `,
  },
];
