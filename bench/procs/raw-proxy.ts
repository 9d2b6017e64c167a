/**
 * The baseline of the media benchmarks, as its own process: a raw node:http pass-through proxy
 * that reads the request and forwards it to the stub (argv[2]) over an undici Pool, then writes
 * the answer back. Prints `{"url"}`; exits when its stdin closes.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";
import { serveParent } from "./lib.js";

const stubUrl = process.argv[2];
if (!stubUrl) throw new Error("usage: raw-proxy.ts <stub url>");
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
        const body = Buffer.from(await up.body.arrayBuffer());
        res.writeHead(up.statusCode, { "content-type": String(up.headers["content-type"] ?? "application/json"), "content-length": body.length }).end(body);
      })
      .catch(() => res.writeHead(502).end());
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  serveParent({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, () => ({}));
});
