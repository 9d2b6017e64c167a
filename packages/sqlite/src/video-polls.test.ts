/**
 * Video status reads are public, and every upstream poll spends the operator's provider quota:
 * the upstream is asked about a job at most once per `video.minPollMs` (default 2 s), however many
 * anonymous GETs and streams read it; concurrent reads share one poll. Real SQLite store, the
 * gateway's manual clock, an upstream HttpClient that counts its polls.
 */
import { describe, expect, it } from "vitest";
import { withGateway, type Harness } from "@tollgate/testing";
import type { HttpClient } from "@tollgate/core";
import { tempSqliteStores } from "./temp-stores.js";

const createStore = tempSqliteStores("video-polls");

/** An upstream that counts its polls; with `limited`, it answers them 429 (a rate-limited provider). */
function upstreamStub(limited = false) {
  const calls = { create: 0, get: 0 };
  const http: HttpClient = async (req) => {
    const url = new URL(req.url);
    let body: unknown;
    let status = 200;
    if (req.method === "POST" && url.pathname.endsWith("/videos")) {
      calls.create++;
      body = { id: "up_1", status: "queued", progress: 0 };
    } else if (req.method === "GET" && url.pathname.includes("/videos/")) {
      calls.get++;
      await new Promise((r) => setTimeout(r, 5));
      if (limited) [status, body] = [429, { error: { message: "Rate limit reached", type: "rate_limit" } }];
      else body = { id: "up_1", status: "in_progress", progress: 10 * calls.get };
    } else body = { error: { message: "nope" } };
    const text = JSON.stringify(body);
    return { status, headers: { "content-type": "application/json" }, text: async () => text, bytes: async () => new TextEncoder().encode(text) };
  };
  return { calls, http };
}

/** A stream's wait between polls, 5 ms of real time whatever it asks (the clock stands), ended early by `signal`. */
const shortSleep = (signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, 5);
    signal?.addEventListener("abort", done, { once: true });
  });

const providers = { openai: { type: "openai-compatible" as const, baseUrl: "https://upstream.test/v1", apiKey: "sk-test" } };

async function submit(h: Harness): Promise<string> {
  const key = await h.createKey({ budgetLimit: "100000000" });
  const sub = await h.call("POST", "/v1/videos/generations", {
    headers: { authorization: `Bearer ${key.token}` },
    body: { model: "sora-2", prompt: "a boat" },
  });
  expect(sub.status, JSON.stringify(sub.body)).toBe(202);
  return sub.body.id as string;
}

