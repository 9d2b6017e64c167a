/**
 * The baseline of the benchmarks, as its own process: a raw node:http proxy that reads the
 * request and forwards it to the stub (argv[2]) over an undici Pool. `buffer` (argv[3], the
 * default; the media benchmarks) reads the whole answer and writes it back with its length;
 * `stream` (the chat benchmark) pipes the answer's bytes to the client as they arrive, with no
 * parsing and no billing. Prints `{"url"}`; exits when its stdin closes.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pipeline } from "node:stream/promises";
import { Pool } from "undici";
import { serveParent } from "./lib.js";
import { createProfiler } from "./profiler.js";

const stubUrl = process.argv[2];
const mode = process.argv[3] ?? "buffer";
if (!stubUrl || (mode !== "buffer" && mode !== "stream")) throw new Error("usage: raw-proxy.ts <stub url> [buffer|stream]");
const upstream = new Pool(stubUrl, { connections: 128, keepAliveTimeout: 30_000 });
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    upstream
      .request({
        path: req.url ?? "/",
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
        body: Buffer.concat(chunks),
      })
      .then(async (up) => {
        if (mode === "stream") {
          res.writeHead(up.statusCode, { "content-type": String(up.headers["content-type"] ?? "text/event-stream"), "cache-control": "no-cache" });
          res.flushHeaders();
          await pipeline(up.body, res);
          return;
        }
        const body = Buffer.from(await up.body.arrayBuffer());
        res.writeHead(up.statusCode, { "content-type": String(up.headers["content-type"] ?? "application/json"), "content-length": body.length }).end(body);
      })
      .catch(() => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  const profiler = createProfiler();
  serveParent({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, async (command) => (await profiler(command)) ?? {});
});
