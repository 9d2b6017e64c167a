/**
 * A completed video job's file, relayed by the gateway (`GET /v1/videos/{id}/content`): the job's
 * `url` is the gateway's own path, never the upstream's address; the file comes from the upstream
 * with the operator's API key, which the client never sees; a `Range` is passed on; a type other
 * than video is sent as bytes; a client that leaves mid-download stops the upstream's; open
 * downloads count against the client's video streams. A real
 * server process of @tollgate/node on a SQLite file, with a local HTTP server as the OpenAI video
 * API.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import { createSqliteStore } from "@tollgate/sqlite";
import { serve, type RunningServer } from "./server.js";

const FILE = new Uint8Array(300_000).map((_, i) => (i * 7) & 0xff);
const SECRET = "video-content-secret-0123456789";
const OWNER = "0x00000000000000000000000000000000000000cb";
/** What the upstream saw of each content request, and how its answers end. */
const seen: { authorization?: string; range?: string; finished: boolean; cut: boolean }[] = [];
/** How the upstream answers the next content request. */
let mode: "video" | "html" | "missing" | "slow" = "video";
let upstream: http.Server;
let server: RunningServer;

beforeAll(async () => {
  let jobs = 0;
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const json = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      if (req.method === "POST" && req.url === "/v1/videos") return json(200, { id: `up_${++jobs}`, status: "queued", progress: 0 });
      const m = /^\/v1\/videos\/(up_\d+)(\/content)?$/.exec(req.url ?? "");
      if (req.method !== "GET" || !m) return json(404, { error: { message: "no route" } });
      if (!m[2]) return json(200, { id: m[1], status: "completed", progress: 100 });
      const visit = { authorization: req.headers.authorization, range: req.headers.range, finished: false, cut: false };
      seen.push(visit);
      res.once("finish", () => (visit.finished = true));
      res.once("close", () => (visit.cut = !visit.finished));
      if (mode === "missing") return json(404, { error: { message: "video not found" } });
      if (mode === "html") return res.writeHead(200, { "content-type": "text/html" }).end("<script>alert(1)</script>");
      const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? "");
      if (range) {
        const [from, to] = [Number(range[1]), Number(range[2])];
        return res
          .writeHead(206, {
            "content-type": "video/mp4",
            "content-range": `bytes ${from}-${to}/${FILE.length}`,
            "content-length": String(to - from + 1),
            "set-cookie": "upstream=1",
          })
          .end(FILE.subarray(from, to + 1));
      }
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(FILE.length), "accept-ranges": "bytes", "set-cookie": "upstream=1" });
      if (mode === "video") return res.end(FILE);
      // slow: 10 KB every 50 ms, until done or the gateway hangs up.
      let at = 0;
      const timer = setInterval(() => {
        if (res.destroyed || at >= FILE.length) return (clearInterval(timer), res.end());
        res.write(FILE.subarray(at, (at += 10_000)));
      }, 50);
      res.once("close", () => clearInterval(timer));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const gateway = createGateway({
    store: createSqliteStore({ filename: join(mkdtempSync(join(tmpdir(), "tollgate-video-content-")), "gw.db") }),
    sweepIntervalMs: 0,
    internalSecret: SECRET,
    video: { pollerIntervalMs: 0, minPollMs: 0, streamsPerClient: 2 },
    media: {
      providers: { openai: { type: "openai-compatible", baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, apiKey: "sk-operator" } },
    },
  });
  server = await serve(gateway, { port: 0 });
}, 60_000);

afterAll(async () => {
  await server?.close({ graceMs: 100 });
  upstream?.closeAllConnections();
  await new Promise((r) => upstream?.close(r));
});

