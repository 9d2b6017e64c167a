/**
 * The baseline of the benchmarks, as its own process: a raw node:http proxy that reads the
 * request and forwards it to the stub (argv[2]) over an undici Pool. `buffer` (argv[3], the
 * default; the media benchmarks) reads the whole answer and writes it back with its length;
 * `stream` (the chat benchmark) pipes the answer's bytes to the client as they arrive, with no
 * parsing and no billing. Prints `{"url"}`; exits when its stdin closes.
 *
 * With argv[4], JSON `{ url, table }` of a PostgreSQL table made with floor-sql.ts (by
 * bench/ledger-http.ts), the proxy is the PostgreSQL floor of the ledger benchmark: around each
 * forwarded call it runs the two guarded UPDATEs of one key row that a reserve-before,
 * settle-after design needs at the least (each its own statement and commit, on a pg Pool of 10
 * like the store's), and nothing else.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { Pool } from "undici";
import { floorSql } from "./floor-sql.js";
import { serveParent } from "./lib.js";
import { createProfiler } from "./profiler.js";

const stubUrl = process.argv[2];
const mode = process.argv[3] ?? "buffer";
if (!stubUrl || (mode !== "buffer" && mode !== "stream")) throw new Error("usage: raw-proxy.ts <stub url> [buffer|stream]");
const upstream = new Pool(stubUrl, { connections: 128, keepAliveTimeout: 30_000 });
const floor = process.argv[4] ? (JSON.parse(process.argv[4]) as { url: string; table: string }) : undefined;
const ledger = floor && new pg.Pool({ connectionString: floor.url, max: 10 });
const PRICE = 2;
const sql = floor && floorSql(floor.table);
/** The floor's reserve (a guarded UPDATE: it must change the row) and settle, as named prepared statements. */
const steps = sql && {
  reserve: { name: "floor_reserve", text: sql.reserve, values: [PRICE] },
  settle: { name: "floor_settle", text: sql.settle, values: [PRICE, PRICE] },
};
const step = async (name: "reserve" | "settle") => {
  if (!ledger || !steps) throw new Error("no floor table");
  const r = await ledger.query(steps[name]);
  if (r.rowCount !== 1) throw new Error(`floor ${name} changed no row`);
};
/** Forwards one request's body to the stub and answers with what it returned (the baseline's whole work). */
function forward(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): Promise<void> {
  return upstream
    .request({
      path: req.url ?? "/",
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
      body,
    })
    .then(async (up) => {
      if (mode === "stream") {
        res.writeHead(up.statusCode, { "content-type": String(up.headers["content-type"] ?? "text/event-stream"), "cache-control": "no-cache" });
        res.flushHeaders();
        await pipeline(up.body, res);
        return;
      }
      const answer = Buffer.from(await up.body.arrayBuffer());
      if (ledger) await step("settle");
      res.writeHead(up.statusCode, { "content-type": String(up.headers["content-type"] ?? "application/json"), "content-length": answer.length }).end(answer);
    });
}
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    (ledger ? step("reserve").then(() => forward(req, res, body)) : forward(req, res, body)).catch(() =>
      res.headersSent ? res.destroy() : res.writeHead(502).end(),
    );
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  const profiler = createProfiler();
  serveParent({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, async (command) => (await profiler(command)) ?? {});
});
