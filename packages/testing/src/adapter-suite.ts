/**
 * The adapter conformance suite: one scenario file every framework adapter runs (node:http,
 * Express, Fastify, Next.js). Each test serves a fresh gateway (memory store, manual clock, local
 * providers) through the adapter under `/gw` and checks what the client receives against what
 * the gateway saw and answered (a probe around `gateway.handle`). An adapter's test file is a call:
 *
 * ```ts
 * runAdapterConformance("express", {
 *   start: async (gateway, { basePath, ...opts }) => listenHttp(http.createServer(express().use(basePath, createHandler(gateway, opts)))),
 * });
 * ```
 */
import { describe, expect, it, vi } from "vitest";
import { EXPOSED_HEADERS } from "@tollgate/core";
import type { GatewayResponse } from "@tollgate/core";
import type { GatewayOptions } from "@tollgate/core";
import { encodeMultipart } from "@tollgate/core/internals";
import {
  EXPLODE,
  EXPLODE_STREAM,
  probeGateway,
  readFrames,
  send,
  suiteGateway,
  SUITE_INTERNAL_SECRET,
  type AdapterConformanceOptions,
  type AdapterStartOptions,
  type AdapterTarget,
  type Probe,
  type StreamTime,
  type SuiteRequest,
} from "./adapter-suite-harness.js";

export { listenHttp, type AdapterConformanceOptions, type AdapterStartOptions, type AdapterTarget } from "./adapter-suite-harness.js";

const BASE = "/gw";
/** Waits for a condition that follows from an event the test caused; generous so a loaded machine never fails it. */
const until = (check: () => void) => vi.waitFor(check, { timeout: 15_000, interval: 10 });
const OWNER = "0x00000000000000000000000000000000000000a1";
/** Names the owner wallet and proves it with the internal secret (as a server-side host app does). */
const OWNER_PROOF = { "x-session-user-address": OWNER, "x-internal-secret": SUITE_INTERNAL_SECRET };
const APP_ORIGIN = "https://app.example";

/** One test's world: the served target, the probe, the stream clock and the errors reported to `onError`. */
interface World {
  readonly target: AdapterTarget;
  readonly probe: Probe;
  readonly time: StreamTime;
  readonly errors: unknown[];
  readonly now: () => number;
  /** Sends to `${BASE}${path}`. */
  call(path: string, init?: SuiteRequest): Promise<Response>;
}

interface Setup {
  cors?: GatewayOptions["cors"];
  maxBodySize?: number;
  preParsedJson?: boolean;
  /** The test checks `errors` itself (otherwise none may be reported). */
  expectsErrors?: boolean;
}

const json = (body: unknown, headers: Record<string, string> = {}): SuiteRequest => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

async function expectEnvelope(res: Response, status: number, code: string): Promise<any> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text);
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error).toMatchObject({ code, type: expect.any(String), message: expect.any(String) });
  expect(body.error.requestId).toBe(res.headers.get("x-request-id"));
  return body.error;
}

/** Every header the gateway answered arrives unchanged (lengths are the adapter's to compute). */
function expectHeadersIntact(res: Response, answered: GatewayResponse | undefined): void {
  expect(answered).toBeDefined();
  for (const [name, value] of Object.entries(answered!.headers)) if (name !== "content-length") expect(res.headers.get(name), name).toBe(value);
}

async function createKey(w: World): Promise<{ keyId: string; token: string }> {
  const body = { budgetLimit: "100000000", expiresAt: w.now() + 86_400_000, networkId: 8453, purpose: "api" };
  const res = await w.call("/api/keys", json(body, OWNER_PROOF));
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text);
}

/** Submits a video job and opens its SSE stream; resolves once the first frame (queued) has arrived. */
async function openVideoStream(w: World, signal?: AbortSignal) {
  const key = await createKey(w);
  const job = await w.call("/v1/videos/generations", json({ model: "sora-2", prompt: "a paper boat" }, { authorization: `Bearer ${key.token}` }));
  expect(job.status).toBe(202);
  const { id } = (await job.json()) as { id: string };
  const res = await w.call(`/v1/videos/${id}/stream`, signal ? { signal } : {});
  expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/event-stream; charset=utf-8"]);
  const reader = res.body!.getReader();
  const buffer = { text: "" };
  const [first] = await readFrames(reader, 1, buffer);
  expect(first).toContain('"status":"queued"');
  return { reader, buffer };
}