/** Submits a sora-2 job with a fresh key and reads it once: the completed job view. */
async function completedJob(): Promise<{ id: string; url: string; status: string }> {
  const created = await fetch(`${server.url}/api/keys`, {
    method: "POST",
    headers: { "x-session-user-address": OWNER, "x-internal-secret": SECRET, "content-type": "application/json" },
    body: JSON.stringify({ budgetLimit: "100000000", expiresAt: Date.now() + 3_600_000, networkId: 8453, purpose: "api" }),
  });
  const { token } = (await created.json()) as { token: string };
  const submitted = await fetch(`${server.url}/v1/videos/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "sora-2", prompt: "a boat" }),
  });
  expect(submitted.status).toBe(202);
  const { id } = (await submitted.json()) as { id: string };
  const view = await (await fetch(`${server.url}/v1/videos/${id}`)).text();
  expect(view).not.toContain("127.0.0.1"); // the upstream's address is not shown
  return JSON.parse(view) as { id: string; url: string; status: string };
}

it("a completed job's url is the gateway's path; its file comes whole from the upstream with the operator's key, which the client never sees", async () => {
  mode = "video";
  const job = await completedJob();
  expect(job).toMatchObject({ status: "completed", url: `/v1/videos/${job.id}/content` });
  const res = await fetch(`${server.url}${job.url}`);
  expect(res.status).toBe(200);
  expect(
    Object.fromEntries(["content-type", "content-length", "accept-ranges", "x-content-type-options", "set-cookie"].map((h) => [h, res.headers.get(h)])),
  ).toEqual({
    "content-type": "video/mp4",
    "content-length": String(FILE.length),
    "accept-ranges": "bytes",
    "x-content-type-options": "nosniff",
    "set-cookie": null, // only the headers that describe the file pass
  });
  expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(FILE))).toBe(true);
  expect(seen.at(-1)).toMatchObject({ authorization: "Bearer sk-operator", finished: true });
});

it("a Range is passed on and its 206 answered as it is", async () => {
  mode = "video";
  const job = await completedJob();
  const res = await fetch(`${server.url}${job.url}`, { headers: { range: "bytes=1000-1099" } });
  expect([res.status, res.headers.get("content-range"), res.headers.get("content-length")]).toEqual([206, `bytes 1000-1099/${FILE.length}`, "100"]);
  expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(FILE.subarray(1000, 1100)))).toBe(true);
  expect(seen.at(-1)?.range).toBe("bytes=1000-1099");
});

it("an upstream answer that is not a video is sent as bytes, never as the type it claims; an upstream 404 is a 502", async () => {
  const job = await completedJob();
  mode = "html";
  const html = await fetch(`${server.url}${job.url}`);
  expect([html.status, html.headers.get("content-type"), html.headers.get("x-content-type-options")]).toEqual([200, "application/octet-stream", "nosniff"]);
  await html.arrayBuffer();
  mode = "missing";
  const missing = await fetch(`${server.url}${job.url}`);
  expect(missing.status).toBe(502);
  expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("upstream_error");
});

it("a client that leaves mid-download stops the upstream's download", async () => {
  const job = await completedJob();
  mode = "slow";
  const leaving = new AbortController();
  const res = await fetch(`${server.url}${job.url}`, { signal: leaving.signal });
  const reader = res.body!.getReader();
  expect((await reader.read()).done).toBe(false);
  const visit = seen.at(-1)!;
  leaving.abort();
  await reader.cancel().catch(() => undefined);
  // The gateway hangs up on the upstream before it sent the whole file (30 chunks take 1.5 s).
  await expect.poll(() => visit.cut, { timeout: 5000 }).toBe(true);
  expect(visit.finished).toBe(false);
});

it("open downloads count against the client's video streams (2 here): a third is a 429 until one ends", async () => {
  const job = await completedJob();
  mode = "slow";
  const open = [new AbortController(), new AbortController()];
  const readers = [];
  for (const c of open) {
    const res = await fetch(`${server.url}${job.url}`, { signal: c.signal });
    expect(res.status).toBe(200);
    readers.push(res.body!.getReader());
  }
  const third = await fetch(`${server.url}${job.url}`);
  expect(third.status).toBe(429);
  expect(((await third.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
  for (const [i, c] of open.entries()) {
    c.abort();
    await readers[i]!.cancel().catch(() => undefined);
  }
  mode = "video";
  await expect.poll(async () => await fetch(`${server.url}${job.url}`).then(async (r) => (await r.arrayBuffer(), r.status)), { timeout: 5000 }).toBe(200);
});
