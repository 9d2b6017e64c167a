/**
 * The standalone server's logs, health and metrics, as a real `tollgate serve` child process:
 * JSON request lines on stdout, `--log-level`, `--log-format`, `--metrics-token` and the
 * health/metrics URLs in the start-up lines.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, startCli, type CliProcess } from "./testing/cli-process.js";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

function serve(args: string[], env: Record<string, string> = {}): CliProcess {
  const db = join(mkdtempSync(join(tmpdir(), "tollgate-cli-logs-")), "t.db");
  const run = startCli(["serve", "--port", "0", "--db", db, "--dev-chain", "off", ...args], env);
  children.push(run.child);
  return run;
}

/** The JSON lines of stdout. */
const jsonLines = (out: string) =>
  out
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Waits until stdout holds a JSON line matching `match` (pino writes synchronously, but the pipe may lag). */
async function lineOf(run: CliProcess, match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const found = jsonLines(run.out()).find(match);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no such log line in:\n${run.out()}`);
}

describe("tollgate serve: logs, health and metrics", () => {
  it("writes one JSON line per request to stdout (not for probes at info) and prints the health and metrics URLs", async () => {
    const run = serve(["--log-format", "json"]);
    const url = await run.url();
    expect(run.out()).toContain(
      `health: ${url}/healthz  readiness: ${url}/readyz  metrics: ${url}/metrics (open to anyone who can reach this port; set --metrics-token to require a token)`,
    );
    expect(run.out()).toContain("logs: info and above, json, to stdout");
    // Every line is JSON, the start-up banner too: one line with the URL and what is enabled.
    expect(
      run
        .out()
        .trim()
        .split("\n")
        .every((l) => l.startsWith("{")),
    ).toBe(true);
    const banner = jsonLines(run.out())[0]!;
    expect(banner).toMatchObject({ level: 30, msg: `Tollgate listening on ${url}`, url });
    expect(banner.startup).toEqual(expect.arrayContaining([`logs: info and above, json, to stdout`, expect.stringMatching(/^database: /)]));
    const res = await fetch(`${url}/v1/models?limit=1`, { headers: { "x-request-id": "cli-log-test-1" } });
    expect(res.status).toBe(200);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/no/such/route`)).status).toBe(404);
    const line = await lineOf(run, (l) => l.reqId === "cli-log-test-1");
    expect(line).toMatchObject({
      level: 30,
      msg: "request",
      component: "tollgate",
      method: "GET",
      route: "/v1/models",
      path: "/v1/models",
      status: 200,
      pid: run.child.pid,
    });
    expect(line.latencyMs).toEqual(expect.any(Number));
    await lineOf(run, (l) => l.route === "unmatched" && l.status === 404);
    expect(jsonLines(run.out()).filter((l) => l.route === "/healthz")).toEqual([]);
    // The index and readiness answer on the real server too.
    expect(((await (await fetch(`${url}/`)).json()) as { name: string }).name).toBe("tollgate");
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
  });

  it("--log-level debug also logs probes; warn logs no request line for a 200", async () => {
    const debug = serve(["--log-format", "json", "--log-level", "debug"]);
    const debugUrl = await debug.url();
    await fetch(`${debugUrl}/healthz`);
    expect(await lineOf(debug, (l) => l.route === "/healthz")).toMatchObject({ level: 20, status: 200 });
    const quiet = serve(["--log-format", "json"], { TOLLGATE_LOG_LEVEL: "warn" });
    const quietUrl = await quiet.url();
    await fetch(`${quietUrl}/v1/models?limit=1`);
    await fetch(`${quietUrl}/healthz`);
    expect(quiet.out()).toContain("logs: warn and above");
    // Only the start-up line, which is written at every level.
    expect(jsonLines(quiet.out()).map((l) => l.msg)).toEqual([`Tollgate listening on ${quietUrl}`]);
  });

  it("--log-format pretty writes readable lines, not JSON", async () => {
    const run = serve(["--log-format", "pretty"]);
    const url = await run.url();
    await fetch(`${url}/v1/models?limit=1`);
    for (let i = 0; i < 200 && !/GET \/v1\/models 200 [\d.]+ms/.test(run.out()); i++) await new Promise((r) => setTimeout(r, 25));
    expect(run.out()).toMatch(/INFO.*GET \/v1\/models 200 [\d.]+ms/);
    expect(jsonLines(run.out())).toEqual([]);
  });

  it("TOLLGATE_METRICS_TOKEN guards /metrics (401 without it), and is never printed", async () => {
    const token = "cli-metrics-token-0123456789";
    const run = serve(["--log-format", "json"], { TOLLGATE_METRICS_TOKEN: token });
    const url = await run.url();
    expect(run.out()).toContain(`metrics: ${url}/metrics (bearer token required)`);
    expect(run.out()).not.toContain(token);
    const refused = await fetch(`${url}/metrics`);
    expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([401, "authentication_required"]);
    const ok = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    const text = await ok.text();
    expect(text).toMatch(/^tollgate_http_requests_total\{method="GET",route="\/metrics",status="401"\} 1$/m);
    // The standalone server also collects the process metrics.
    expect(text).toContain("# TYPE process_cpu_seconds_total counter");
  });

  it("refuses a bad --log-level, --log-format or a short metrics token (exit 2, all named)", async () => {
    const { code, err } = await runCli(["serve", "--log-level", "loud", "--log-format", "xml", "--metrics-token", "short"]);
    expect(code).toBe(2);
    expect(err).toContain("--log-level must be one of trace, debug, info, warn, error, fatal, silent");
    expect(err).toContain("--log-format must be json or pretty");
    expect(err).toContain("--metrics-token must be at least 16 characters");
    expect(err).not.toContain("short");
  });
});
