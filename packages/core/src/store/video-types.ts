/** The video-job part of the Store. */

/** Where a video job stands. `completed` and `failed` are terminal. */
export type VideoJobStatus = "queued" | "processing" | "completed" | "failed";

/** A video generation job, billed at submission, then polled upstream until terminal. */
export interface VideoJobRecord {
  /** `vid_…` */
  id: string;
  model: string;
  /** Catalog provider of the card. */
  provider: string;
  /** Configured upstream provider name that runs the job. */
  upstream: string;
  /** The upstream's job id. */
  upstreamId: string;
  status: VideoJobStatus;
  /** Whole percent, 0..100 (providers round an upstream's fraction). */
  progress?: number;
  url?: string;
  error?: string;
  /** JSON receipt of the submission charge. */
  receipt?: unknown;
  createdAt: number;
  updatedAt: number;
  /** Holder and expiry of the polling lease (one poller at a time). */
  leaseOwner?: string;
  leaseUntil?: number;
}

/** Video jobs. */
export interface VideoStore {
  /** Inserts a new job. Rejects on a duplicate id. */
  insertVideoJob(job: VideoJobRecord): Promise<void>;
  /** The job, or null if unknown. */
  getVideoJob(id: string): Promise<VideoJobRecord | null>;
  /**
   * Takes the polling lease of a non-terminal job for `owner` until `now + leaseMs` when it is
   * free or lapsed (or already held by `owner`). Single native atomic operation; returns false
   * when another owner holds a live lease or the job is terminal; of N concurrent callers with
   * distinct owners exactly one wins.
   */
  leaseVideoJob(input: { id: string; owner: string; now: number; leaseMs: number }): Promise<boolean>;
  /**
   * Records the upstream state of a job, only while `owner` holds its lease and the job is not
   * terminal; releases the lease when the new status is terminal. Single native atomic operation;
   * returns the updated job, or null when the guard fails.
   */
  updateVideoJob(input: { id: string; owner: string; now: number; status: VideoJobStatus; progress?: number; url?: string; error?: string }): Promise<VideoJobRecord | null>;
  /**
   * Up to `limit` non-terminal jobs whose lease is free or lapsed at `now`: jobs never leased first,
   * then the least recently leased (a job whose polls keep failing takes its turn after the
   * others), then the oldest update.
   */
  listPendingVideoJobs(input: { now: number; limit: number }): Promise<VideoJobRecord[]>;
}
