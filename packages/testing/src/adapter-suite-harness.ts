/**
 * The harness of the adapter conformance suite: a probe around `gateway.handle` (what reached the
 * gateway, what it answered, whether an SSE stream was stopped), a stream clock whose waits the
 * test releases, and one client that speaks to a listening server or to in-process handlers.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createManualClock } from "@tollgate/core";
import { createGateway } from "@tollgate/core";
import type { Gateway } from "@tollgate/core";
import type { GatewayOptions } from "@tollgate/core";
import { sseFrame } from "@tollgate/core";
import type { GatewayRequest, GatewayResponse } from "@tollgate/core";
import { createMemoryStore } from "@tollgate/core";
import type { Sleep } from "@tollgate/core/internals";

/** What the suite asks an adapter's `start` hook to serve. */
export interface AdapterStartOptions {
  /** Where the gateway is mounted (`/gw` in every scenario); the app answers other paths itself. */
  readonly basePath: string;
  /** Passed on as the adapter's `maxBodySize` option when a scenario sets it. */
  readonly maxBodySize?: number;
  /** Passed on as the adapter's `onError` option. */
  readonly onError: (error: unknown) => void;
  /** Only with `preParsedJson: true` in the suite options: parse JSON in the framework first (e.g. `express.json()`). */
  readonly preParsedJson?: boolean;
}

/**
 * A served gateway. `url`: a real listening server (`http://127.0.0.1:port`, paths are appended,
 * the basePath included). `fetch`: in-process handlers (Next.js) taking a real `Request`.
 */
export type AdapterTarget = { readonly url: string; close(): Promise<void> } | { fetch(request: Request): Promise<Response>; close?(): Promise<void> };

/** Options of `runAdapterConformance`. */
export interface AdapterConformanceOptions {
  /** Serves `gateway` through the adapter under `options.basePath`, inside an app that 404s everything else. Called once per test. */
  start(gateway: Pick<Gateway, "handle">, options: AdapterStartOptions): Promise<AdapterTarget>;
  /** The framework can parse JSON bodies before the adapter sees them; the parsed-body scenarios then run too. @default false */
  preParsedJson?: boolean;
}

/** Paths (relative to the base path) on which the probe misbehaves like a buggy gateway would. */
export const EXPLODE = "/__suite/explode";
export const EXPLODE_STREAM = "/__suite/explode-stream";

/** What went through the probe. */
export interface Probe {
  readonly requests: GatewayRequest[];
  readonly responses: GatewayResponse[];
  /** Resolves once an SSE frame iterator was told to stop (`return()`) or ran out. */
  readonly sseStopped: Promise<"returned" | "done">;
  /** Resolves once that iterator has finished (its `return()` settled, or it ran out). */
  readonly sseFinished: Promise<void>;
  /** Makes the {@link EXPLODE_STREAM} stream throw after its first frame (it waits for this call). */
  breakStream(): void;
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Wraps `gateway.handle`, recording requests and responses and watching SSE iterators. */
export function probeGateway(gateway: Pick<Gateway, "handle">): { handle: Gateway["handle"]; probe: Probe } {
  const stopped = deferred<"returned" | "done">();
  const finished = deferred<void>();
  const broken = deferred<void>();
  const probe: Probe = { requests: [], responses: [], sseStopped: stopped.promise, sseFinished: finished.promise, breakStream: () => broken.resolve() };
  const watch = (frames: AsyncIterable<string>): AsyncIterable<string> => ({
    [Symbol.asyncIterator]() {
      const inner = frames[Symbol.asyncIterator]();
      return {
        async next() {
          const step = await inner.next();
          if (step.done) {
            stopped.resolve("done");
            finished.resolve();
          }
          return step;
        },
        async return(value?: unknown) {
          stopped.resolve("returned");
          try {
            return (await inner.return?.(value)) ?? { done: true, value: undefined };
          } finally {
            finished.resolve();
          }
        },
      };
    },
  });
  const handle = async (request: GatewayRequest): Promise<GatewayResponse> => {
    probe.requests.push(request);
    if (request.path === EXPLODE) throw new Error("suite: an error escaped gateway.handle");
    const response = request.path === EXPLODE_STREAM ? brokenStream(broken.promise) : await gateway.handle(request);
    probe.responses.push(response);
    return response.body.kind === "sse" ? { ...response, body: { kind: "sse", frames: watch(response.body.frames) } } : response;
  };
  return { handle, probe };
}

function brokenStream(breaking: Promise<void>): GatewayResponse {
  async function* frames() {
    yield sseFrame({ event: "suite.tick", data: { n: 1 } });
    await breaking; // a client drops frames queued before a stream error; break only once the first one was read
    throw new Error("suite: the stream broke");
  }
  return { status: 200, headers: { "content-type": "text/event-stream; charset=utf-8" }, body: { kind: "sse", frames: frames() } };
}

/** The video stream's waits: each one moves the clock and then parks until the test releases it or the request aborts. */
export interface StreamTime {
  /** How many waits the stream started. */
  readonly count: () => number;
  /** How many parked waits ended because the request's signal aborted. */
  readonly aborted: () => number;
  /** Lets every parked wait go on. */
  releaseAll(): void;
}

/** The internal secret of the suite's gateways: with it, `x-session-user-address` names the wallet a key is created for. */
export const SUITE_INTERNAL_SECRET = "adapter-suite-internal-secret";

/** A fresh gateway on the memory store with a manual clock, a local video provider and parked stream waits. */
export function suiteGateway(cors?: GatewayOptions["cors"]): { gateway: Gateway; time: StreamTime; now: () => number } {
  let count = 0;
  let aborted = 0;
  const parked: (() => void)[] = [];
  const clock = createManualClock();
  const sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve) => {
      count += 1;
      clock.advance(ms);
      if (signal?.aborted) return resolve();
      const go = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        aborted += 1;
        go();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      parked.push(go);
    });
  const gateway = createGateway({
    store: createMemoryStore(),
    clock,
    sweepIntervalMs: 0,
    media: { providers: { local: { type: "local", videoDurationMs: 10_000 } } },
    video: { pollerIntervalMs: 0, sleep },
    internalSecret: SUITE_INTERNAL_SECRET,
    ...(cors ? { cors } : {}),
  });
  const time: StreamTime = { count: () => count, aborted: () => aborted, releaseAll: () => parked.splice(0).forEach((go) => go()) };
  return { gateway, time, now: () => clock.now() };
}

