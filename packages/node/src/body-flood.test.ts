/**
 * A flood of large unauthenticated bodies against the real server process: 200 concurrent 32 MB
 * uploads to a paid media route, with a declared length and chunked. The server must refuse them
 * (413, 503 or 429, or cut the connection) without holding them, so its resident memory grows by
 * less than 100 MB.
 */
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "./testing/cli-process.js";

const MB = 1024 * 1024;
const BODY = 32 * MB;
const CONCURRENT = 200;
const chunk = Buffer.alloc(64 * 1024, 0x61);

/** Resident and peak memory of a process in bytes, from /proc. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

/** Sends one 32 MB body (declared or chunked) in 64 KiB writes; resolves with the status, or 0 when the server cut the connection first. */
function upload(url: string, chunked: boolean): Promise<number> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { "content-type": "application/json", ...(chunked ? {} : { "content-length": String(BODY) }) };
    const req = request(`${url}/v1/embeddings`, { method: "POST", headers, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", () => resolve(0));
    let sent = 0;
    const pump = () => {
      while (sent < BODY) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

describe("200 concurrent 32 MB unauthenticated bodies (real server process)", () => {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-flood-"));
  let server: CliProcess;
  let url = "";
  beforeAll(async () => {
    server = startCli(["serve", "--port", "0", "--db", join(dir, "flood.db")]);
    url = await server.url();
    // Warm up the route once so lazy initialisation is not counted as growth.
    expect(await upload(url, false)).toBeGreaterThanOrEqual(0);
  }, 60_000);
  afterAll(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const chunked of [false, true]) {
    it(`${chunked ? "chunked" : "with Content-Length"}: refused, and RSS grows by less than 100 MB`, async () => {
      const pid = server.child.pid!;
      const before = memory(pid).rss;
      // Reset the peak (VmHWM) so it measures this flood alone.
      writeFileSync(`/proc/${pid}/clear_refs`, "5");
      const statuses = await Promise.all(Array.from({ length: CONCURRENT }, () => upload(url, chunked)));
      const growth = memory(pid).peak - before;
      // 413 over the unpaid body limit, 503 past the process's in-flight cap, 429 past this client's share of it, 0 cut.
      const refused = statuses.filter((s) => s === 413 || s === 503 || s === 429 || s === 0).length;
      expect(refused, JSON.stringify(statuses.filter((s) => ![413, 503, 429, 0].includes(s)))).toBe(CONCURRENT);
      expect(statuses.filter((s) => s === 413).length).toBeGreaterThan(0);
      expect(growth, `peak RSS grew by ${(growth / MB).toFixed(1)} MB`).toBeLessThan(100 * MB);
      // The server still serves.
      const health = await fetch(`${url}/v1/models?limit=1`);
      expect(health.status).toBe(200);
    }, 120_000);
  }
});