describe("video status polls", () => {
  it("100 concurrent anonymous GETs share one upstream poll; sequential GETs within minPollMs poll nothing more", async () => {
    const { calls, http } = upstreamStub();
    await withGateway(
      { createStore },
      async (h) => {
        const id = await submit(h);
        // Just submitted: the stored state is fresh, nobody polls.
        expect((await h.call("GET", `/v1/videos/${id}`)).status).toBe(200);
        expect(calls.get).toBe(0);
        h.clock.advance(2_000);
        const replies = await Promise.all(Array.from({ length: 100 }, () => h.call("GET", `/v1/videos/${id}`)));
        expect(replies.every((r) => r.status === 200 && r.body.progress === 10)).toBe(true);
        expect(calls.get).toBe(1);
        for (let i = 0; i < 50; i++) expect((await h.call("GET", `/v1/videos/${id}`)).body.progress).toBe(10);
        expect(calls.get).toBe(1);
        h.clock.advance(1_999);
        await h.call("GET", `/v1/videos/${id}`);
        expect(calls.get).toBe(1);
        h.clock.advance(1);
        expect((await h.call("GET", `/v1/videos/${id}`)).body.progress).toBe(20);
        expect(calls.get).toBe(2);
      },
      { http, media: { providers }, video: { pollerIntervalMs: 0 } },
    );
  });

  it("a provider answering 429 is asked once per minPollMs too: 50 reads in the interval, one poll; the job as stored meanwhile", async () => {
    const { calls, http } = upstreamStub(true);
    await withGateway(
      { createStore },
      async (h) => {
        const id = await submit(h);
        h.clock.advance(2_000);
        for (let i = 0; i < 50; i++) expect((await h.call("GET", `/v1/videos/${id}`)).body.status).toBe("queued");
        expect(calls.get).toBe(1);
        h.clock.advance(2_000);
        await h.call("GET", `/v1/videos/${id}`);
        expect(calls.get).toBe(2);
      },
      { http, media: { providers }, video: { pollerIntervalMs: 0 } },
    );
  });

  it("20 concurrent streams of one job, polling every 500 ms while the clock stands: one upstream poll", async () => {
    const { calls, http } = upstreamStub();
    let sleeps = 0;
    const sleep = (_ms: number, signal?: AbortSignal) => {
      sleeps++;
      return shortSleep(signal);
    };
    await withGateway(
      { createStore },
      async (h) => {
        const id = await submit(h);
        h.clock.advance(2_000);
        const controllers = Array.from({ length: 20 }, () => new AbortController());
        const streams = controllers.map(async (controller) => {
          const res = await h.gateway.fetch(new Request(`http://gateway.test/v1/videos/${id}/stream?pollIntervalMs=500`, { signal: controller.signal }));
          const reader = res.body!.getReader();
          try {
            while (!(await reader.read()).done);
          } catch {
            // aborted
          }
        });
        await new Promise((r) => setTimeout(r, 300));
        for (const controller of controllers) controller.abort();
        await Promise.allSettled(streams);
        expect(sleeps).toBeGreaterThan(100);
        expect(calls.get).toBe(1);
      },
      { http, media: { providers }, video: { pollerIntervalMs: 0, sleep } },
    );
  });

  it("minPollMs: 0 polls on every read; concurrent reads still share one poll", async () => {
    const { calls, http } = upstreamStub();
    await withGateway(
      { createStore },
      async (h) => {
        const id = await submit(h);
        for (let i = 0; i < 3; i++) await h.call("GET", `/v1/videos/${id}`);
        expect(calls.get).toBe(3);
        await Promise.all(Array.from({ length: 10 }, () => h.call("GET", `/v1/videos/${id}`)));
        expect(calls.get).toBe(4);
      },
      { http, media: { providers }, video: { pollerIntervalMs: 0, minPollMs: 0 } },
    );
  });

  it("one client holds at most video.streamsPerClient open streams (429 past them, room again once one ends); status reads are limited per IP", async () => {
    const { http } = upstreamStub();
    await withGateway(
      { createStore },
      async (h) => {
        const id = await submit(h);
        const open = (ip: string) => {
          const controller = new AbortController();
          const res = h.gateway.fetch(
            new Request(`http://gateway.test/v1/videos/${id}/stream?pollIntervalMs=500`, { headers: { "x-forwarded-for": ip }, signal: controller.signal }),
          );
          return { controller, res };
        };
        /** Reads a stream's first frame, so that it runs (and counts). */
        const started = async (s: { res: Promise<Response> }) => {
          const res = await s.res;
          expect(res.status).toBe(200);
          const reader = res.body!.getReader();
          await reader.read();
          return reader;
        };
        const a1 = open("203.0.113.7");
        const a2 = open("203.0.113.7");
        await Promise.all([started(a1), started(a2)]);
        const refused = await open("203.0.113.7").res;
        expect(refused.status).toBe(429);
        expect((await refused.json()).error).toMatchObject({ code: "rate_limited", details: { streamsPerClient: 2 } });
        // Another client is not held back.
        const b = open("198.51.100.2");
        await started(b);
        // Once one of A's streams ends, A may open another.
        a1.controller.abort();
        let again: Response | undefined;
        for (let i = 0; i < 100 && again?.status !== 200; i++) {
          await new Promise((r) => setTimeout(r, 10));
          again = await open("203.0.113.7").res;
          if (again.status === 200) await again.body!.cancel();
        }
        expect(again?.status).toBe(200);
        a2.controller.abort();
        b.controller.abort();
        // Status reads: 20 a minute per IP here.
        const reads = [];
        for (let i = 0; i < 21; i++)
          reads.push((await h.gateway.fetch(new Request(`http://gateway.test/v1/videos/${id}`, { headers: { "x-forwarded-for": "192.0.2.9" } }))).status);
        expect(reads).toEqual([...Array<number>(20).fill(200), 429]);
      },
      {
        http,
        trustedProxies: 1,
        rateLimits: { perIp: { videos: 20 } },
        media: { providers },
        video: { pollerIntervalMs: 0, streamsPerClient: 2, sleep: (_ms, signal) => shortSleep(signal) },
      },
    );
  });
});