/**
 * Starts `server` on 127.0.0.1 and a free port; `close()` cuts open connections (e.g. SSE) and stops it.
 * Idle keep-alive sockets live 65 s (as with `serve`): with Node's 5 s default, a slow test could
 * send its next POST just as the server closes the reused socket, and get ECONNRESET.
 */
export async function listenHttp(server: http.Server): Promise<{ url: string; close(): Promise<void> }> {
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A request of the suite; `headers` values that are arrays go out as repeated header lines where HTTP allows it. */
export interface SuiteRequest {
  readonly method?: string;
  readonly headers?: Record<string, string | readonly string[]>;
  readonly body?: string | Uint8Array | ReadableStream<Uint8Array>;
  readonly signal?: AbortSignal;
  /** Over HTTP, send with node:http as given (e.g. a GET with `content-length: 0`, which fetch cannot send). */
  readonly raw?: boolean;
}

/** Sends one request to a target. Over HTTP, repeated header lines need node:http (fetch would merge them first). */
export async function send(target: AdapterTarget, path: string, init: SuiteRequest = {}): Promise<Response> {
  const repeated = Object.values(init.headers ?? {}).some((v) => Array.isArray(v));
  if ("url" in target && (repeated || init.raw)) return sendRaw(`${target.url}${path}`, init);
  const headers = new Headers();
  for (const [name, value] of Object.entries(init.headers ?? {})) for (const v of typeof value === "string" ? [value] : value) headers.append(name, v);
  const request = new Request("url" in target ? `${target.url}${path}` : `http://app.test${path}`, {
    method: init.method ?? "GET",
    headers,
    ...(init.body === undefined ? {} : { body: init.body as BodyInit, duplex: "half" }),
    ...(init.signal ? { signal: init.signal } : {}),
  } as RequestInit);
  return "url" in target ? fetch(request) : target.fetch(request);
}

function sendRaw(url: string, init: SuiteRequest): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? "GET", headers: init.headers as http.OutgoingHttpHeaders }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const headers = new Headers();
        for (let i = 0; i < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const body = res.statusCode === 204 || res.statusCode === 304 ? null : Buffer.concat(chunks);
        resolve(new Response(body, { status: res.statusCode ?? 0, headers }));
      });
    });
    req.on("error", reject);
    req.end(typeof init.body === "string" || init.body instanceof Uint8Array ? init.body : undefined);
  });
}

/** Reads SSE frames (blank-line separated) from a body until `count` frames arrived; returns them as text. */
export async function readFrames(reader: ReadableStreamDefaultReader<Uint8Array>, count: number, buffer: { text: string }): Promise<string[]> {
  const decoder = new TextDecoder();
  const frames: string[] = [];
  for (;;) {
    let end = buffer.text.indexOf("\n\n");
    while (end !== -1 && frames.length < count) {
      frames.push(buffer.text.slice(0, end));
      buffer.text = buffer.text.slice(end + 2);
      end = buffer.text.indexOf("\n\n");
    }
    if (frames.length >= count) return frames;
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended after ${frames.length} of ${count} frames`);
    buffer.text += decoder.decode(value, { stream: true });
  }
}
