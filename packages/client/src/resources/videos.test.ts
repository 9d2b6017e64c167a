/**
 * `client.videos` against a real gateway on a port: paid submission, polling, and the SSE stream
 * as an AsyncIterable — typed events to `[DONE]`, the failure event, breaking out (the gateway
 * stops polling), `abort()`, the caller's signal, and a 404 before the stream starts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError, PaymentRequiredError, UserAbortError, type TollgateClient, type VideoStreamEvent } from "../index.js";
import { DAY, startGateway, thrown, type Seen, type TestGateway } from "../testing/harness.js";

let gw: TestGateway;
/** Every stream wait of the gateway, in ms of its manual clock. */
const sleeps: number[] = [];

beforeAll(async () => {
  gw = await startGateway((clock) => ({
    media: { providers: { local: { type: "local", videoDurationMs: 10_000 } } },
    video: {
      pollerIntervalMs: 0,
      // Each poll wait moves the manual clock, then lets real time pass so a client can leave mid-stream.
      sleep: (ms, signal) => {
        sleeps.push(ms);
        clock.advance(ms);
        return new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 15);
          signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
        });
      },
    },
  }));
});
afterAll(() => gw?.close());

async function payer(): Promise<TollgateClient & { calls: Seen[]; keyId: string }> {
  const key = await (await gw.signedIn()).keys.create({ budgetLimit: 100_000_000n, expiresAt: gw.clock.now() + DAY, purpose: "api" });
  return Object.assign(gw.client({ apiKey: key.token }), { keyId: key.keyId });
}

async function collect(stream: AsyncIterable<VideoStreamEvent>): Promise<VideoStreamEvent[]> {
  const out: VideoStreamEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe("videos", () => {
  it("create (202, billed once), get (not billed), stream: typed status events then the end at [DONE]", async () => {
    const client = await payer();
    const { data: job, meta } = await client.videos.create({ model: "sora-2", prompt: "a paper boat" }).withResponse();
    expect(meta.status).toBe(202);
    expect(job).toEqual({ id: expect.stringMatching(/^vid_/), object: "video.generation", status: "queued", created: Math.floor(gw.clock.now() / 1000), model: "sora-2", receipt: meta.receipt });
    expect(job.receipt.providerAmountWei).toBe("400000");
    expect(meta.budget?.used).toBe(BigInt(job.receipt.finalAmountWei));
    expect(await client.videos.get(job.id)).toEqual({ id: job.id, object: "video.generation", status: "queued", progress: 0 });

    sleeps.length = 0;
    const stream = client.videos.stream(job.id, { pollIntervalMs: 2000 });
    const events = await collect(stream);
    expect(stream.meta?.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(stream.meta?.requestId).toMatch(/^req_/);
    const status = (data: object) => ({ type: "status", event: "video.status", data: { jobId: job.id, ...data } });
    expect(events).toEqual([
      status({ status: "queued", progress: 0 }),
      ...[20, 40, 60, 80].map((progress) => status({ status: "processing", progress })),
      status({ status: "completed", progress: 100, url: `/v1/videos/${job.id}/content` }),
    ]);
    expect(sleeps).toEqual([2000, 2000, 2000, 2000, 2000]);
    expect(client.calls.at(-1)!.url).toContain(`/v1/videos/${job.id}/stream?pollIntervalMs=2000`);
    expect((await client.videos.get(job.id)).status).toBe("completed");
    // The file, relayed by the gateway (the local provider's is a tiny MP4 naming the job).
    const file = await client.videos.content(job.id);
    expect(file.contentType).toBe("video/mp4");
    expect(Buffer.from(file.video.subarray(4, 8)).toString("latin1")).toBe("ftyp");
    // Polling, streaming and downloading charged nothing more.
    expect(await client.keys.get(client.keyId)).toMatchObject({ budgetUsed: job.receipt.finalAmountWei, budgetReserved: "0" });
  });

  it("a failed job: the failed status, then an error event {code, message}; a short stream timeout: stream_timeout", async () => {
    const client = await payer();
    const failed = await client.videos.create({ model: "sora-2", prompt: "a storm [fail]" });
    const events = await collect(client.videos.stream(failed.id));
    const [last, error] = events.slice(-2);
    expect(last).toMatchObject({ type: "status", data: { status: "failed", error: expect.stringContaining("[fail]") } });
    expect(error).toEqual({ type: "error", event: "svc.error", data: { code: "video_failed", message: (last!.data as { error: string }).error } });
    const slow = await client.videos.create({ model: "sora-2", prompt: "slow" });
    const timedOut = await collect(client.videos.stream(slow.id, { pollIntervalMs: 5000, streamTimeoutMs: 5000 }));
    expect(timedOut.map((e) => (e.type === "error" ? e.data.code : e.data.status))).toEqual(["queued", "processing", "stream_timeout"]);
  });

  it("breaking out of the loop cancels the body: the gateway stops polling the job", async () => {
    const client = await payer();
    const job = await client.videos.create({ model: "sora-2", prompt: "a long clip" });
    sleeps.length = 0;
    const seen: VideoStreamEvent[] = [];
    for await (const e of client.videos.stream(job.id)) {
      seen.push(e);
      break;
    }
    expect(seen).toEqual([{ type: "status", event: "video.status", data: { jobId: job.id, status: "queued", progress: 0 } }]);
    // Left alone, the stream would end within 5 waits of 15 ms: after 150 ms, polling has stopped short of that.
    await new Promise((r) => setTimeout(r, 150));
    const after = sleeps.length;
    await new Promise((r) => setTimeout(r, 150));
    expect(sleeps.length).toBe(after);
    expect(after).toBeLessThanOrEqual(2);
    expect((await gw.gateway.services.store.getVideoJob(job.id))?.status).not.toBe("completed");
  });

  it("abort() ends the loop quietly; the call's signal rejects it with UserAbortError; an unknown job is a 404 before any event", async () => {
    const client = await payer();
    const job = await client.videos.create({ model: "sora-2", prompt: "a clip" });
    const stream = client.videos.stream(job.id);
    const quiet: VideoStreamEvent[] = [];
    for await (const e of stream) {
      quiet.push(e);
      stream.abort();
    }
    expect(quiet).toHaveLength(1);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(TypeError);

    const controller = new AbortController();
    const e = await thrown(async () => {
      for await (const _ of client.videos.stream(job.id, { signal: controller.signal })) controller.abort(new Error("user left"));
    });
    expect(e).toBeInstanceOf(UserAbortError);
    expect(e.cause).toEqual(new Error("user left"));

    const missing = await thrown(() => collect(client.videos.stream("vid_nope")));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect([missing.status, missing.code]).toEqual([404, "job_not_found"]);
    expect(await thrown(() => client.videos.get("vid_nope"))).toBeInstanceOf(NotFoundError);
    expect(await thrown(() => gw.client().videos.create({ model: "sora-2", prompt: "unpaid" }))).toBeInstanceOf(PaymentRequiredError);
  });
});
