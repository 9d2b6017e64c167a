/**
 * Video jobs the upstream lost or refused, on a real SQLite file with a local HTTP upstream that
 * speaks the OpenAI video API: a job the upstream answers "not found" for is ended (not polled for
 * ever), jobs whose polls keep failing take their turn after the others (they cannot keep newer jobs
 * from the background poller), and a job refused on arrival is not billed.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { withGateway, type Harness } from "@tollgate/testing";
import { tempSqliteStores } from "./temp-stores.js";

const createStore = tempSqliteStores("video-upstream-lost");
const PRICE = 404_000n; // sora-2, 4 s, with the platform fee

/** The upstream: jobs for which `broken(n)` answer `brokenStatus` to every poll; the others are completed. */
async function startUpstream(broken: (n: number) => boolean, brokenStatus: number, createStatus = "queued") {
  let next = 0;
  const gets = new Map<string, number>();
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const reply = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      if (req.method === "POST" && req.url === "/v1/videos")
        return reply(
          200,
          Object.assign(
            { id: `up_${++next}`, status: createStatus },
            createStatus === "failed" ? { error: { message: "blocked by moderation" } } : { progress: 0 },
          ),
        );
      const m = /^\/v1\/videos\/up_(\d+)$/.exec(req.url ?? "");
      if (req.method !== "GET" || !m) return reply(404, { error: { message: "no route" } });
      gets.set(`up_${m[1]}`, (gets.get(`up_${m[1]}`) ?? 0) + 1);
      if (broken(Number(m[1]))) return reply(brokenStatus, { error: { message: brokenStatus === 404 ? "video not found" : "internal error" } });
      reply(200, { id: `up_${m[1]}`, status: "completed", progress: 100 });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, gets, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const options = (url: string) => ({
  media: { providers: { openai: { type: "openai-compatible" as const, baseUrl: url, apiKey: "sk-test" } } },
  video: { pollerIntervalMs: 0, minPollMs: 0 },
});

/** `fn` on a gateway over an upstream of `startUpstream(...upstreamArgs)`, with a funded key. */
async function onUpstream(
  upstreamArgs: Parameters<typeof startUpstream>,
  fn: (h: Harness, key: { token: string; keyId: string }, up: Awaited<ReturnType<typeof startUpstream>>) => Promise<void>,
) {
  const up = await startUpstream(...upstreamArgs);
  try {
    await withGateway({ createStore }, async (h) => fn(h, await h.createKey({ budgetLimit: "1000000000" }), up), options(up.url));
  } finally {
    await up.close();
  }
}

/** `POST /v1/videos/generations` of one sora-2 clip with `key`. */
const submit = (h: Harness, key: { token: string }) =>
  h.call("POST", "/v1/videos/generations", { headers: { authorization: `Bearer ${key.token}` }, body: { model: "sora-2", prompt: "a boat" } });

describe("video jobs the upstream lost or refused", () => {
  for (const brokenStatus of [404, 500]) {
    it(
      `50 jobs whose polls answer ${brokenStatus} do not keep a newer job from the poller${brokenStatus === 404 ? "; the lost ones are ended, still billed" : ""}`,
      () =>
        onUpstream([(n) => n <= 50, brokenStatus], async (h, key, up) => {
          const ids: string[] = [];
          for (let i = 0; i < 51; i++) {
            const r = await submit(h, key);
            expect(r.status, JSON.stringify(r.body)).toBe(202);
            ids.push(r.body.id);
            h.clock.advance(1);
          }
          const video = h.gateway.services.video;
          for (let tick = 0; tick < 3; tick++) {
            h.clock.advance(61_000); // past every lease, and a minute past submission
            await video.pollPending();
          }
          expect(up.gets.get("up_51")).toBeGreaterThan(0);
          expect((await h.call("GET", `/v1/videos/${ids[50]}`)).body.status).toBe("completed");
          const first = await h.gateway.services.store.getVideoJob(ids[0]!);
          if (brokenStatus === 404) {
            expect(first).toMatchObject({ status: "failed", error: expect.stringMatching(/no longer knows this job \(HTTP 404\)/) });
            const asked = up.gets.get("up_1");
            await video.pollPending();
            expect(up.gets.get("up_1")).toBe(asked); // ended: never asked about again
          } else {
            expect(first?.status).toBe("queued"); // a failing poll is no answer: tried again later
          }
          // Accepted jobs stay billed, whatever became of them upstream.
          expect((await h.inspect(key.token, key.keyId)).budgetUsed).toBe(String(51n * PRICE));
        }),
      60_000,
    );
  }

  it("a job answered 404 within a minute of its submission is polled again, not ended", () =>
    onUpstream([() => true, 404], async (h, key, up) => {
      const r = await submit(h, key);
      await h.gateway.services.video.pollPending();
      expect(up.gets.get("up_1")).toBe(1);
      expect((await h.gateway.services.store.getVideoJob(r.body.id))?.status).toBe("queued");
    }));

  it("a job the upstream refuses on arrival (status failed) is a 502 and is not billed", () =>
    onUpstream([() => false, 404, "failed"], async (h, key) => {
      const r = await submit(h, key);
      expect(r.status).toBe(502);
      expect(r.body.error).toMatchObject({ code: "upstream_error", details: { nothingDone: true } });
      const after = await h.inspect(key.token, key.keyId);
      expect([after.budgetUsed, after.budgetReserved]).toEqual(["0", "0"]);
    }));
});
