/**
 * The per-request log line, written by a real pino logger into a collecting destination: its
 * fields on a paid call, one line per request, levels by status, an upstream 500 at error level
 * with the stack, streams logged at their end, and what happens without a logger.
 */
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createGateway } from "../gateway.js";
import type { GatewayOptions } from "../options.js";
import { answerWith, createKey, embed, get, lineSink, OWNER, startUpstream, type Upstream } from "./test-fixtures.js";

let failing: Upstream;
beforeAll(async () => {
  failing = await startUpstream(answerWith(500, { error: { message: "the model server crashed" } }));
});
afterAll(() => failing?.close());

const gateways: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
  vi.restoreAllMocks();
});

/** A host app's wallet hook with a bug: it throws `message` as a TypeError. */
const brokenHook = (message: string) => () => {
  throw new TypeError(message);
};

/** `GET /api/keys` for a wallet, which asks the host's wallet hook. */
const listKeys = (gateway: Parameters<typeof get>[0]) => get(gateway, "/api/keys", { "x-session-user-address": OWNER });

/** A gateway logging into a sink at `level`. */
function logged(level: pino.LevelWithSilent = "info", options: GatewayOptions = {}) {
  const sink = lineSink();
  const gateway = createGateway({ sweepIntervalMs: 0, logger: pino({ level }, sink), ...options });
  gateways.push(gateway);
  return { gateway, lines: sink.lines };
}

