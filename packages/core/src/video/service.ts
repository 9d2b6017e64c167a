/**
 * Video jobs: submission (billed once, at submission), refresh from the upstream under a lease
 * (one poller per job at a time, across processes sharing a store), and the SSE status stream.
 */
import type { CapabilityDeps } from "../capability.js";
import { GatewayError } from "../errors.js";
import { toHex, randomBytes } from "../ids.js";
import type { VideoJobRecord } from "../store/video-types.js";
import type { Upstreams } from "../media/upstreams.js";
import type { VideoContent, VideoProvider } from "../providers/types.js";
import { endingWith } from "../iterables.js";
import type { Sleep } from "./options.js";

/** Stream limits of docs/media.md (ms). */
/** How long after its submission an upstream's "not found" for a job ends it (before: read lag). */
const LOST_AFTER_MS = 60_000;

export const STREAM_LIMITS = { pollIntervalMs: { def: 2000, min: 500, max: 30_000 }, timeoutMs: { def: 600_000, min: 5000, max: 3_600_000 } } as const;

/** Where a completed job's file is served when the gateway relays it: a path on the gateway (resolve it against the base URL the client calls). */
export const contentPath = (id: string) => `/v1/videos/${encodeURIComponent(id)}/content`;

/**
 * The public view of a job (`GET /v1/videos/{id}`). `relayed`: the gateway serves the file of the
 * job's upstream ({@link VideoService.relays}), so a completed job's `url` is {@link contentPath},
 * never the upstream's own address (which needs the operator's credentials and names its host).
 */
export function jobView(job: VideoJobRecord, relayed = false) {
  const url = relayed && job.status === "completed" ? contentPath(job.id) : job.url;
  return {
    id: job.id,
    object: "video.generation",
    status: job.status,
    ...(job.progress === undefined ? {} : { progress: job.progress }),
    ...(url === undefined ? {} : { url }),
    ...(job.error === undefined ? {} : { error: job.error }),
  };
}

/**
 * One event of a job's status stream: `event` is the status or error event name (compat decides
 * it), `data` the JSON text of the state or the error object. The route writes them as SSE frames.
 */
export interface VideoStreamEvent {
  readonly event: string;
  readonly data: unknown;
}

/** What the video capability offers to routes and application code. */
export interface VideoService {
  /**
   * The job, refreshed from its upstream when it is pending, its last poll is older than
   * `video.minPollMs` and this instance wins the lease (concurrent reads share one poll). 404 `job_not_found`.
   */
  get(id: string): Promise<VideoJobRecord>;
  /** Stores a submitted job. */
  insert(job: VideoJobRecord): Promise<void>;
  /**
   * Status events on each change until a terminal state or the timeout (an error event), or `signal`
   * (client gone: polling stops). With `client`, the stream counts as one of that client's
   * `video.streamsPerClient` while it runs; one started past them is a `too_many_streams` error event.
   */
  stream(id: string, options: { pollIntervalMs: number; timeoutMs: number; signal?: AbortSignal; client?: string }): AsyncIterable<VideoStreamEvent>;
  /** Throws 429 `rate_limited` when `client` already holds its `video.streamsPerClient` open streams; an unknown client passes. */
  assertStreamRoom(client: string | undefined): void;
  /** Refreshes up to `limit` pending jobs once (the background poller's tick). */
  pollPending(limit?: number): Promise<number>;
  /** Whether the job's upstream serves its file through the gateway (its provider has `videoContent`). */
  relays(job: VideoJobRecord): boolean;
  /**
   * The file of a completed job, from its upstream with the operator's credentials (`range`
   * passed on). 404 `job_not_found`; 409 `invalid_state` when the job is not completed or its
   * upstream serves no file through the gateway; the upstream's errors as `videoContent` gives them.
   * With `client`, the download counts as one of that client's `video.streamsPerClient` until its
   * body ends (429 `rate_limited` past them).
   */
  content(id: string, options?: { range?: string; signal?: AbortSignal; client?: string }): Promise<VideoContent>;
}

const defaultSleep: Sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });

