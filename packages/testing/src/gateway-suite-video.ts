/**
 * The video route suite (docs/media.md, docs/media.md "Video jobs"): paid submission
 * (202 + receipt, billed once), status polling and the SSE stream (not billed), driven by the
 * `local` provider on a manual clock and an injected `sleep` that moves it, through
 * `gateway.fetch` on a real store. A store's test file runs it in one line:
 *
 * ```ts
 * runVideoRouteSuite("sqlite", { createStore: () => createSqliteStore({ filename: tmpFile() }) });
 * ```
 */
import { createParser } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import type { ManualClock } from "@tollgate/core";
import type { GatewayOptions } from "@tollgate/core";
import type { Sleep } from "@tollgate/core/internals";
import { expectError, withGateway, type GatewaySuiteOptions, type Harness } from "./gateway-suite-fixtures.js";
import { expectPaid, expectUncharged, richKey, send } from "./gateway-suite-media-helpers.js";

const SORA = { model: "sora-2", prompt: "a paper boat on a river" };
/** sora-2 defaults to 4 s at $0.10/s. */
const SORA_METER = { modality: "video", media: { seconds: 4 } };

/** An injected `sleep` that records each wait and moves the harness clock by it. */
interface FakeTime {
  readonly sleeps: number[];
  /** Called after each sleep with the number of sleeps so far. */
  onSleep?: (count: number) => void;
}

/** One SSE event as `eventsource-parser` reads it (`event` undefined for a bare `data:` frame). */
interface Frame {
  event: string | undefined;
  data: any;
}

/** GET /v1/videos/{id}/stream, read to the end and parsed; JSON `data` is decoded. */
async function stream(
  h: Harness,
  id: string,
  query = "",
  signal?: AbortSignal,
): Promise<{ status: number; contentType: string | null; frames: Frame[]; body?: any; headers: Headers }> {
  const res = await h.gateway.fetch(new Request(`http://gateway.test/v1/videos/${id}/stream${query}`, signal ? { signal } : {}));
  const contentType = res.headers.get("content-type");
  if (!contentType?.startsWith("text/event-stream")) return { status: res.status, contentType, frames: [], body: await res.json(), headers: res.headers };
  const frames: Frame[] = [];
  const parser = createParser({
    onEvent: (e) => {
      let data: unknown = e.data;
      try {
        data = JSON.parse(e.data);
      } catch {
        // [DONE] stays text
      }
      frames.push({ event: e.event, data });
    },
  });
  parser.feed(await res.text());
  return { status: res.status, contentType, frames, headers: res.headers };
}

const DONE: Frame = { event: undefined, data: "[DONE]" };
const submit = (h: Harness, token: string | undefined, body: unknown = SORA) => send(h, "/v1/videos/generations", { ...(token ? { token } : {}), json: body });

