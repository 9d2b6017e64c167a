/** Conformance tests of the video-job part of a store: leases with an exact winner count. */
import { expect } from "vitest";
import type { VideoJobRecord } from "@tollgate/core";
import { T0, uniq, type StoreTest } from "./store-fixtures.js";

function makeJob(overrides: Partial<VideoJobRecord> = {}): VideoJobRecord {
  return { id: `vid_${uniq()}`, model: "sora-2", provider: "openai", upstream: "local", upstreamId: `up_${uniq()}`, status: "queued", createdAt: T0, updatedAt: T0, ...overrides };
}

export const videoTests: Record<string, StoreTest> = {
  "insertVideoJob then getVideoJob returns it; unknown is null": async ({ store }) => {
    const job = makeJob({ receipt: { id: "rcpt_1", finalAmountWei: "100" } });
    await store.insertVideoJob(job);
    expect(await store.getVideoJob(job.id)).toEqual(job);
    expect(await store.getVideoJob("vid_nope")).toBeNull();
    await expect(store.insertVideoJob(job)).rejects.toThrow();
  },
  "one lease holder at a time: 20 concurrent owners, exactly one wins; a lapsed lease can be taken": async ({ store }) => {
    const job = makeJob();
    await store.insertVideoJob(job);
    const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => store.leaseVideoJob({ id: job.id, owner: `w${i}`, now: T0, leaseMs: 1000 })));
    expect(wins.filter(Boolean)).toHaveLength(1);
    const winner = `w${wins.indexOf(true)}`;
    expect(await store.leaseVideoJob({ id: job.id, owner: winner, now: T0 + 10, leaseMs: 1000 })).toBe(true);
    expect(await store.leaseVideoJob({ id: job.id, owner: "late", now: T0 + 500, leaseMs: 1000 })).toBe(false);
    expect(await store.leaseVideoJob({ id: job.id, owner: "late", now: T0 + 1011, leaseMs: 1000 })).toBe(true);
  },
  "updateVideoJob needs the lease, and a terminal status ends updates and leases": async ({ store }) => {
    const job = makeJob();
    await store.insertVideoJob(job);
    expect(await store.updateVideoJob({ id: job.id, owner: "a", now: T0 + 1, status: "processing" })).toBeNull();
    expect(await store.leaseVideoJob({ id: job.id, owner: "a", now: T0, leaseMs: 1000 })).toBe(true);
    const mid = await store.updateVideoJob({ id: job.id, owner: "a", now: T0 + 2, status: "processing", progress: 40 });
    expect(mid).toMatchObject({ status: "processing", progress: 40, updatedAt: T0 + 2 });
    const done = await store.updateVideoJob({ id: job.id, owner: "a", now: T0 + 3, status: "completed", progress: 100, url: "https://x/v.mp4" });
    expect(done).toMatchObject({ status: "completed", progress: 100, url: "https://x/v.mp4" });
    expect(done?.leaseOwner).toBeUndefined();
    expect(await store.updateVideoJob({ id: job.id, owner: "a", now: T0 + 4, status: "failed", error: "late" })).toBeNull();
    expect(await store.leaseVideoJob({ id: job.id, owner: "b", now: T0 + 5, leaseMs: 1000 })).toBe(false);
    expect((await store.getVideoJob(job.id))?.status).toBe("completed");
  },
  "listPendingVideoJobs returns unleased non-terminal jobs, oldest update first": async ({ store }) => {
    const a = makeJob({ updatedAt: T0 + 2 });
    const b = makeJob({ updatedAt: T0 + 1 });
    const c = makeJob({ status: "completed", updatedAt: T0 });
    for (const j of [a, b, c]) await store.insertVideoJob(j);
    expect(await store.leaseVideoJob({ id: a.id, owner: "x", now: T0, leaseMs: 100 })).toBe(true);
    const ids = (await store.listPendingVideoJobs({ now: T0 + 50, limit: 10 })).map((j) => j.id);
    expect(ids).toContain(b.id);
    expect(ids).not.toContain(a.id);
    expect(ids).not.toContain(c.id);
    const later = (await store.listPendingVideoJobs({ now: T0 + 101, limit: 10 })).map((j) => j.id);
    expect(later.indexOf(b.id)).toBeLessThan(later.indexOf(a.id));
  },
  "listPendingVideoJobs takes the least recently leased first, whatever their updates": async ({ store }) => {
    const stuck = makeJob({ updatedAt: T0 });
    const fresh = makeJob({ updatedAt: T0 + 5 });
    const never = makeJob({ updatedAt: T0 + 9 });
    for (const j of [stuck, fresh, never]) await store.insertVideoJob(j);
    // Both leased, and neither updated since (their polls failed): the one leased longer ago goes first.
    expect(await store.leaseVideoJob({ id: fresh.id, owner: "x", now: T0 + 10, leaseMs: 100 })).toBe(true);
    expect(await store.leaseVideoJob({ id: stuck.id, owner: "x", now: T0 + 20, leaseMs: 100 })).toBe(true);
    const ids = (await store.listPendingVideoJobs({ now: T0 + 500, limit: 10 })).map((j) => j.id);
    expect(ids).toEqual([never.id, fresh.id, stuck.id]);
    expect((await store.listPendingVideoJobs({ now: T0 + 500, limit: 2 })).map((j) => j.id)).toEqual([never.id, fresh.id]);
  },
};
