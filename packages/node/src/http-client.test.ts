import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError } from "@tollgate/core";
import { createUndiciHttpClient } from "./http-client.js";

let server: http.Server;
let base: string;
const client = createUndiciHttpClient({ defaultTimeoutMs: 5_000 });

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (c: string) => (body += c));
    req.on("end", () => {
      if (req.url === "/echo") {
        res.setHeader("x-multi", ["a", "b"]);
        res.writeHead(201, { "Content-Type": "application/json", "X-Seen-Auth": req.headers.authorization ?? "" });
        res.end(JSON.stringify({ method: req.method, body }));
      } else if (req.url?.startsWith("/where")) {
        res.writeHead(200).end(req.url);
      } else if (req.url === "/slow-headers") {
        setTimeout(() => res.end("late"), 1_000);
      } else if (req.url === "/slow-body") {
        res.writeHead(200);
        res.write("part");
        setTimeout(() => res.end("rest"), 1_000);
      } else {
        res.writeHead(404).end("nope");
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: unknown) => (e instanceof GatewayError ? e.code : `other: ${String(e)}`),
  );

describe("createUndiciHttpClient", () => {
  it("returns status, lower-case joined headers and the body, read once for text() and bytes()", async () => {
    const res = await client({ method: "POST", url: `${base}/echo`, headers: { authorization: "Bearer t" }, body: "hello" });
    expect(res.status).toBe(201);
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.headers["x-seen-auth"]).toBe("Bearer t");
    expect(res.headers["x-multi"]).toBe("a, b");
    expect(JSON.parse(await res.text())).toEqual({ method: "POST", body: "hello" });
    expect(new TextDecoder().decode(await res.bytes())).toContain("hello");
  });

  it("resolves any HTTP status and sends byte bodies", async () => {
    const res = await client({ method: "PUT", url: `${base}/missing`, body: new TextEncoder().encode("x") });
    expect([res.status, await res.text()]).toEqual([404, "nope"]);
  });

  it("sends each URL's own path and query (the parsed target is memoized per URL), and refuses what is not http(s)", async () => {
    for (let round = 0; round < 2; round++)
      for (const path of ["/where", "/where?x=1", "/where?x=2&y=%20", "/where/%C3%A9"])
        expect(await (await client({ method: "GET", url: `${base}${path}#fragment` })).text()).toBe(path);
    for (const url of ["ftp://127.0.0.1/x", "not a url"]) await expect(client({ method: "GET", url })).rejects.toMatchObject({ code: "upstream_error" });
  });

  it("rejects with upstream_timeout when headers or the body exceed timeoutMs", async () => {
    expect(await codeOf(client({ method: "GET", url: `${base}/slow-headers`, timeoutMs: 100 }))).toBe("upstream_timeout");
    const res = await client({ method: "GET", url: `${base}/slow-body`, timeoutMs: 200 });
    expect(res.status).toBe(200);
    expect(await codeOf(res.text())).toBe("upstream_timeout");
  });

  it("releases an unread body at the deadline without crashing", async () => {
    const res = await client({ method: "GET", url: `${base}/slow-body`, timeoutMs: 100 });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 250));
    expect(await codeOf(res.bytes())).toBe("upstream_timeout");
  });

  it("rejects with upstream_error when the connection fails", async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await codeOf(client({ method: "GET", url: `http://127.0.0.1:${port}/` }))).toBe("upstream_error");
  });

  it("re-throws the caller's abort reason", async () => {
    const controller = new AbortController();
    const reason = new Error("caller gave up");
    setTimeout(() => controller.abort(reason), 50);
    await expect(client({ method: "GET", url: `${base}/slow-headers`, signal: controller.signal })).rejects.toBe(reason);
  });

  it("reuses pooled keep-alive connections", async () => {
    const ports = new Set<number>();
    const onConnection = (socket: import("node:net").Socket) => ports.add(socket.remotePort!);
    server.on("connection", onConnection);
    for (let i = 0; i < 20; i++) await (await client({ method: "GET", url: `${base}/echo` })).text();
    server.off("connection", onConnection);
    // The pool may open a second socket while the first finishes its response; never one per request.
    expect(ports.size).toBeLessThanOrEqual(2);
  });
});