/** Registers the video route suite for the store `name` in the current vitest file. */
export function runVideoRouteSuite(name: string, options: GatewaySuiteOptions): void {
  /** A test on a gateway whose local provider takes `durationMs` per job and whose stream waits on fake time. */
  const test = (title: string, fn: (h: Harness, t: FakeTime) => Promise<void>, o: { durationMs?: number; compat?: "compose" } = {}) =>
    it(title, () => {
      let clock: ManualClock | undefined;
      const t: FakeTime = { sleeps: [] };
      const sleep: Sleep = async (ms) => {
        t.sleeps.push(ms);
        clock!.advance(ms);
        t.onSleep?.(t.sleeps.length);
      };
      const extra: Partial<GatewayOptions> = {
        media: { providers: { local: { type: "local", videoDurationMs: o.durationMs ?? 10_000 } } },
        video: { pollerIntervalMs: 0, sleep },
        ...(o.compat ? { compat: o.compat } : {}),
      };
      return withGateway(
        options,
        (h) => {
          clock = h.clock;
          return fn(h, t);
        },
        extra,
      );
    });

  describe(`video routes: ${name}`, () => {
    test("submit: 202 {id, object, status, created, model, receipt}; billed once at submission", async (h) => {
      const key = await richKey(h);
      const r = await submit(h, key.token);
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      expect(r.body).toEqual({
        id: expect.stringMatching(/^vid_/),
        object: "video.generation",
        status: "queued",
        created: Math.floor(h.clock.now() / 1000),
        model: "sora-2",
        receipt: expect.any(Object),
      });
      const receipt = await expectPaid(h, r, key, "openai:sora-2", SORA_METER);
      expect(receipt.providerAmountWei).toBe("400000"); // 4 s × $0.10
      const eight = await submit(h, key.token, { ...SORA, seconds: 8 });
      await expectPaid(h, eight, key, "openai:sora-2", { modality: "video", media: { seconds: 8 } }, BigInt(receipt.finalAmountWei));
    });

    test("GET progresses on the clock: queued → processing → completed with a url; not billed", async (h) => {
      const key = await richKey(h);
      const { body } = await submit(h, key.token);
      const used = (await h.inspect(key.token, key.keyId)).budgetUsed;
      const get = async () => {
        const r = await h.call("GET", `/v1/videos/${body.id}`);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body;
      };
      expect(await get()).toEqual({ id: body.id, object: "video.generation", status: "queued", progress: 0 });
      h.clock.advance(5_000);
      expect(await get()).toEqual({ id: body.id, object: "video.generation", status: "processing", progress: 50 });
      // Before the job is completed its file is a 409; then its url is the gateway's own path.
      expectError(await h.call("GET", `/v1/videos/${body.id}/content`), 409, "invalid_state");
      h.clock.advance(5_000);
      const done = await get();
      expect(done).toEqual({ id: body.id, object: "video.generation", status: "completed", progress: 100, url: `/v1/videos/${body.id}/content` });
      const file = await h.gateway.fetch(new Request(`http://gateway.test${done.url}`));
      expect([file.status, file.headers.get("content-type"), file.headers.get("x-content-type-options")]).toEqual([200, "video/mp4", "nosniff"]);
      const bytes = new Uint8Array(await file.arrayBuffer());
      expect(Buffer.from(bytes.subarray(4, 8)).toString("latin1")).toBe("ftyp");
      expect(file.headers.get("content-length")).toBe(String(bytes.byteLength));
      expectError(await h.call("GET", "/v1/videos/vid_nope/content"), 404, "job_not_found");
      h.clock.advance(60_000);
      expect(await get()).toEqual(done);
      await expectUncharged(h, key, used);
      // Streaming a finished job: one status event, then [DONE]; still not billed.
      const s = await stream(h, body.id);
      expect(s.frames).toEqual([{ event: "video.status", data: { jobId: body.id, status: "completed", progress: 100, url: done.url } }, DONE]);
      await expectUncharged(h, key, used);
    });

    test("unknown job: 404 job_not_found on GET and on the stream (before it starts)", async (h) => {
      expectError(await h.call("GET", "/v1/videos/vid_nope"), 404, "job_not_found");
      const s = await stream(h, "vid_nope");
      expect(s.contentType).toMatch(/json/);
      expectError({ status: s.status, headers: s.headers, body: s.body }, 404, "job_not_found");
    });

    test("stream: one video.status per change, then data: [DONE]; polls every 2000 ms by default; not billed", async (h, t) => {
      const key = await richKey(h);
      const { body } = await submit(h, key.token);
      const used = (await h.inspect(key.token, key.keyId)).budgetUsed;
      const s = await stream(h, body.id);
      expect([s.status, s.contentType]).toEqual([200, "text/event-stream; charset=utf-8"]);
      const status = (extra: object) => ({ event: "video.status", data: { jobId: body.id, ...extra } });
      expect(s.frames).toEqual([
        status({ status: "queued", progress: 0 }),
        ...[20, 40, 60, 80].map((progress) => status({ status: "processing", progress })),
        status({ status: "completed", progress: 100, url: `/v1/videos/${body.id}/content` }),
        DONE,
      ]);
      expect(t.sleeps).toEqual([2000, 2000, 2000, 2000, 2000]);
      await expectUncharged(h, key, used);
    });

    test("a [fail] prompt: the failed status, svc.error {code, message}, then [DONE]; the submission stays billed", async (h) => {
      const key = await richKey(h);
      const r = await submit(h, key.token, { ...SORA, prompt: "a storm [fail]" });
      await expectPaid(h, r, key, "openai:sora-2", SORA_METER);
      const s = await stream(h, r.body.id);
      const [failed, error, done] = s.frames.slice(-3);
      expect(failed).toMatchObject({ event: "video.status", data: { jobId: r.body.id, status: "failed", error: expect.stringContaining("[fail]") } });
      expect(error).toEqual({ event: "svc.error", data: { code: "video_failed", message: failed!.data.error } });
      expect(done).toEqual(DONE);
      expect((await h.call("GET", `/v1/videos/${r.body.id}`)).body).toMatchObject({ status: "failed", error: failed!.data.error });
    });

    test(
      "stream timeout (timeoutMs=5000, a long job): svc.error stream_timeout, then [DONE]",
      async (h, t) => {
        const key = await richKey(h);
        const { body } = await submit(h, key.token);
        const s = await stream(h, body.id, "?timeoutMs=5000");
        expect(s.frames).toEqual([
          { event: "video.status", data: { jobId: body.id, status: "queued", progress: 0 } },
          { event: "svc.error", data: { code: "stream_timeout", message: expect.stringContaining("5000") } },
          DONE,
        ]);
        expect(t.sleeps).toEqual([2000, 2000, 1000]);
      },
      { durationMs: 3_600_000 },
    );

    test(
      "stream query clamps: pollIntervalMs 500..30000, timeoutMs 5000..3600000; non-numeric → the default",
      async (h, t) => {
        const key = await richKey(h);
        const cases: [string, number[]][] = [
          ["?pollIntervalMs=1&timeoutMs=5000", Array(10).fill(500)],
          ["?pollIntervalMs=abc&timeoutMs=5000", [2000, 2000, 1000]],
          ["?pollIntervalMs=99999999&timeoutMs=5000", [5000]],
          ["?pollIntervalMs=1500.7&timeoutMs=1", [1500, 1500, 1500, 500]],
          ["?pollIntervalMs=30000&timeoutMs=abc", Array(20).fill(30_000)],
          ["?pollIntervalMs=-5&timeoutMs=-5", [500, 500, 500, 500, 500, 500, 500, 500, 500, 500]],
        ];
        for (const [query, sleeps] of cases) {
          const { body } = await submit(h, key.token);
          t.sleeps.length = 0;
          const s = await stream(h, body.id, query);
          expect(
            s.frames.map((f) => f.event ?? f.data),
            query,
          ).toEqual(["video.status", "svc.error", "[DONE]"]);
          expect(t.sleeps, query).toEqual(sleeps);
        }
      },
      { durationMs: 3_600_000 },
    );

    test(
      'compat "compose": compose.video.status and compose.error event names',
      async (h) => {
        const key = await richKey(h);
        expect(key.token).toMatch(/^compose-/);
        const ok = await submit(h, key.token);
        expect((await stream(h, ok.body.id)).frames.map((f) => f.event ?? f.data)).toEqual([...Array(6).fill("compose.video.status"), "[DONE]"]);
        const bad = await submit(h, key.token, { ...SORA, prompt: "[fail]" });
        expect((await stream(h, bad.body.id)).frames.slice(-2).map((f) => f.event ?? f.data)).toEqual(["compose.error", "[DONE]"]);
      },
      { compat: "compose" },
    );

    test("client disconnect stops polling: an aborted request signal, and a cancelled body", async (h, t) => {
      const key = await richKey(h);
      const { body } = await submit(h, key.token);
      const controller = new AbortController();
      t.onSleep = (n) => n === 2 && controller.abort();
      const s = await stream(h, body.id, "", controller.signal);
      expect(s.frames.map((f) => f.data.status)).toEqual(["queued", "processing"]); // no [DONE] for a gone client
      expect(t.sleeps).toHaveLength(2);
      await new Promise((r) => setTimeout(r, 20));
      expect(t.sleeps).toHaveLength(2);

      t.onSleep = undefined;
      t.sleeps.length = 0;
      const job = await submit(h, key.token);
      const res = await h.gateway.fetch(new Request(`http://gateway.test/v1/videos/${job.body.id}/stream`));
      const reader = res.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain("event: video.status");
      await reader.cancel();
      await new Promise((r) => setTimeout(r, 20));
      expect(t.sleeps.length).toBeLessThanOrEqual(1);
      // Polling stopped, so the job is as the first poll left it.
      expect((await h.gateway.services.store.getVideoJob(job.body.id))?.status).toBe("queued");
    });

    test("submission errors: 402 without payment, 400 fields, 404 unknown model, 400 wrong modality, 402 budget; nothing charged", async (h) => {
      expectError(await submit(h, undefined), 402, "payment_required");
      const key = await richKey(h);
      expectError(await submit(h, key.token, { model: "sora-2" }), 400, "invalid_request", "prompt");
      expectError(await submit(h, key.token, { prompt: "x" }), 400, "invalid_request", "model");
      expectError(await submit(h, key.token, { ...SORA, seconds: "abc" }), 400, "invalid_request", "seconds");
      expectError(await submit(h, key.token, { ...SORA, image: "%%%" }), 400, "invalid_request", "image");
      expectError(await submit(h, key.token, { ...SORA, model: "no-such-video" }), 404, "model_not_found");
      expectError(await submit(h, undefined, { ...SORA, model: "no-such-video" }), 404, "model_not_found");
      expectError(await submit(h, key.token, { ...SORA, model: "tts-1" }), 400, "invalid_request", "model");
      // A length the model does not render is refused before anything is reserved: billing 1 s for
      // a clip the upstream renders at its default of 8 would be a short bill.
      const off = expectError(await submit(h, key.token, { ...SORA, seconds: 5 }), 400, "invalid_request", "seconds");
      expect(off.message).toContain("sora-2 renders clips of 4, 8, 12 seconds");
      expectError(await submit(h, key.token, { ...SORA, seconds: 61 }), 400, "invalid_request", "seconds");
      expectError(await submit(h, key.token, { ...SORA, model: "veo-3.0-generate-001", seconds: 1 }), 400, "invalid_request", "seconds");
      expectError(await submit(h, key.token, { ...SORA, model: "amazon.nova-reel-v1:1", seconds: 6.5 }), 400, "invalid_request", "seconds");
      expectError(await submit(h, key.token, { ...SORA, model: "amazon.nova-reel-v1:1", seconds: 5 }), 400, "invalid_request", "seconds");
      await expectUncharged(h, key);
      const poor = await h.createKey({ budgetLimit: "400000" });
      expectError(await submit(h, poor.token), 402, "budget_exhausted");
      await expectUncharged(h, poor);
    });
  });
}
