/**
 * Video jobs when the upstream or the client does something unusual: a fractional `progress` (the
 * SQLite column keeps whole percents), a client that leaves while the upstream is accepting its job,
 * and a store that fails while a status stream is open. Real SQLite store, an upstream HttpClient
 * that plays an OpenAI-compatible video API.
 */
import { describe, expect, it } from "vitest";
import { withGateway, type Harness } from "@tollgate/testing";
import type { HttpClient } from "@tollgate/core";
import { tempSqliteStores } from "./temp-stores.js";

const createStore = tempSqliteStores("video-upstream-faults");
const providers = { openai: { type: "openai-compatible" as const, baseUrl: "https://upstream.test/v1", apiKey: "sk-test" } };
const SORA_12S = "1212000"; // sora-2, 12 s at $0.10 a second, with the 1 % platform fee

/**
 * An upstream that accepts a job (after `acceptMs`, aborted by the request's signal when it has
 * one) and reports it in progress with `progress()` on every poll.
 */
function upstreamStub(created: number, progress: () => number, acceptMs = 0) {
  const calls = { create: 0, get: 0 };
  let accepted!: () => void;
  const hasJob = new Promise<void>((r) => (accepted = r));
  const http: HttpClient = async (req) => {
    const url = new URL(req.url);
    let body: unknown;
    if (req.method === "POST" && url.pathname.endsWith("/videos")) {
      calls.create++;
      accepted();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, acceptMs);
        req.signal?.addEventListener("abort", () => (clearTimeout(timer), reject(req.signal!.reason)), { once: true });
      });
      body = { id: "up_1", status: "queued", progress: created };
    } else {
      calls.get++;
      body = { id: "up_1", status: "in_progress", progress: progress() };
    }
    const text = JSON.stringify(body);
    return { status: 200, headers: { "content-type": "application/json" }, text: async () => text, bytes: async () => new TextEncoder().encode(text) };
  };
  return { calls, http, hasJob };
}

async function submit(h: Harness, token: string) {
  return h.call("POST", "/v1/videos/generations", { headers: { authorization: `Bearer ${token}` }, body: { model: "sora-2", prompt: "a boat", seconds: 12 } });
}

describe("video jobs: upstream and client faults (SQLite)", () => {
  it("a fractional progress at submission: 202, billed, kept as a whole percent", async () => {
    const { http, calls } = upstreamStub(0.5, () => 1);
    await withGateway(
      { createStore },
      async (h) => {
        const key = await h.createKey({ budgetLimit: "100000000" });
        const sub = await submit(h, key.token);
        expect(sub.status, JSON.stringify(sub.body)).toBe(202);
        expect(calls.create).toBe(1);
        expect((await h.inspect(key.token, key.keyId)).budgetUsed).toBe(SORA_12S);
        expect((await h.call("GET", `/v1/videos/${sub.body.id}`)).body.progress).toBe(1);
      },
      { http, media: { providers }, video: { pollerIntervalMs: 0 } },
    );
  });

  it("a fractional progress on a poll: 200 with the rounded percent", async () => {
    const { http, calls } = upstreamStub(0, () => 12.5);
    await withGateway(
      { createStore },
      async (h) => {
        const key = await h.createKey({ budgetLimit: "100000000" });
        const sub = await submit(h, key.token);
        h.clock.advance(5_000);
        const r = await h.call("GET", `/v1/videos/${sub.body.id}`);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(calls.get).toBe(1);
        expect(r.body).toMatchObject({ status: "processing", progress: 13 });
      },
      { http, media: { providers }, video: { pollerIntervalMs: 0 } },
    );
  });

  it("a client that leaves while the upstream accepts its job: the job is kept and billed", async () => {
    const { http, calls, hasJob } = upstreamStub(0, () => 40, 50);
    await withGateway(
      { createStore },
      async (h) => {
        const key = await h.createKey({ budgetLimit: "100000000" });
        const controller = new AbortController();
        const pending = h.gateway
          .fetch(
            new Request("http://gateway.test/v1/videos/generations", {
              method: "POST",
              headers: { authorization: `Bearer ${key.token}`, "content-type": "application/json" },
              body: JSON.stringify({ model: "sora-2", prompt: "a boat", seconds: 12 }),
              signal: controller.signal,
            }),
          )
          .catch((error: unknown) => error);
        await hasJob;
        controller.abort();
        await pending;
        // The submission finishes after its client left: wait for its charge.
        for (let i = 0; i < 100 && (await h.inspect(key.token, key.keyId)).budgetReserved !== "0"; i++) await new Promise((r) => setTimeout(r, 10));
        const view = await h.inspect(key.token, key.keyId);
        expect(calls.create).toBe(1);
        expect({ used: view.budgetUsed, reserved: view.budgetReserved }).toEqual({ used: SORA_12S, reserved: "0" });
      },
      { http, media: { providers }, video: { pollerIntervalMs: 0 } },
    );
  });

  it("a store that fails while a status stream is open: the stream ends with svc.error, then [DONE]", async () => {
    const { http } = upstreamStub(0, () => 10);
    let onSleep = async () => {};
    await withGateway(
      { createStore },
      async (h) => {
        const key = await h.createKey({ budgetLimit: "100000000" });
        const sub = await submit(h, key.token);
        // After the first status frame, the database goes away (the gateway closes its store).
        onSleep = async () => void (await h.gateway.close());
        const res = await h.gateway.fetch(new Request(`http://gateway.test/v1/videos/${sub.body.id}/stream?pollIntervalMs=2000&timeoutMs=60000`));
        expect(res.status).toBe(200);
        const text = await res.text();
        expect(text).toContain("event: video.status");
        expect(text).toMatch(/event: svc\.error\ndata: \{"code":"stream_failed"/);
        expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
      },
      { http, media: { providers }, video: { pollerIntervalMs: 0, sleep: () => onSleep() } },
    );
  });
});
