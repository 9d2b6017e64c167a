/** `client.videos`: paid video submission, status polling and the status stream (docs/media.md). */
import { APIPromise } from "../api-promise.js";
import { segment, type Caller } from "../http/caller.js";
import { fileField } from "../http/encoding.js";
import type { PaidRequestOptions, RequestOptions } from "../options.js";
import { VideoStream, type VideoJobStatus } from "../sse.js";
import type { Receipt } from "../types/common.js";
import { paidOptions, paidPost, type FileInput, type ModelSelection } from "./media.js";

/** The body of `videos.create`. */
export interface VideoCreateParams extends ModelSelection {
  prompt: string;
  /** Clip length (billed per second). @default the model's default, else 4 */
  seconds?: number;
  size?: string;
  resolution?: string;
  ratio?: string;
  /** An initial image, for models that take one. */
  image?: FileInput;
}

/** A submitted job (202), billed once at submission. */
export interface VideoJob {
  /** `vid_…`. */
  id: string;
  object: "video.generation";
  status: VideoJobStatus;
  /** Unix seconds. */
  created: number;
  model: string;
  receipt: Receipt;
}

/** A job's state (`videos.get`, not billed). */
export interface VideoStatus {
  id: string;
  object: "video.generation";
  status: VideoJobStatus;
  progress?: number;
  /**
   * Set when completed: where the file is. For the gateway's own providers, the path of
   * `GET /v1/videos/{id}/content` on the gateway (fetch it with {@link VideosResource.content}).
   */
  url?: string;
  /** Set when failed. */
  error?: string;
}

/** Options of `videos.stream`: the gateway's polling of the job, and the call's options. */
export interface VideoStreamOptions extends RequestOptions {
  /** How often the gateway polls the job, ms (clamped 500..30000). @default 2000 */
  pollIntervalMs?: number;
  /** How long the gateway streams before `svc.error` `stream_timeout`, ms (clamped 5000..3600000). @default 600000 */
  streamTimeoutMs?: number;
}

/** The `client.videos` group. */
export interface VideosResource {
  /** Submits a generation (202 with the job and its receipt). */
  create(params: VideoCreateParams, options?: PaidRequestOptions): APIPromise<VideoJob>;
  /** Polls a job (404 `job_not_found` when unknown). */
  get(id: string, options?: RequestOptions): APIPromise<VideoStatus>;
  /**
   * Streams the job's status changes until a terminal state: an AsyncIterable of typed events
   * (see {@link VideoStream}). `timeoutMs` bounds the wait for the stream's headers only.
   */
  stream(id: string, options?: VideoStreamOptions): VideoStream;
  /** Downloads a completed job's file, relayed by the gateway (409 `invalid_state` before it is completed; not billed). */
  content(id: string, options?: RequestOptions): APIPromise<VideoFile>;
}

/** A video file and its content type. */
export interface VideoFile {
  video: Uint8Array;
  contentType: string;
}

/** Builds `client.videos`. */
export function videosResource(caller: Caller): VideosResource {
  return {
    create: (params, options) => {
      const body = params.image === undefined ? params : { ...params, image: fileField(params.image) };
      return caller.call(paidPost("/v1/videos/generations", body), paidOptions(options));
    },
    get: (id, options) => caller.call({ method: "GET", path: `/v1/videos/${segment(id)}`, idempotent: true }, options),
    stream: (id, options = {}) => {
      const { pollIntervalMs, streamTimeoutMs, ...rest } = options;
      const query = { pollIntervalMs, timeoutMs: streamTimeoutMs };
      return new VideoStream(() => caller.open({ method: "GET", path: `/v1/videos/${segment(id)}/stream`, query, idempotent: true }, rest));
    },
    content: (id, options) =>
      APIPromise.map(
        caller.call<Uint8Array>({ method: "GET", path: `/v1/videos/${segment(id)}/content`, idempotent: true, kind: "bytes" }, options).withResponse(),
        (video, meta) => ({
          video,
          contentType: meta.headers.get("content-type") ?? "application/octet-stream",
        }),
      ),
  };
}
