/**
 * Slow bodies against the in-flight body cap (slowloris), on the real server over raw sockets: a
 * body announced and never sent holds nothing; a client holds at most its share of the cap; a body
 * that falls behind the pace, or outlasts the body timeout, is answered 408 and its connection
 * closed, and its bytes go back to the cap; a slow body that keeps the pace is served. Clients are
 * told apart by X-Forwarded-For (one trusted proxy).
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createGateway, createMemoryStore, type GatewayOptions } from "@tollgate/core";
import { serve, type RunningServer } from "./server.js";

const MiB = 1024 * 1024;
const FEEDBACK = '{"targetType":"model","targetId":"gpt-4o-mini","rating":5}';

/** One HTTP/1.1 exchange on a raw socket: what came back so far, and once the server closed it, the status line's code (0 when none came). */
interface Exchange {
  readonly socket: Socket;
  received(): string;
  readonly answer: Promise<{ status: number; closed: boolean; text: string }>;
}

function open(url: string, client: string, declared: number, first: string): Exchange {
  const { port } = new URL(url);
  const socket = connect(Number(port), "127.0.0.1");
  socket.on("error", () => {});
  socket.write(
    `POST /v1/feedback HTTP/1.1\r\nhost: gateway\r\nx-forwarded-for: ${client}\r\ncontent-type: application/json\r\ncontent-length: ${declared}\r\n\r\n${first}`,
  );
  let text = "";
  socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
  const answer = new Promise<{ status: number; closed: boolean; text: string }>((resolve) => {
    socket.on("close", () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), closed: true, text }));
  });
  return { socket, answer, received: () => text };
}

/** The status of a small, complete feedback POST from `client`. */
async function post(url: string, client: string): Promise<number> {
  const res = await fetch(`${url}/v1/feedback`, { method: "POST", headers: { "content-type": "application/json", "x-forwarded-for": client }, body: FEEDBACK });
  await res.arrayBuffer();
  return res.status;
}

/** Waits until `check` holds (polling every 20 ms), at most `ms`. */
async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

describe("slow request bodies (real server, raw sockets)", () => {
  let running: RunningServer | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await running?.close({ graceMs: 100 });
    running = undefined;
  });
  const start = async (limits: GatewayOptions["limits"]) => {
    const gateway = createGateway({ store: createMemoryStore(), sweepIntervalMs: 0, trustedProxies: 1, limits });
    running = await serve(gateway, { port: 0 });
    return running.url;
  };
  /** A feedback body announced at `declared` bytes of which `sent` are sent (then nothing). */
  const partial = (url: string, client: string, declared: number, sent: number, headers = "") => {
    const e = open(url, client, declared, `${headers}{${"a".repeat(Math.max(0, sent - 1))}`);
    sockets.push(e.socket);
    return e;
  };

  it("bodies announced (1 MiB each, with a PAYMENT-SIGNATURE on a media route too) and never sent hold nothing: others are served", async () => {
    const url = await start({ inFlightBodyBytes: 4 * MiB, bodyGraceMs: 60_000 });
    for (let i = 0; i < 70; i++) partial(url, `203.0.113.${i % 4}`, MiB, 0);
    const { port } = new URL(url);
    for (let i = 0; i < 4; i++) {
      const s = connect(Number(port), "127.0.0.1");
      s.on("error", () => {});
      s.write(
        `POST /v1/videos/generations HTTP/1.1\r\nhost: gateway\r\nx-forwarded-for: 203.0.113.9\r\ncontent-type: application/json\r\npayment-signature: junk\r\ncontent-length: ${2 * MiB}\r\n\r\n`,
      );
      sockets.push(s);
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(await post(url, "198.51.100.1")).toBe(201);
  });

  it("one client holds at most its share of the bytes received; another client's body is still read", async () => {
    const url = await start({ inFlightBodyBytes: 8 * MiB, inFlightBodyBytesPerClient: 2 * MiB, bodyGraceMs: 60_000 });
    // 900 KiB sent of each: two fit in the 2 MiB share, the third passes it and is refused, and so on.
    const attacker: Exchange[] = [];
    for (let i = 0; i < 4; i++) {
      attacker.push(partial(url, "203.0.113.7", MiB, 900 * 1024));
      await until(() => false, 150);
    }
    const refused = await Promise.all(attacker.slice(2).map((e) => e.answer));
    expect(refused.map((r) => r.status)).toEqual([429, 429]);
    expect(refused[0]!.text).toContain('"code":"rate_limited"');
    expect(refused[0]!.text.toLowerCase()).toContain("retry-after: 1");
    expect(await post(url, "198.51.100.1")).toBe(201);
  });

  it("a body that falls behind the pace is answered 408 and closed", async () => {
    const url = await start({ bodyGraceMs: 300, minBodyBytesPerSecond: 64 * 1024 });
    const a = await partial(url, "203.0.113.1", MiB, 1).answer;
    expect(a.status).toBe(408);
    expect(a.closed).toBe(true);
    expect(a.text).toContain('"code":"request_timeout"');
    expect(a.text.toLowerCase()).toContain("connection: close");
  });

  it("bodies that hold the cap are cut at the body timeout, and their bytes go back to the cap", async () => {
    const url = await start({ inFlightBodyBytes: 4 * MiB, bodyGraceMs: 300, minBodyBytesPerSecond: 1024, bodyTimeoutMs: 1_500 });
    // Four clients fill the cap with bodies they never finish (far above the pace, so only the timeout ends them).
    const held = ["203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4"].map((ip) => partial(url, ip, MiB, MiB - 8));
    await until(() => false, 300);
    expect(await post(url, "198.51.100.1")).toBe(503);
    for (const a of await Promise.all(held.map((e) => e.answer))) {
      expect(a.status).toBe(408);
      expect(a.text).toContain('"code":"request_timeout"');
    }
    expect(await post(url, "198.51.100.1")).toBe(201);
  });

  it("a slow body that keeps the pace is read and served", async () => {
    const url = await start({ bodyGraceMs: 300, minBodyBytesPerSecond: 32 * 1024 });
    const padding = " ".repeat(256 * 1024);
    const body = `${FEEDBACK.slice(0, -1)}${padding}}`;
    const e = open(url, "198.51.100.9", Buffer.byteLength(body), "");
    sockets.push(e.socket);
    // 256 KiB over ~2 s: 32 KiB every 150 ms (~213 KiB/s), after a pause within the grace period.
    await new Promise((r) => setTimeout(r, 250));
    for (let at = 0; at < body.length; at += 32 * 1024) {
      e.socket.write(body.slice(at, at + 32 * 1024));
      await new Promise((r) => setTimeout(r, 150));
    }
    await until(() => e.received().includes("\r\n\r\n"), 5_000);
    expect(e.received()).toMatch(/^HTTP\/1\.1 201 /);
  });
});