/** Registers the adapter conformance suite for the adapter `name` in the current vitest file. */
export function runAdapterConformance(name: string, options: AdapterConformanceOptions): void {
  const test = (title: string, fn: (w: World) => Promise<void>, setup: Setup = {}) =>
    it(title, async () => {
      const { gateway, time, now } = suiteGateway(setup.cors);
      const { handle, probe } = probeGateway(gateway);
      const errors: unknown[] = [];
      const start: AdapterStartOptions = {
        basePath: BASE,
        onError: (e) => errors.push(e),
        ...(setup.maxBodySize === undefined ? {} : { maxBodySize: setup.maxBodySize }),
        ...(setup.preParsedJson ? { preParsedJson: true } : {}),
      };
      let target: AdapterTarget | undefined;
      try {
        const served = (target = await options.start({ handle }, start));
        const call = (path: string, init?: SuiteRequest) => send(served, `${BASE}${path}`, init);
        await fn({ target: served, probe, time, errors, now, call });
        if (!setup.expectsErrors) expect(errors).toEqual([]);
      } finally {
        time.releaseAll();
        await target?.close?.();
        await gateway.close();
      }
    });

  describe(`adapter conformance: ${name}`, () => {
    test("routes under the base path: the gateway sees the path relative to it, the query and the origin", async (w) => {
      const res = await w.call("/v1/models?limit=1");
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(1);
      expect(res.headers.get("x-request-id")).toMatch(/^req_/);
      const [seen] = w.probe.requests;
      expect([seen?.method, seen?.path, seen?.query.get("limit")]).toEqual(["GET", "/v1/models", "1"]);
      expect(seen?.origin).toBe("url" in w.target ? w.target.url : "http://app.test");
      expect(seen?.body).toBeUndefined();
      await (await w.call("")).arrayBuffer();
      expect(w.probe.requests[1]?.path, "the base path itself").toBe("/");
    });

    test("a path outside the base path (or only sharing its prefix) is the app's own 404; the gateway never sees it", async (w) => {
      for (const path of ["/elsewhere", "/gwx/v1/models", "/v1/models"]) {
        const res = await send(w.target, path);
        await res.arrayBuffer();
        expect(res.status, path).toBe(404);
        expect(res.headers.get("x-request-id"), path).toBeNull();
      }
      expect(w.probe.requests).toEqual([]);
    });

    test("gateway 404 not_found, and 405 method_not_allowed with the Allow list intact", async (w) => {
      await expectEnvelope(await w.call("/v1/nope"), 404, "not_found");
      const res = await w.call("/api/keys", { method: "DELETE" });
      await expectEnvelope(res, 405, "method_not_allowed");
      expect(res.headers.get("allow")).toBe("GET, POST");
      expectHeadersIntact(res, w.probe.responses[1]);
    });

    test("JSON bodies: POST creates; invalid JSON is a 400 envelope; an empty JSON body on GET and DELETE is accepted", async (w) => {
      const key = await createKey(w);
      expect(w.probe.requests[0]?.body?.kind).toBe("stream");
      const bad = await w.call("/api/keys", { ...json({}, OWNER_PROOF), body: "{not json" });
      expect((await expectEnvelope(bad, 400, "invalid_request")).message).toMatch(/JSON/);
      const empty = { "content-type": "application/json", "content-length": "0", authorization: `Bearer ${key.token}` };
      const get = await w.call(`/api/keys/${key.keyId}`, { headers: empty, raw: true });
      expect([get.status, ((await get.json()) as { keyId: string }).keyId]).toEqual([200, key.keyId]);
      const del = await w.call(`/api/keys/${key.keyId}`, { method: "DELETE", headers: empty, body: "", raw: true });
      expect([del.status, ((await del.json()) as { success: boolean }).success]).toEqual([200, true]);
    });

    if (options.preParsedJson) {
      test(
        "a JSON body the framework already parsed reaches the gateway as parsed; multipart still streams",
        async (w) => {
          await createKey(w);
          expect(w.probe.requests[0]?.body).toMatchObject({ kind: "parsed", value: { budgetLimit: "100000000" } });
          await speechThenTranscription(w);
        },
        { preParsedJson: true },
      );
      test(
        "a JSON body the framework already parsed is still held to maxBodySize (413), and one under it is served",
        async (w) => {
          const big = JSON.stringify({ budgetLimit: "1", name: "x".repeat(2000) });
          const res = await w.call("/api/keys", { method: "POST", headers: { "content-type": "application/json", ...OWNER_PROOF }, body: big });
          expect((await expectEnvelope(res, 413, "payload_too_large")).details).toEqual({ limitBytes: 1024 });
          expect(w.probe.requests[0]?.body?.kind).toBe("parsed");
          await createKey(w);
        },
        { preParsedJson: true, maxBodySize: 1024 },
      );
    }

    test(
      "413 payload_too_large over maxBodySize, declared or chunked; a body under it is served",
      async (w) => {
        const big = JSON.stringify({ budgetLimit: "1", name: "x".repeat(2000) });
        const headers = { "content-type": "application/json", ...OWNER_PROOF };
        expect((await expectEnvelope(await w.call("/api/keys", { method: "POST", headers, body: big }), 413, "payload_too_large")).details).toEqual({
          limitBytes: 1024,
        });
        const chunked = new ReadableStream<Uint8Array>({
          start(c) {
            for (let i = 0; i < 4; i++) c.enqueue(new TextEncoder().encode(big.slice(i * 600, (i + 1) * 600)));
            c.close();
          },
        });
        await expectEnvelope(await w.call("/api/keys", { method: "POST", headers, body: chunked }), 413, "payload_too_large");
        await createKey(w);
      },
      { maxBodySize: 1024 },
    );

    test(
      "an error escaping gateway.handle: one 500 internal_error envelope and one onError call",
      async (w) => {
        const e = await expectEnvelope(await w.call(EXPLODE), 500, "internal_error");
        expect(e.message).not.toContain("suite:");
        expect(w.errors).toHaveLength(1);
        expect(String(w.errors[0])).toContain("an error escaped gateway.handle");
      },
      { expectsErrors: true },
    );

    test(
      "an SSE stream that breaks mid-way: the client sees the stream fail, not a clean end; one onError call",
      async (w) => {
        const res = await w.call(EXPLODE_STREAM);
        expect(res.status).toBe(200);
        const reader = res.body!.getReader();
        const buffer = { text: "" };
        expect((await readFrames(reader, 1, buffer))[0]).toContain("suite.tick");
        w.probe.breakStream();
        await expect(readFrames(reader, 1, buffer)).rejects.toThrow();
        await until(() => expect(w.errors).toHaveLength(1));
        expect(String(w.errors[0])).toContain("the stream broke");
      },
      { expectsErrors: true },
    );

    test("401 envelopes: no credential, an unknown key", async (w) => {
      const key = await createKey(w);
      await expectEnvelope(await w.call(`/api/keys/${key.keyId}`), 401, "authentication_required");
      const unknown = `svc-${"A".repeat(43)}`;
      await expectEnvelope(await w.call(`/api/keys/${key.keyId}`, { headers: { authorization: `Bearer ${unknown}` } }), 401, "invalid_key");
    });

    test("binary: the audio/speech WAV arrives byte for byte; a multipart upload over 1 MiB streams to transcription", (w) => speechThenTranscription(w));

    test("SSE: the first frames arrive while the stream is still open", async (w) => {
      const { reader, buffer } = await openVideoStream(w);
      let finished = false;
      void w.probe.sseFinished.then(() => (finished = true));
      await until(() => expect(w.time.count()).toBe(1)); // parked until released: the stream cannot have ended
      expect(finished).toBe(false);
      w.time.releaseAll();
      expect((await readFrames(reader, 1, buffer))[0]).toContain('"progress":20');
      await reader.cancel();
    });

    test("SSE: aborting the request aborts the gateway's signal; the stream stops polling", async (w) => {
      const controller = new AbortController();
      const { reader } = await openVideoStream(w, controller.signal);
      await until(() => expect(w.time.count()).toBe(1));
      controller.abort();
      await w.probe.sseFinished; // nothing released the parked wait: only the abort can end it
      expect([w.time.count(), w.time.aborted()]).toEqual([1, 1]);
      await reader.cancel().catch(() => undefined);
    });

    test("SSE: cancelling the response body stops the frame iterator; the stream stops polling", async (w) => {
      const { reader } = await openVideoStream(w);
      await until(() => expect(w.time.count()).toBe(1));
      const cancelling = reader.cancel();
      expect(await w.probe.sseStopped).toBe("returned");
      w.time.releaseAll();
      await cancelling;
      await w.probe.sseFinished;
      expect(w.time.count()).toBe(1);
    });

    test("multi-value headers: repeated request headers arrive joined with ', '; names lower-cased", async (w) => {
      const res = await w.call("/v1/models?limit=1", { headers: { "X-Suite-Multi": ["alpha", "beta"], "X-Suite-One": "solo" } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      const headers = w.probe.requests[0]?.headers ?? {};
      expect([headers["x-suite-multi"], headers["x-suite-one"]]).toEqual(["alpha, beta", "solo"]);
    });

    test(
      "CORS: a preflight gets 204 with the Access-Control-* and Vary lists intact; a simple request is tagged; a foreign origin gets none",
      async (w) => {
        const preflight = await w.call("/api/keys", {
          method: "OPTIONS",
          headers: { origin: APP_ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
        });
        expect(preflight.status).toBe(204);
        expect(await preflight.text()).toBe("");
        expect([preflight.headers.get("access-control-allow-origin"), preflight.headers.get("access-control-allow-methods")]).toEqual([
          APP_ORIGIN,
          "GET, POST, OPTIONS",
        ]);
        expect([preflight.headers.get("access-control-allow-headers"), preflight.headers.get("vary")]).toEqual(["authorization, content-type", "Origin"]);
        expectHeadersIntact(preflight, w.probe.responses[0]);
        const simple = await w.call("/v1/models?limit=1", { headers: { origin: APP_ORIGIN } });
        await simple.arrayBuffer();
        expect(simple.headers.get("access-control-expose-headers")).toBe(EXPOSED_HEADERS);
        expectHeadersIntact(simple, w.probe.responses[1]);
        const foreign = await w.call("/api/keys", { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "POST" } });
        expect([foreign.status, foreign.headers.get("access-control-allow-origin")]).toEqual([204, null]);
      },
      { cors: { origins: [APP_ORIGIN] } },
    );

    test("HEAD: the status and headers of GET, no body", async (w) => {
      const res = await w.call("/v1/models?limit=1", { method: "HEAD" });
      expect([res.status, res.headers.get("content-type")]).toEqual([200, "application/json; charset=utf-8"]);
      expect((await res.arrayBuffer()).byteLength).toBe(0);
    });
  });
}

/** A speech input whose WAV is over 1 MiB: above the default body limits of Fastify (1 MiB) and body-parser (100 kB). */
const LONG_INPUT = "hello adapters ".repeat(26).trim();

/** POST /v1/audio/speech (WAV bytes compared with what the gateway produced), then the WAV back as a multipart upload. */
async function speechThenTranscription(w: World): Promise<void> {
  const key = await createKey(w);
  const auth = { authorization: `Bearer ${key.token}` };
  const speech = await w.call("/v1/audio/speech", json({ model: "tts-1", input: LONG_INPUT, response_format: "wav" }, auth));
  const wav = new Uint8Array(await speech.arrayBuffer());
  expect([speech.status, speech.headers.get("content-type")]).toEqual([200, "audio/wav"]);
  expect(wav.byteLength).toBeGreaterThan(1024 * 1024);
  const produced = w.probe.responses.at(-1)!.body;
  expect(produced.kind).toBe("bytes");
  const sent = (produced as { value: Uint8Array }).value;
  expect([wav.byteLength, Buffer.compare(wav, sent)]).toEqual([sent.byteLength, 0]);
  expect(speech.headers.get("content-length")).toBe(String(wav.byteLength));
  const form = encodeMultipart({ model: "whisper-1" }, { file: { filename: "speech.wav", contentType: "audio/wav", data: wav } });
  const text = await w.call("/v1/audio/transcriptions", { method: "POST", headers: { ...auth, "content-type": form.contentType }, body: form.body });
  expect([text.status, ((await text.json()) as { text: string }).text]).toEqual([200, LONG_INPUT]);
  expect(w.probe.requests.at(-1)?.body?.kind).toBe("stream");
}
