/** Options of the video capability (`createGateway({ video: … })`). */
import { z } from "zod";

/** Waits `ms` or until `signal` aborts (then resolves early). Injectable so tests drive time. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The zod schema of `options.video`. */
export const videoOptionsSchema = z
  .strictObject({
    /** How long one poller holds a job's lease. @default 15000 */
    leaseMs: z.number().int().min(100).max(600_000).optional(),
    /**
     * The upstream is asked about a job at most once per this many ms, however many clients read
     * its status or stream it (in between they get the stored state). 0: every read polls. @default 2000
     */
    minPollMs: z.number().int().min(0).max(600_000).optional(),
    /** Background refresh of pending jobs, in ms; 0 turns it off (GET and the stream still poll). @default 5000 */
    pollerIntervalMs: z.number().int().min(0).max(600_000).optional(),
    /**
     * Status streams one client (IP, IPv6 /64; see `trustedProxies`) may hold open at once; one more
     * gets 429 `rate_limited`. Each open stream reads the store every `pollIntervalMs`. @default 16
     */
    streamsPerClient: z.number().int().min(1).max(1_000_000).optional(),
    /** The wait between stream polls (tests pass one that moves a manual clock). */
    sleep: z.custom<Sleep>((v) => typeof v === "function", "must be a function (ms, signal) => Promise<void>").optional(),
  })
  .optional();
export type VideoOptions = z.output<typeof videoOptionsSchema>;
