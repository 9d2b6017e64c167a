import http from "node:http";
import { describe, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import type { Gateway } from "@tollgate/core";
import { createServer, serve } from "./server.js";

describe("serve", () => {
  it("serves the real gateway with sane keep-alive timeouts, and close() awaits gateway.close() once", async () => {
    const real = createGateway();
    let closes = 0;
    const gateway: Gateway = { ...real, close: async () => void closes++ };
    const running = await serve(gateway, { port: 0 });
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect([running.server.keepAliveTimeout, running.server.headersTimeout]).toEqual([65_000, 66_000]);
    const res = await fetch(`${running.url}/v1/models?limit=2`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(2);
    const missing = await fetch(`${running.url}/nope`);
    expect([missing.status, ((await missing.json()) as { error: { code: string } }).error.code]).toEqual([404, "not_found"]);
    await Promise.all([running.close(), running.close()]);
    expect(closes).toBe(1);
    expect(running.server.listening).toBe(false);
  });

  it("cuts a never-ending stream after the grace period and stops its iteration", async () => {
    const real = createGateway();
    let stopped = false;
    const gateway: Gateway = {
      ...real,
      handle: async (req) =>
        req.path === "/hang"
          ? {
              status: 200,
              headers: {},
              body: {
                kind: "sse",
                frames: (async function* () {
                  try {
                    for (;;) {
                      yield ": ping\n\n";
                      await new Promise((r) => setTimeout(r, 20));
                    }
                  } finally {
                    stopped = true;
                  }
                })(),
              },
            }
          : real.handle(req),
    };
    const running = await serve(gateway, { port: 0 });
    await new Promise<void>((resolve) => {
      const req = http.get(`${running.url}/hang`, (res) => res.once("data", () => resolve()).on("error", () => undefined));
      req.on("error", () => undefined);
    });
    // The stream never ends by itself: close() returns only because the grace period cut it.
    await running.close({ graceMs: 100 });
    await new Promise((r) => setTimeout(r, 50));
    expect(stopped).toBe(true);
  });

  it("rejects when the port is taken and leaves the gateway open", async () => {
    const first = await serve(createGateway(), { port: 0 });
    const port = Number(new URL(first.url).port);
    await expect(serve(createGateway(), { port })).rejects.toMatchObject({ code: "EADDRINUSE" });
    await first.close();
  });

  it("createServer returns an unstarted server", () => {
    const server = createServer(createGateway(), { keepAliveTimeoutMs: 10_000 });
    expect(server.listening).toBe(false);
    expect([server.keepAliveTimeout, server.headersTimeout]).toEqual([10_000, 66_000]);
  });
});
