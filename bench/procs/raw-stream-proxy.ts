/**
 * The baseline of the chat benchmark, as its own process: a raw node:http streaming proxy that
 * reads the request and forwards it to the stub (argv[2]) over an undici Pool, then pipes the
 * answer's bytes to the client unchanged as they arrive (no parsing, no billing). Prints `{"url"}`;
 * exits when its stdin closes.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pipeline } from "node:stream/promises";
import { Pool } from "undici";
import { serveParent } from "./lib.js";

const stubUrl = process.argv[2];
if (!stubUrl) throw new Error("usage: raw-stream-proxy.ts <stub url>");
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
        res.writeHead(up.statusCode, { "content-type": String(up.headers["content-type"] ?? "text/event-stream"), "cache-control": "no-cache" });
        res.flushHeaders();
        await pipeline(up.body, res);
      })
      .catch(() => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  serveParent({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, () => ({}));
});
