/** The video-job part of the memory store. */
import type { VideoJobRecord, VideoStore } from "./video-types.js";

const terminal = (s: string) => s === "completed" || s === "failed";

/**
 * In-memory video jobs (synchronous inside each method: that is their atomicity). `insert` is the
 * synchronous insert behind `insertVideoJob`, for the other parts of the memory store that insert
 * a job in the same step as their own change (settle, x402 mark): it throws on a duplicate id
 * before changing anything, so they call it before their own first write.
 */
export function createMemoryVideoStore(): { store: VideoStore; insert: (job: VideoJobRecord) => void } {
  const jobs = new Map<string, VideoJobRecord>();
  const copy = (j: VideoJobRecord): VideoJobRecord => ({ ...j });
  const insert = (job: VideoJobRecord): void => {
    if (jobs.has(job.id)) throw new Error(`video job ${job.id} already exists`);
    jobs.set(job.id, copy(job));
  };
  const store: VideoStore = {
    async insertVideoJob(job) {
      insert(job);
    },
    async getVideoJob(id) {
      const j = jobs.get(id);
      return j ? copy(j) : null;
    },
    async leaseVideoJob({ id, owner, now, leaseMs }) {
      const j = jobs.get(id);
      if (!j || terminal(j.status)) return false;
      if (j.leaseOwner !== undefined && j.leaseOwner !== owner && (j.leaseUntil ?? 0) > now) return false;
      j.leaseOwner = owner;
      j.leaseUntil = now + leaseMs;
      return true;
    },
    async updateVideoJob({ id, owner, now, status, progress, url, error }) {
      const j = jobs.get(id);
      if (!j || terminal(j.status) || j.leaseOwner !== owner) return null;
      j.status = status;
      j.updatedAt = now;
      if (progress !== undefined) j.progress = progress;
      if (url !== undefined) j.url = url;
      if (error !== undefined) j.error = error;
      if (terminal(status)) {
        delete j.leaseOwner;
        delete j.leaseUntil;
      }
      return copy(j);
    },
    async listPendingVideoJobs({ now, limit }) {
      return [...jobs.values()]
        .filter((j) => !terminal(j.status) && (j.leaseOwner === undefined || (j.leaseUntil ?? 0) <= now))
        .sort((a, b) => (a.leaseUntil ?? 0) - (b.leaseUntil ?? 0) || a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : 1))
        .slice(0, limit)
        .map(copy);
    },
  };
  return { store, insert };
}