/** Creates the video service over the media upstreams. */
export function createVideoService(deps: CapabilityDeps, upstreams: Upstreams): VideoService {
  const options = deps.options.video ?? {};
  const owner = `gw_${toHex(randomBytes(8))}`;
  const leaseMs = options.leaseMs ?? 15_000;
  const minPollMs = options.minPollMs ?? 2_000;
  const sleep = options.sleep ?? defaultSleep;
  const streamsPerClient = options.streamsPerClient ?? 16;
  /** Open status streams per client. */
  const streams = new Map<string, number>();
  const events = deps.compat === "compose" ? { status: "compose.video.status", error: "compose.error" } : { status: "video.status", error: "svc.error" };

  /** The refresh of each job under way in this process: concurrent readers share it. */
  const refreshing = new Map<string, Promise<VideoJobRecord>>();
  /** When this process last asked about each pending job, whatever came of it (a failed poll does not move `updatedAt`). */
  const attempted = new Map<string, number>();
  const MAX_ATTEMPTED = 10_000;

  /**
   * The job as the upstream has it now, asked at most once per `minPollMs` whoever reads it:
   * status reads and streams are public, and each upstream poll spends the operator's provider
   * quota (a failed poll counts: a rate-limited provider is not asked again at once). Within that
   * interval, and while another instance holds the job's lease, the stored job is the answer;
   * concurrent reads in this process share one poll.
   */
  function refresh(job: VideoJobRecord): Promise<VideoJobRecord> {
    const now = deps.clock.now();
    if (job.status === "completed" || job.status === "failed") {
      attempted.delete(job.id);
      return Promise.resolve(job);
    }
    const running = refreshing.get(job.id);
    if (running) return running;
    if (now - Math.max(job.updatedAt, attempted.get(job.id) ?? 0) < minPollMs) return Promise.resolve(job);
    // A failing upstream (429, 5xx) is asked once per interval too; the oldest entries go first past the cap.
    attempted.delete(job.id);
    if (attempted.size >= MAX_ATTEMPTED) attempted.delete(attempted.keys().next().value as string);
    attempted.set(job.id, now);
    // Not cancelled when one reader leaves: the others wait for the same answer (the upstream's timeout bounds it).
    const poll = pollUpstream(job).finally(() => refreshing.delete(job.id));
    refreshing.set(job.id, poll);
    return poll;
  }

  async function pollUpstream(job: VideoJobRecord): Promise<VideoJobRecord> {
    const now = deps.clock.now();
    if (!(await deps.store.leaseVideoJob({ id: job.id, owner, now, leaseMs }))) return job;
    let state;
    try {
      state = await upstreams.videoByName(job.upstream).getVideo(job.upstreamId);
    } catch (error) {
      // An upstream that answers it no longer knows the job (deleted, expired, lost) ends it, past a
      // minute after its submission (a store may lag behind its own answer): it would be polled for
      // ever. Any other failed poll leaves the job as it was; the next poll tries again.
      const status = error instanceof GatewayError ? error.details?.["upstreamStatus"] : undefined;
      if ((status === 404 || status === 410) && now - job.createdAt > LOST_AFTER_MS) state = { status: "failed" as const, error: `the upstream no longer knows this job (HTTP ${status})` };
      else {
        if (!(error instanceof GatewayError)) deps.logger.error({ err: error, jobId: job.id }, "video poll failed");
        return job;
      }
    }
    try {
      const updated = await deps.store.updateVideoJob({
        id: job.id,
        owner,
        now: deps.clock.now(),
        status: state.status,
        ...(state.progress === undefined ? {} : { progress: state.progress }),
        ...(state.url === undefined ? {} : { url: state.url }),
        ...(state.error === undefined ? {} : { error: state.error }),
      });
      return updated ?? ((await deps.store.getVideoJob(job.id)) as VideoJobRecord);
    } catch (error) {
      // A store that cannot take the answer leaves the job as it was, for this reader and the poller.
      deps.logger.error({ err: error, jobId: job.id }, "video poll: the job's new state could not be stored");
      return job;
    }
  }

  /** A job's status events until a terminal state, the timeout or `signal` (see {@link VideoService.stream}). */
  async function* watch(id: string, pollIntervalMs: number, timeoutMs: number, signal: AbortSignal | undefined): AsyncGenerator<VideoStreamEvent> {
    const deadline = deps.clock.now() + timeoutMs;
    let last = "";
    for (;;) {
      if (signal?.aborted) return;
      let job: VideoJobRecord;
      try {
        job = await service.get(id);
      } catch (error) {
        if (signal?.aborted) return;
        // The stream ends with an error event (then [DONE]) instead of being cut.
        deps.logger.error({ err: error, jobId: id }, "video stream: the job could not be read");
        yield { event: events.error, data: { code: "stream_failed", message: `The job's status could not be read; poll GET /v1/videos/${id}.` } };
        break;
      }
      const { id: jobId, object: _object, ...state } = jobView(job, service.relays(job));
      const text = JSON.stringify({ jobId, ...state });
      if (text !== last) {
        last = text;
        yield { event: events.status, data: text };
      }
      if (job.status === "failed") {
        yield { event: events.error, data: { code: "video_failed", message: job.error ?? "The video job failed." } };
        break;
      }
      if (job.status === "completed") break;
      const left = deadline - deps.clock.now();
      if (left <= 0) {
        yield { event: events.error, data: { code: "stream_timeout", message: `The job was not finished within ${timeoutMs} ms; poll GET /v1/videos/${id}.` } };
        break;
      }
      await sleep(Math.min(pollIntervalMs, left), signal);
    }
  }

  /** The job's video provider, or undefined when it is no longer configured. */
  const upstreamOf = (job: VideoJobRecord): VideoProvider | undefined => {
    try {
      return upstreams.videoByName(job.upstream);
    } catch {
      return undefined;
    }
  };

  /** Counts one open stream or download of `client`; the function returned gives it back (once). */
  const hold = (client: string): (() => void) => {
    streams.set(client, (streams.get(client) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = (streams.get(client) ?? 1) - 1;
      if (left > 0) streams.set(client, left);
      else streams.delete(client);
    };
  };

  const service: VideoService = {
    async get(id) {
      const job = await deps.store.getVideoJob(id);
      if (!job) throw new GatewayError("job_not_found", `Video job ${id} does not exist.`, { param: "id" });
      return refresh(job);
    },
    insert: (job) => deps.store.insertVideoJob(job),
    assertStreamRoom(client) {
      if (client !== undefined && (streams.get(client) ?? 0) >= streamsPerClient)
        throw new GatewayError("rate_limited", `${client} already holds ${streamsPerClient} video status streams open; close one, or poll GET /v1/videos/{id}.`, {
          headers: { "retry-after": "1" },
          details: { streamsPerClient },
        });
    },
    async *stream(id, { pollIntervalMs, timeoutMs, signal, client }) {
      if (client === undefined) return yield* watch(id, pollIntervalMs, timeoutMs, signal);
      const open = streams.get(client) ?? 0;
      // Streams that passed the route's check together may start past the cap: the later ones end at once.
      if (open >= streamsPerClient) {
        yield { event: events.error, data: { code: "too_many_streams", message: `${client} already holds ${streamsPerClient} video status streams open.` } };
        return;
      }
      const release = hold(client);
      try {
        yield* watch(id, pollIntervalMs, timeoutMs, signal);
      } finally {
        release();
      }
    },
    relays(job) {
      return job.upstream !== undefined && typeof upstreamOf(job)?.videoContent === "function";
    },
    async content(id, { client, ...contentOptions } = {}) {
      const job = await service.get(id);
      const provider = upstreamOf(job);
      if (job.status !== "completed")
        throw new GatewayError("invalid_state", `Video job ${id} is ${job.status}: its file can be fetched once it is completed.`, { param: "id" });
      if (!provider?.videoContent) throw new GatewayError("invalid_state", `Video job ${id}'s file is served by its upstream, at its url.`, { param: "id" });
      if (client === undefined) return provider.videoContent(job.upstreamId, contentOptions);
      service.assertStreamRoom(client);
      const release = hold(client);
      try {
        const file = await provider.videoContent(job.upstreamId, contentOptions);
        return Object.assign({}, file, { body: endingWith(file.body, release) });
      } catch (error) {
        release();
        throw error;
      }
    },
    async pollPending(limit = 50) {
      const jobs = await deps.store.listPendingVideoJobs({ now: deps.clock.now(), limit });
      for (const job of jobs) {
        // One job that cannot be polled does not hold back the others.
        await refresh(job).catch((err: unknown) => deps.logger.error({ err, jobId: job.id }, "video poll failed"));
      }
      return jobs.length;
    },
  };

  const every = options.pollerIntervalMs ?? 5000;
  if (every > 0) {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      service
        .pollPending()
        .catch((err: unknown) => deps.logger.error({ err }, "video poller failed"))
        .finally(() => (running = false));
    }, every);
    (timer as { unref?: () => void }).unref?.();
    deps.onClose(() => clearInterval(timer));
  }
  return service;
}