describe("request log", () => {
  it("writes one info line per request with the request id, route pattern, status, latency, key, model, amount and upstream time", async () => {
    const { gateway, lines } = logged();
    const { keyId, token } = await createKey(gateway, 10n ** 9n);
    const res = await embed(gateway, token, "text-embedding-3-small", { "x-request-id": "trace-42" });
    expect(res.status).toBe(200);
    const { receipt } = (await res.json()) as { receipt: { finalAmountWei: string } };
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line).toMatchObject({
      level: 30,
      msg: "request",
      component: "tollgate",
      reqId: "trace-42",
      method: "POST",
      route: "/v1/embeddings",
      path: "/v1/embeddings",
      status: 200,
      keyId,
      model: "openai:text-embedding-3-small",
      amount: receipt.finalAmountWei,
    });
    expect(typeof line.amount).toBe("string");
    expect(line.latencyMs).toEqual(expect.any(Number));
    expect(line.upstreamMs).toEqual(expect.any(Number));
    expect(line.upstreamMs as number).toBeLessThanOrEqual(line.latencyMs as number);
    expect(line).not.toHaveProperty("err");

    await get(gateway, "/v1/models/text-embedding-3-small");
    await get(gateway, "/v1/models?limit=1");
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatchObject({ route: "/v1/models/{model}", path: "/v1/models/text-embedding-3-small", status: 200 });
    expect(lines[1]).not.toHaveProperty("keyId");
    expect(lines[1]).not.toHaveProperty("amount");
    expect(lines[2]!.reqId).toMatch(/^req_[0-9a-f]+$/);
  });

  it("logs a refusal at info with its code and the model asked for, and nothing charged", async () => {
    const { gateway, lines } = logged();
    const { keyId, token } = await createKey(gateway, 1n);
    expect((await embed(gateway, token)).status).toBe(402);
    expect(lines).toEqual([expect.objectContaining({ level: 30, status: 402, code: "budget_exhausted", keyId, model: "openai:text-embedding-3-small" })]);
    expect(lines[0]).not.toHaveProperty("amount");
    expect(lines[0]).not.toHaveProperty("upstreamMs");
  });

  it("logs an upstream 500 at error level with the stack and the upstream's status and message; nothing is charged", async () => {
    const { gateway, lines } = logged("info", {
      media: { providers: { openai: { type: "openai-compatible", baseUrl: `${failing.url}/v1`, apiKey: "sk-test" } } },
    });
    const { keyId, token } = await createKey(gateway, 10n ** 9n);
    const res = await embed(gateway, token);
    expect(res.status).toBe(502);
    expect(failing.requests.length).toBeGreaterThan(0);
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line).toMatchObject({ level: 50, status: 502, code: "upstream_error", route: "/v1/embeddings", keyId, model: "openai:text-embedding-3-small" });
    expect(line.upstreamMs).toEqual(expect.any(Number));
    expect(line).not.toHaveProperty("amount");
    const err = line.err as { type: string; message: string; stack: string; details: Record<string, unknown> };
    expect(err.type).toBe("GatewayError");
    expect(err.details).toEqual({ upstreamStatus: 500, upstreamMessage: "the model server crashed" });
    expect(err.message).toMatch(/HTTP 500/);
    expect(err.stack).toMatch(/^GatewayError: .*HTTP 500[\s\S]*\n\s+at /);
    expect((await gateway.services.store.getKeyById(keyId))!.budgetUsed).toBe(0n);
  });

  it("logs an unexpected error (a host hook's bug) at error level with its stack, which never reaches the response", async () => {
    const { gateway, lines } = logged("info", { authenticateWallet: brokenHook("socket exploded in a way nobody planned for") });
    const res = await listKeys(gateway);
    const body = await res.text();
    expect(res.status).toBe(500);
    expect(body).not.toContain("exploded");
    const line = lines[0]!;
    expect(line).toMatchObject({ level: 50, status: 500, route: "/api/keys" });
    expect(line).not.toHaveProperty("code");
    expect(line.err).toMatchObject({
      type: "TypeError",
      message: "socket exploded in a way nobody planned for",
      stack: expect.stringContaining("TypeError: socket exploded"),
    });
  });

  it("follows the logger's level: at warn, 2xx and 4xx lines are not written but 5xx are", async () => {
    const { gateway, lines } = logged("warn", { media: { providers: { openai: { type: "openai-compatible", baseUrl: `${failing.url}/v1` } } } });
    const { token } = await createKey(gateway, 10n ** 9n);
    await get(gateway, "/v1/models?limit=1");
    await get(gateway, "/nope");
    expect(lines).toEqual([]);
    await embed(gateway, token);
    expect(lines.map((l) => [l.level, l.status])).toEqual([[50, 502]]);
  });

  it("writes probe answers (health, readiness, metrics, index) at debug level; an unmatched path at info", async () => {
    const info = logged("info");
    for (const path of ["/", "/healthz", "/readyz", "/metrics"]) expect((await get(info.gateway, path)).status).toBe(200);
    expect(info.lines).toEqual([]);
    expect((await get(info.gateway, "/healthz/x")).status).toBe(404);
    expect(info.lines).toEqual([expect.objectContaining({ level: 30, route: "unmatched", path: "/healthz/x", status: 404, code: "not_found" })]);
    const debug = logged("debug");
    await get(debug.gateway, "/healthz");
    expect(debug.lines).toEqual([expect.objectContaining({ level: 20, route: "/healthz", status: 200 })]);
  });

  it("logs a streamed chat completion when its stream ends, with what it was charged", async () => {
    const { gateway, lines } = logged();
    const { keyId, token } = await createKey(gateway, 10n ** 9n);
    const res = await gateway.fetch(
      new Request("http://gateway.test/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: "hello there" }] }),
      }),
    );
    expect(res.status).toBe(200);
    expect(lines).toEqual([]);
    const text = await res.text();
    expect(text).toContain("data: [DONE]");
    const receipt = JSON.parse(
      text
        .split("\n\n")
        .find((f) => f.includes('"receipt"'))!
        .slice("data: ".length),
    ) as { receipt: { finalAmountWei: string } };
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      route: "/v1/chat/completions",
      status: 200,
      keyId,
      model: "openai:gpt-4o-mini",
      amount: receipt.receipt.finalAmountWei,
      upstreamMs: expect.any(Number),
    });
  });

  it("without a logger writes no request lines, and still reports an unexpected error on the console", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const gateway = createGateway({ sweepIntervalMs: 0, authenticateWallet: brokenHook("no logger, still reported") });
    gateways.push(gateway);
    expect((await get(gateway, "/v1/models?limit=1")).status).toBe(200);
    expect((await get(gateway, "/nope")).status).toBe(404);
    expect(errors).not.toHaveBeenCalled();
    const res = await listKeys(gateway);
    expect(res.status).toBe(500);
    expect(errors).toHaveBeenCalledTimes(1);
    const [message, fields] = errors.mock.calls[0]! as [string, { err: Error; reqId: string }];
    expect(message).toBe("[tollgate] unexpected error");
    expect([fields.err.message, fields.reqId]).toEqual(["no logger, still reported", res.headers.get("x-request-id")]);
  });
});
