/**
 * The body pace through the Web adapter (`gateway.fetch`, as Next.js and edge runtimes use it): a
 * body refused with 408 is no longer read when more of it arrives (its reader is cancelled), so its
 * bytes stay out of the in-flight cap; and a refused read's later chunks throw.
 */
import { describe, expect, it } from "vitest";
import { createGateway } from "../gateway.js";
import { createMemoryStore } from "../store/memory.js";
import { createBodyPacer } from "./body-pace.js";

const MiB = 1024 * 1024;

describe("body pace", () => {
  it("gateway.fetch: a body refused with 408 is cancelled when more of it arrives, and does not count against the cap", async () => {
    const gateway = createGateway({
      store: createMemoryStore(),
      sweepIntervalMs: 0,
      limits: { inFlightBodyBytes: MiB, mediaBodyBytes: 32 * MiB, bodyGraceMs: 200, minBodyBytesPerSecond: 64 * 1024 },
    });
    let flowing = false;
    let pulledAfter = 0;
    let cancelled = false;
    let first = true;
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (first) {
            first = false;
            controller.enqueue(new TextEncoder().encode('{"model":"x","prompt":"'));
            return;
          }
          while (!flowing) await new Promise((r) => setTimeout(r, 10));
          if (pulledAfter >= 20 * MiB) return;
          pulledAfter += chunk.byteLength;
          controller.enqueue(chunk);
        },
        cancel() {
          cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    const res = await gateway.fetch(
      new Request("http://gw.test/v1/videos/generations", {
        method: "POST",
        headers: { "content-type": "application/json", "payment-signature": "junk" },
        body,
        duplex: "half",
      } as RequestInit),
    );
    expect(res.status).toBe(408);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("request_timeout");
    flowing = true;
    for (let i = 0; i < 100 && !cancelled; i++) await new Promise((r) => setTimeout(r, 10));
    expect(cancelled).toBe(true);
    // At most the chunk that met the refusal was read.
    expect(pulledAfter).toBeLessThanOrEqual(2 * chunk.byteLength);
    // A 900 KiB body of another client fits in the 1 MiB cap: it is read and validated (400, not 503).
    const other = await gateway.fetch(
      new Request("http://gw.test/v1/feedback", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ targetType: "model", targetId: "gpt-4o-mini", rating: 5, comment: "x".repeat(900 * 1024) }),
      }),
    );
    expect(other.status).toBe(400);
    flowing = false;
    await gateway.close();
  }, 30_000);

  it("a read refused for its pace throws on its next chunk; a closed pacer refuses nothing", async () => {
    const pacer = createBodyPacer({ minBytesPerSecond: 1_000_000, graceMs: 100, maxMs: 60_000 });
    const read = pacer.watch();
    const never = new Promise<never>(() => {});
    const guarded = read.guard(never).catch((e: unknown) => e);
    expect(await guarded).toMatchObject({ code: "request_timeout", status: 408, headers: { connection: "close" } });
    expect(() => read.received(10)).toThrowError(expect.objectContaining({ code: "request_timeout" }));
    pacer.close();
    const after = pacer.watch();
    after.received(1);
    expect(await after.guard(Promise.resolve("read"))).toBe("read");
  });
});
