import http from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { GatewayError, toErrorEnvelope } from "@tollgate/core";
import type { GatewayRequest, GatewayResponse } from "@tollgate/core";
import { createNodeHandler, toGatewayRequest, writeGatewayResponse } from "./bridge.js";
import type { NodeHandlerOptions } from "./bridge.js";

type Handle = (req: GatewayRequest) => Promise<GatewayResponse>;
const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
});

async function listen(listener: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = http.createServer(listener);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function gatewayServer(handle: Handle, opts: NodeHandlerOptions = {}, next?: (res: ServerResponse) => void): Promise<string> {
  const handler = createNodeHandler({ handle }, opts);
  return listen((req, res) => void handler(req, res, next ? () => next(res) : undefined));
}

const ok = (value: unknown = { ok: true }): GatewayResponse => ({ status: 200, headers: { "content-type": "application/json" }, body: { kind: "json", value } });
const errorResponse = (e: unknown): GatewayResponse => {
  const env = toErrorEnvelope(e, "req_test");
  return { status: env.status, headers: env.headers, body: { kind: "json", value: env.body } };
};

/** A raw request whose body the caller writes; resolves the response with its full text. */
function send(url: string, init: { method?: string; path?: string; headers?: http.OutgoingHttpHeaders; body?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const headers = init.body === undefined ? init.headers : { "content-length": Buffer.byteLength(init.body), ...init.headers };
    const req = http.request(`${url}${init.path ?? "/"}`, { method: init.method ?? "GET", headers }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (c: string) => (text += c)).on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

const deferred = <T = void>() => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

describe("toGatewayRequest", () => {
  it("lower-cases headers, joins repeats, splits the query and strips the base path", async () => {
    let seen: GatewayRequest | undefined;
    const url = await gatewayServer(async (req) => ((seen = req), ok()), { basePath: "/gw/" });
    const res = await send(url, { path: "/gw/v1/models/a%2Fb?x=1&x=2&q=%20hi", headers: { "X-Custom": "A", "x-multi": ["one", "two"] } });
    expect(res.status).toBe(200);
    expect(seen!.method).toBe("GET");
    expect(seen!.path).toBe("/v1/models/a%2Fb");
    expect(seen!.query.getAll("x")).toEqual(["1", "2"]);
    expect(seen!.query.get("q")).toBe(" hi");
    expect(seen!.headers["x-custom"]).toBe("A");
    expect(seen!.headers["x-multi"]).toBe("one, two");
    expect(seen!.body).toBeUndefined();
    expect(seen!.origin).toBe(url);
    expect(seen!.signal?.aborted).toBe(false);
  });

  it("passes a request outside the base path to next(), or unchanged without next", async () => {
    const seen: string[] = [];
    const withNext = await gatewayServer(async (req) => (seen.push(req.path), ok()), { basePath: "/gw" }, (res) => res.writeHead(418).end());
    expect((await send(withNext, { path: "/other" })).status).toBe(418);
    expect((await send(withNext, { path: "/gwx" })).status).toBe(418);
    expect((await send(withNext, { path: "/gw" })).status).toBe(200);
    const without = await gatewayServer(async (req) => (seen.push(req.path), ok()), { basePath: "/gw" });
    expect((await send(without, { path: "/other?a=1" })).status).toBe(200);
    expect(seen).toEqual(["/", "/other"]);
  });

  it("takes the origin from X-Forwarded-* only when trustProxy is set", async () => {
    const origins: (string | undefined)[] = [];
    const headers = { "x-forwarded-proto": "https, http", "x-forwarded-host": "api.example.com" };
    const trusted = await gatewayServer(async (req) => (origins.push(req.origin), ok()), { trustProxy: true });
    const untrusted = await gatewayServer(async (req) => (origins.push(req.origin), ok()));
    await send(trusted, { headers });
    await send(untrusted, { headers });
    expect(origins).toEqual(["https://api.example.com", untrusted]);
  });

  it("reads the body lazily, once, and only when asked", async () => {
    const reads: Promise<Uint8Array>[] = [];
    const url = await gatewayServer(async (req) => {
      if (req.body?.kind !== "stream") return ok({ kind: req.body?.kind ?? "none" });
      if (req.query.get("read") !== "1") return ok({ kind: "stream", unread: true });
      reads.push(req.body.read(1024), req.body.read(1));
      return ok({ text: Buffer.from(await reads[0]!).toString() });
    });
    expect(JSON.parse((await send(url, { method: "POST", path: "/?read=1", body: '{"a":1}' })).text)).toEqual({ text: '{"a":1}' });
    expect(reads[0]).toBe(reads[1]);
    expect(JSON.parse((await send(url, { method: "POST", body: "x".repeat(5000) })).text)).toEqual({ kind: "stream", unread: true });
    // Keep-alive still works after an unread body: Node drains it.
    expect(JSON.parse((await send(url, { method: "DELETE" })).text)).toEqual({ kind: "none" });
    expect(JSON.parse((await send(url, { method: "DELETE", body: "{}", headers: { "content-type": "application/json" } })).text)).toEqual({ kind: "stream", unread: true });
  });

  it("rejects with payload_too_large on a Content-Length over the limit before reading", async () => {
    const url = await gatewayServer(async (req) => {
      try {
        await (req.body as { read(n: number): Promise<Uint8Array> }).read(100);
        return ok();
      } catch (e) {
        return errorResponse(e);
      }
    });
    const res = await send(url, { method: "POST", body: "x".repeat(101) });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text).error.code).toBe("payload_too_large");
  });

  it("answers 413 mid-stream on a chunked body over the limit, without waiting for the rest", async () => {
    const limit = 100 * 1024;
    let error: unknown;
    const url = await gatewayServer(
      async (req) => {
        try {
          await (req.body as { read(n: number): Promise<Uint8Array> }).read(1024 * 1024);
          return ok();
        } catch (e) {
          error = e;
          return errorResponse(e);
        }
      },
      { maxBodySize: limit },
    );
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${url}/`, { method: "POST", headers: { "transfer-encoding": "chunked" } }, (res) => {
        resolve(res.statusCode!);
        res.resume();
        req.destroy();
      });
      req.on("error", reject);
      // 192 KiB, then keep the upload open: the answer must not wait for the end.
      for (let i = 0; i < 3; i++) req.write(Buffer.alloc(64 * 1024, 0x61));
    });
    expect(status).toBe(413);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe("payload_too_large");
  });

  it("uses a pre-parsed body from opts.parsedBody or a framework's req.body", async () => {
    const kinds: unknown[] = [];
    const handle: Handle = async (req) => (kinds.push(req.body), ok());
    const url = await listen((req, res) => {
      const mode = req.url!.slice(1);
      if (mode === "opts") {
        req.resume();
        void writeGatewayResponse(res, ok()).then(() => handle(toGatewayRequest(req, { parsedBody: { from: "opts" } })));
        return;
      }
      if (mode === "consumed") {
        // What body-parser does when it parsed: consume the stream, then set req.body.
        let text = "";
        req.setEncoding("utf8").on("data", (c: string) => (text += c)).on("end", () => {
          (req as IncomingMessage & { body?: unknown }).body = JSON.parse(text);
          void createNodeHandler({ handle })(req, res);
        });
        return;
      }
      // body-parser for a type it does not parse: `req.body = {}` with the stream untouched.
      (req as IncomingMessage & { body?: unknown }).body = {};
      void createNodeHandler({ handle })(req, res);
    });
    await send(url, { method: "POST", path: "/opts", body: "ignored" });
    await send(url, { method: "POST", path: "/consumed", body: '{"from":"framework"}' });
    await send(url, { method: "POST", path: "/untouched", body: "raw" });
    expect(kinds[0]).toEqual({ kind: "parsed", value: { from: "opts" } });
    expect(kinds[1]).toEqual({ kind: "parsed", value: { from: "framework" } });
    expect((kinds[2] as { kind: string }).kind).toBe("stream");
  });

  it("aborts the signal when the client disconnects, and not after a normal body read", async () => {
    const aborted = deferred<boolean>();
    const finished: boolean[] = [];
    const url = await gatewayServer(async (req) => {
      if (req.method === "POST") {
        await (req.body as { read(n: number): Promise<Uint8Array> }).read(1024);
        await new Promise((r) => setTimeout(r, 50));
        finished.push(req.signal!.aborted);
        return ok();
      }
      await new Promise((r) => req.signal!.addEventListener("abort", r));
      aborted.resolve(req.signal!.aborted);
      return ok();
    });
    await send(url, { method: "POST", body: "{}" });
    expect(finished).toEqual([false]);
    const req = http.request(`${url}/wait`);
    req.on("error", () => undefined);
    req.end();
    setTimeout(() => req.destroy(), 50);
    expect(await aborted.promise).toBe(true);
  });
});

describe("writeGatewayResponse", () => {
  it("writes JSON (bigint as string), bytes with a length, empty bodies and HEAD without a body", async () => {
    const url = await gatewayServer(async (req) => {
      if (req.path === "/json") return ok({ amount: 12345678901234567890n, s: "é" });
      if (req.path === "/bytes") return { status: 200, headers: { "content-type": "audio/wav" }, body: { kind: "bytes", value: new Uint8Array([1, 2, 3]) } };
      return { status: 204, headers: { "x-a": "b" }, body: { kind: "empty" } };
    });
    const json = await send(url, { path: "/json" });
    expect(JSON.parse(json.text)).toEqual({ amount: "12345678901234567890", s: "é" });
    expect(json.headers["content-length"]).toBe(String(Buffer.byteLength(json.text)));
    const bytes = await send(url, { path: "/bytes" });
    expect([bytes.headers["content-type"], bytes.headers["content-length"], bytes.text]).toEqual(["audio/wav", "3", "\x01\x02\x03"]);
    const empty = await send(url, { path: "/empty" });
    expect([empty.status, empty.headers["x-a"], empty.text]).toEqual([204, "b", ""]);
    const head = await send(url, { method: "HEAD", path: "/json" });
    expect([head.status, head.text]).toEqual([200, ""]);
  });

  it("turns a throwing gateway or an unserialisable body into one 500 envelope and one onError", async () => {
    const errors: unknown[] = [];
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const url = await gatewayServer(async (req) => {
      if (req.path === "/throw") throw new Error("boom");
      return ok(circular);
    }, { onError: (e) => errors.push(e) });
    for (const path of ["/throw", "/circular"]) {
      const res = await send(url, { path, headers: { "x-request-id": "abc-1" } });
      expect(res.status).toBe(500);
      expect(JSON.parse(res.text).error).toMatchObject({ code: "internal_error", requestId: "abc-1" });
    }
    expect(errors).toHaveLength(2);
  });

  it("streams SSE frames as they are yielded and stops iterating when the client leaves", async () => {
    const gate = deferred();
    const stopped = deferred<number>();
    const url = await gatewayServer(async () => ({
      status: 200,
      headers: { "content-type": "text/event-stream" },
      body: {
        kind: "sse",
        frames: (async function* () {
          let n = 0;
          try {
            yield `data: ${++n}\n\n`;
            await gate.promise;
            for (;;) {
              yield `data: ${++n}\n\n`;
              await new Promise((r) => setTimeout(r, 10));
            }
          } finally {
            stopped.resolve(n);
          }
        })(),
      },
    }));
    const received: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${url}/stream`, (res) => {
        expect(res.headers["cache-control"]).toBe("private, no-store, no-transform");
        res.setEncoding("utf8").on("data", (chunk: string) => {
          received.push(chunk);
          // The first frame arrived while the generator is still blocked on the gate.
          if (received.length === 1) gate.resolve();
          if (received.join("").includes("data: 3")) {
            req.destroy();
            resolve();
          }
        });
      });
      req.on("error", reject);
    });
    expect(received[0]).toBe("data: 1\n\n");
    const last = await stopped.promise;
    expect(last).toBeLessThan(10);
  });

  it("honours backpressure: a slow reader of a big SSE stream does not make the server buffer it all", async () => {
    const frame = `data: ${"x".repeat(64 * 1024)}\n\n`;
    let pulled = 0;
    const stopped = deferred();
    const url = await gatewayServer(async () => ({
      status: 200,
      headers: {},
      body: {
        kind: "sse",
        frames: (async function* () {
          try {
            for (let i = 0; i < 2000; i++) {
              pulled++;
              yield frame;
            }
          } finally {
            stopped.resolve();
          }
        })(),
      },
    }));
    const req = http.get(`${url}/big`, (res) => res.pause());
    req.on("error", () => undefined);
    await new Promise((r) => setTimeout(r, 300));
    const atPause = pulled;
    await new Promise((r) => setTimeout(r, 300));
    // ~125 MiB on offer; only socket buffers' worth (a few MiB) may be pulled while the reader sleeps.
    expect(atPause).toBeLessThan(300);
    expect(pulled).toBe(atPause);
    req.destroy();
    await stopped.promise;
    expect(pulled).toBeLessThan(2000);
  });

  it("reports an SSE iterator failure once and cuts the stream without crashing", async () => {
    const errors: unknown[] = [];
    const url = await gatewayServer(async () => ({
      status: 200,
      headers: {},
      body: {
        kind: "sse",
        frames: (async function* () {
          yield "data: 1\n\n";
          throw new Error("upstream went away");
        })(),
      },
    }), { onError: (e) => errors.push(e) });
    const outcome = await new Promise<string>((resolve) => {
      http.get(`${url}/`, (res) => {
        res.on("data", () => undefined).on("end", () => resolve("end")).on("error", () => resolve("error")).on("aborted", () => resolve("aborted"));
      }).on("error", () => resolve("error"));
    });
    expect(outcome).not.toBe("end");
    expect(errors).toHaveLength(1);
  });
});
