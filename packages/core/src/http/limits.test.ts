import { describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createGateway } from "../gateway.js";
import { createMemoryStore } from "../store/memory.js";
import { createBodyBudget } from "./body-budget.js";
import { clientIp } from "./client-ip.js";
import { limitUnpaidTokenizing } from "./limits.js";
import type { GatewayContext } from "../context.js";
import { createRateLimiter, rateLimited } from "./rate-limit.js";
import type { GatewayRequest } from "./types.js";

const SECRET = "limits-test-internal-secret";
const OWNER = "0x00000000000000000000000000000000000000a1";

describe("rate limiter (fixed windows on the gateway clock)", () => {
  it("lets exactly N requests through per window, then refuses with the time left; a new window starts fresh", () => {
    const clock = createManualClock();
    const limiter = createRateLimiter({ clock, maxSubjects: 100 });
    const seen = Array.from({ length: 5 }, () => limiter.hit("k", 5));
    expect(seen.map((d) => [d.allowed, d.remaining])).toEqual([[true, 4], [true, 3], [true, 2], [true, 1], [true, 0]]);
    clock.advance(59_000);
    const refused = limiter.hit("k", 5);
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    const error = rateLimited(refused, clock.now(), "key k");
    expect(error.code).toBe("rate_limited");
    expect(error.headers).toMatchObject({ "retry-after": "1", "x-ratelimit-limit": "5", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1" });
    clock.advance(1_000);
    expect(limiter.hit("k", 5)).toMatchObject({ allowed: true, remaining: 4 });
    expect(limiter.hit("other", 5)).toMatchObject({ allowed: true, remaining: 4 });
  });

  it("weighs a cost: only what fits is counted; a refund gives units back, never below 0", () => {
    const limiter = createRateLimiter({ clock: createManualClock(), maxSubjects: 100 });
    expect(limiter.hit("c", 10, undefined, 6)).toMatchObject({ allowed: true, remaining: 4 });
    expect(limiter.hit("c", 10, undefined, 6)).toMatchObject({ allowed: false, remaining: 4 });
    expect(limiter.hit("c", 10, undefined, 5, "refund")).toMatchObject({ allowed: true, remaining: 9 });
    expect(limiter.hit("c", 10, undefined, 5, "refund")).toMatchObject({ allowed: true, remaining: 10 });
    expect(limiter.hit("c", 10, undefined, 10)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it("keeps at most maxSubjects windows: lapsed ones go first, then the oldest", () => {
    const clock = createManualClock();
    const limiter = createRateLimiter({ clock, maxSubjects: 100 });
    for (let i = 0; i < 100; i++) limiter.hit(`ip${i}`, 1);
    expect(limiter.size).toBe(100);
    limiter.hit("ip-new", 1);
    expect(limiter.size).toBe(100);
    // ip0 was the oldest and was forgotten: it gets a fresh window; ip99 is still counted.
    expect(limiter.hit("ip0", 1).allowed).toBe(true);
    expect(limiter.hit("ip99", 1).allowed).toBe(false);
    clock.advance(60_000);
    limiter.hit("later", 1);
    expect(limiter.size).toBe(1);
  });

  it("a flood of new IPs forgets only IP windows: a key's or a wallet's used-up window stays counted", () => {
    const limiter = createRateLimiter({ clock: createManualClock(), maxSubjects: 100 });
    expect(limiter.hit("key:key_1", 1).allowed).toBe(true);
    expect(limiter.hit("wallet:keys:0xabc", 1).allowed).toBe(true);
    for (let i = 0; i < 1_000; i++) limiter.hit(`ip:auth:2001:db8:${i.toString(16)}::/64`, 60);
    expect(limiter.size).toBe(102);
    expect(limiter.hit("key:key_1", 1).allowed).toBe(false);
    expect(limiter.hit("wallet:keys:0xabc", 1).allowed).toBe(false);
  });

  it("unpaid chat is counted per wallet apart from per IP: a flood of new IPs does not start a wallet's window over", () => {
    const clock = createManualClock();
    const ctx = { clock, rateLimits: { unpaidChatBytes: 1_048_576, trustedProxies: 0, limiter: createRateLimiter({ clock, maxSubjects: 100 }) } } as unknown as GatewayContext;
    const from = (ip: string) => ({ method: "POST", path: "/v1/chat/completions", headers: {}, remoteAddress: ip }) as unknown as GatewayRequest;
    limitUnpaidTokenizing(from("198.51.100.1"), ctx, 1_048_576, "fit", "0xowner");
    expect(() => limitUnpaidTokenizing(from("198.51.100.1"), ctx, 1, "fit", "0xowner")).toThrow(/wallet 0xowner/);
    for (let i = 0; i < 200; i++) limitUnpaidTokenizing(from(`203.0.113.${i % 250}`), ctx, 1, "fit");
    for (let i = 0; i < 200; i++) limitUnpaidTokenizing(from(`2001:db8:${i.toString(16)}::1`), ctx, 1, "fit");
    expect(() => limitUnpaidTokenizing(from("198.51.100.1"), ctx, 1, "fit", "0xowner")).toThrow(/wallet 0xowner/);
  });
});

describe("client IP", () => {
  const req = (remoteAddress: string | undefined, xff?: string): Pick<GatewayRequest, "headers" | "remoteAddress"> => ({
    headers: xff === undefined ? {} : { "x-forwarded-for": xff },
    ...(remoteAddress === undefined ? {} : { remoteAddress }),
  });
  it("uses the socket peer unless proxies are trusted, then the entry that many from the right", () => {
    expect(clientIp(req("::ffff:10.0.0.5", "1.1.1.1"), 0)).toBe("10.0.0.5");
    expect(clientIp(req("10.0.0.1", "6.6.6.6, 203.0.113.9"), 1)).toBe("203.0.113.9");
    expect(clientIp(req("10.0.0.1", "6.6.6.6, 203.0.113.9, 10.0.0.2"), 2)).toBe("203.0.113.9");
    expect(clientIp(req("10.0.0.1", "203.0.113.9"), 2)).toBe("10.0.0.1");
    expect(clientIp(req(undefined), 0)).toBeUndefined();
  });
  it("counts an IPv6 client by its /64", () => {
    expect(clientIp(req("2001:db8:1:2:aaaa::1"), 0)).toBe("2001:db8:1:2::/64");
    expect(clientIp(req("2001:db8:1:2:bbbb:cccc:dddd:eeee"), 0)).toBe("2001:db8:1:2::/64");
    expect(clientIp(req("::1"), 0)).toBe("0:0:0:0::/64");
  });
  it("drops a port a proxy wrote on its entry, so a client's connections share one address", () => {
    expect(clientIp(req("10.0.0.1", "203.0.113.7:50001"), 1)).toBe("203.0.113.7");
    expect(clientIp(req("10.0.0.1", "203.0.113.7:50002"), 1)).toBe("203.0.113.7");
    expect(clientIp(req("10.0.0.1", "[2001:db8:1:2::9]:443"), 1)).toBe("2001:db8:1:2::/64");
    expect(clientIp(req("10.0.0.1", "[2001:db8:1:2::9]"), 1)).toBe("2001:db8:1:2::/64");
    expect(clientIp(req("fe80::1%eth0"), 0)).toBe("fe80:0:0:0::/64");
  });
  it("an entry that is not an IP address falls back to the socket peer; a peer that is not one is no address", () => {
    expect(clientIp(req("10.0.0.1", "unknown"), 1)).toBe("10.0.0.1");
    expect(clientIp(req("10.0.0.1", "203.0.113.7:50001:9"), 1)).toBe("10.0.0.1");
    expect(clientIp(req("10.0.0.1", "999.1.1.1"), 1)).toBe("10.0.0.1");
    expect(clientIp(req("not an address"), 0)).toBeUndefined();
    expect(clientIp(req(""), 0)).toBeUndefined();
  });
});

describe("in-flight body budget", () => {
  it("refuses with 503 overloaded and Retry-After once the cap is taken, and frees on release", () => {
    const budget = createBodyBudget(100);
    const a = budget.acquire(60);
    expect(() => budget.acquire(50)).toThrowError(expect.objectContaining({ code: "overloaded", status: 503, headers: { "retry-after": "1", connection: "close" } }));
    const b = budget.acquire(40);
    expect(budget.inUse).toBe(100);
    a();
    a();
    expect(budget.inUse).toBe(40);
    b();
    // One body larger than the whole cap is let through when nothing else is in flight.
    const big = budget.acquire(500);
    expect(() => budget.acquire(1)).toThrowError(expect.objectContaining({ code: "overloaded" }));
    big();
  });

  it("a client holds at most its share (429, Retry-After), its only body may be larger, and unknown clients count against the cap alone", () => {
    const budget = createBodyBudget(100, 30);
    const a1 = budget.acquire(20, "a");
    expect(() => budget.acquire(20, "a")).toThrowError(expect.objectContaining({ code: "rate_limited", status: 429, headers: { "retry-after": "1", connection: "close" }, details: { limitBytes: 30 } }));
    const a2 = budget.acquire(10, "a");
    expect(budget.heldBy("a")).toBe(30);
    // Another client is not held back by the first one's share.
    const b = budget.acquire(40, "b");
    expect(budget.heldBy("b")).toBe(40);
    b();
    // Unknown clients are counted against the process cap only.
    const unknown = budget.acquire(70);
    expect(() => budget.acquire(1, "c")).toThrowError(expect.objectContaining({ code: "overloaded" }));
    unknown();
    a1();
    a2();
    a2();
    expect(budget.heldBy("a")).toBe(0);
    expect(budget.inUse).toBe(0);
    // A hold that takes as chunks arrive is refused once its client's other bodies and its own pass the share.
    const first = budget.hold("a");
    first.take(25);
    const second = budget.hold("a");
    second.take(5);
    expect(() => second.take(1)).toThrowError(expect.objectContaining({ code: "rate_limited" }));
    first.release();
    second.take(1);
    second.release();
    expect(budget.heldBy("a")).toBe(0);
    // A request that holds no bytes (an empty body) leaves no entry behind.
    const empty = budget.hold("b");
    empty.take(0);
    empty.release();
    expect(budget.clients).toBe(0);
  });
});

describe("per-key rate limit on the wire (manual clock)", () => {
  it("a key with rateLimit {requestsPerMinute: 3}: exactly 3 charges pass per minute, then 429 with Retry-After; the budget is untouched by refusals", async () => {
    const clock = createManualClock();
    const gateway = createGateway({ store: createMemoryStore(), clock, sweepIntervalMs: 0, internalSecret: SECRET });
    const call = async (path: string, init: { headers?: Record<string, string>; body?: unknown } = {}) => {
      const res = await gateway.fetch(
        new Request(`http://gw.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...init.headers }, body: JSON.stringify(init.body ?? {}) }),
      );
      return { status: res.status, headers: res.headers, body: (await res.json()) as any };
    };
    const created = await call("/api/keys", {
      headers: { "x-session-user-address": OWNER, "x-internal-secret": SECRET },
      body: { budgetLimit: "1000", expiresAt: clock.now() + 86_400_000, networkId: 8453, purpose: "api", rateLimit: { requestsPerMinute: 3 } },
    });
    expect(created.status).toBe(201);
    expect(created.body.rateLimit).toEqual({ requestsPerMinute: 3 });
    const charge = () => call("/api/keys/settle", { headers: { authorization: `Bearer ${created.body.token}` }, body: { amount: "10" } });
    for (let i = 0; i < 3; i++) {
      clock.advance(10_000);
      const r = await charge();
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-remaining")).toBe(String(2 - i));
    }
    const over = await charge();
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe("rate_limited");
    // The window opened with the first request (t=10 s) and ends at t=70 s; it is now t=30 s.
    expect(over.headers.get("retry-after")).toBe("40");
    expect(over.headers.get("x-ratelimit-reset")).toBe("40");
    clock.advance(39_999);
    expect((await charge()).status).toBe(429);
    clock.advance(1);
    const again = await charge();
    expect(again.status).toBe(200);
    expect(again.body.budgetRemaining).toBe("960");
    await gateway.close();
  });

  it("the gateway default applies to keys without their own limit; rateLimits: false turns limits off", async () => {
    for (const [rateLimits, expected] of [[{ keyDefault: 2 }, [200, 200, 429]], [false, [200, 200, 200]]] as const) {
      const clock = createManualClock();
      const gateway = createGateway({ store: createMemoryStore(), clock, sweepIntervalMs: 0, internalSecret: SECRET, rateLimits });
      const post = (path: string, headers: Record<string, string>, body: unknown) =>
        gateway.fetch(new Request(`http://gw.test${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }));
      const key = (await (
        await post("/api/keys", { "x-session-user-address": OWNER, "x-internal-secret": SECRET }, { budgetLimit: "1000", expiresAt: clock.now() + 86_400_000, networkId: 8453, purpose: "api" })
      ).json()) as any;
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await post("/api/keys/settle", { authorization: `Bearer ${key.token}` }, { amount: "1" })).status);
      expect(statuses).toEqual(expected);
      await gateway.close();
    }
  });
});

describe("paid routes and the body", () => {
  const streamRequest = (headers: Record<string, string>, read: (limit: number, onChunk?: (bytes: number) => void) => Promise<Uint8Array>): GatewayRequest => ({
    method: "POST",
    path: "/v1/embeddings",
    query: new URLSearchParams(),
    headers: { "content-type": "application/json", ...headers },
    body: { kind: "stream", read },
  });

  it("a dead or unknown key is refused before a byte of the body is read", async () => {
    const gateway = createGateway({ store: createMemoryStore(), sweepIntervalMs: 0 });
    let reads = 0;
    const read = async () => {
      reads++;
      return new Uint8Array(0);
    };
    const r = await gateway.handle(streamRequest({ authorization: `Bearer svc-${"A".repeat(43)}`, "content-length": String(32 * 1024 * 1024) }, read));
    expect(r.status).toBe(401);
    expect(reads).toBe(0);
    await gateway.close();
  });

  it("without a credential at most unpaidBodyBytes are read, with one the media limit applies", async () => {
    const gateway = createGateway({ store: createMemoryStore(), sweepIntervalMs: 0, limits: { unpaidBodyBytes: 2048 } });
    const limits: number[] = [];
    const read = async (limit: number) => {
      limits.push(limit);
      return new TextEncoder().encode(JSON.stringify({ model: "text-embedding-3-small", input: "hi" }));
    };
    const unpaid = await gateway.handle(streamRequest({}, read));
    expect(unpaid.status).toBe(402);
    // A signature is read up to the media limit (then refused here: x402 is not configured).
    const paying = await gateway.handle(streamRequest({ "payment-signature": "e30=" }, read));
    expect(paying.status).toBe(503);
    expect(limits).toEqual([2048, 32 * 1024 * 1024]);
    await gateway.close();
  });

  it("bodies beyond the in-flight cap wait for nobody: 503 overloaded with Retry-After", async () => {
    const gateway = createGateway({ store: createMemoryStore(), sweepIntervalMs: 0, limits: { inFlightBodyBytes: 64 * 1024 } });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // 40 KiB arrive at once, the rest later: bytes count against the cap as they arrive.
    const slow = async (_limit: number, onChunk?: (bytes: number) => void) => {
      onChunk?.(40 * 1024);
      await held;
      return new TextEncoder().encode("{}");
    };
    const first = gateway.handle({ ...streamRequest({ "content-length": String(80 * 1024) }, slow), path: "/v1/feedback" });
    const second = await gateway.handle({ ...streamRequest({ "content-length": String(80 * 1024) }, slow), path: "/v1/feedback" });
    expect(second.status).toBe(503);
    expect(second.headers["retry-after"]).toBe("1");
    expect((second.body as { kind: "json"; value: any }).value.error.code).toBe("overloaded");
    release();
    expect((await first).status).toBe(400);
    await gateway.close();
  });
});

describe("chat prompts tokenized before payment (rateLimits.unpaidChatBytes)", () => {
  const encoder = new TextEncoder();
  const json = (value: unknown) => ({ kind: "stream" as const, read: async () => encoder.encode(JSON.stringify(value)) });
  const chat = (headers: Record<string, string>, ip: string, content: string): GatewayRequest => ({
    method: "POST",
    path: "/v1/chat/completions",
    query: new URLSearchParams(),
    headers: { "content-type": "application/json", ...headers },
    remoteAddress: ip,
    body: json({ model: "gpt-4o", messages: [{ role: "user", content }], max_tokens: 8 }),
  });
  const PROMPT = "中文".repeat(60_000); // 120,000 characters, 360,000 bytes; 360,006 with the role the count adds
  const setup = () => {
    const clock = createManualClock();
    const gateway = createGateway({ store: createMemoryStore(), clock, sweepIntervalMs: 0, internalSecret: SECRET, rateLimits: { unpaidChatBytes: 1_048_576 } });
    const keyOf = async (owner: string, budgetLimit: string) => {
      const created = await gateway.handle({
        method: "POST",
        path: "/api/keys",
        query: new URLSearchParams(),
        headers: { "content-type": "application/json", "x-session-user-address": owner, "x-internal-secret": SECRET },
        body: json({ budgetLimit, expiresAt: clock.now() + 86_400_000, networkId: 8453, purpose: "api" }),
      });
      return (created.body as { kind: "json"; value: { token: string } }).value.token;
    };
    const send = async (headers: Record<string, string>, ip = "203.0.113.7", content = PROMPT) => gateway.handle(chat(headers, ip, content));
    const status = async (headers: Record<string, string>, ip?: string, content?: string) => (await send(headers, ip, content)).status;
    return { clock, gateway, keyOf, send, status };
  };

  it("counts the bytes an unpaid or x402 request tokenizes against its client IP, refusing past the minute with 429; a key's billed calls give theirs back", async () => {
    const { clock, gateway, keyOf, send, status } = setup();
    expect(await status({})).toBe(402);
    expect(await status({})).toBe(402);
    // 720,012 of 1,048,576 used: the next prompt does not fit, and nothing of it is tokenized.
    const refused = await send({});
    expect(refused.status).toBe(429);
    const error = (refused.body as { kind: "json"; value: any }).value.error;
    expect(error.code).toBe("rate_limited");
    expect(error.message).toContain("1048576 prompt bytes per minute");
    expect(refused.headers["retry-after"]).toBe("60");
    // A short prompt still fits; an x402 request is priced before its payment is verified, so it counts too.
    expect(await status({}, undefined, "hello")).toBe(402);
    expect(await status({ "payment-signature": "e30=" })).toBe(429);
    expect(await status({}, "198.51.100.2")).toBe(402);
    // A key's calls count against its owner wallet, not the IP, and each billed call gives its bytes back.
    const funded = await keyOf(OWNER, "100000000");
    for (let i = 0; i < 4; i++) expect(await status({ authorization: `Bearer ${funded}` })).toBe(200);
    clock.advance(60_000);
    expect(await status({})).toBe(402);
    await gateway.close();
  });

  it("a key that cannot afford its calls: its owner wallet's minute is used up by what was tokenized, in parallel too and across the wallet's keys", async () => {
    const { gateway, keyOf, status } = setup();
    const broke = await keyOf(OWNER, "1");
    const results = await Promise.all(Array.from({ length: 8 }, () => status({ authorization: `Bearer ${broke}` })));
    // Two prompts fit the minute and were tokenized (then refused for the budget); the others were refused before.
    expect(results.filter((s) => s === 402)).toHaveLength(2);
    expect(results.filter((s) => s === 429)).toHaveLength(6);
    const another = await keyOf(OWNER, "1");
    expect(await status({ authorization: `Bearer ${another}` })).toBe(429);
    // Another wallet's key, and the IP's own minute, are untouched.
    const other = await keyOf("0x00000000000000000000000000000000000000b2", "100000000");
    expect(await status({ authorization: `Bearer ${other}` })).toBe(200);
    expect(await status({})).toBe(402);
    await gateway.close();
  });

  it("JSON nested deeper than the count walks is refused with 400, not a 500 from the stack", async () => {
    const { gateway } = setup();
    const nested = (depth: number) => `${"[".repeat(depth)}"x"${"]".repeat(depth)}`;
    const raw = (body: string): GatewayRequest => ({
      method: "POST",
      path: "/v1/chat/completions",
      query: new URLSearchParams(),
      headers: { "content-type": "application/json" },
      remoteAddress: "203.0.113.9",
      body: { kind: "stream", read: async () => encoder.encode(body) },
    });
    // 100,000 levels: refused before parsing (the body's shape); 100: parsed, then refused by the walk of the count.
    for (const [depth, refusal] of [
      [100_000, "more than 128 levels deep"],
      [100, "more than 64 levels deep"],
    ] as const)
      for (const body of [
        `{"model":"gpt-4o","messages":[{"role":"user","content":"hi","name":${nested(depth)}}]}`,
        `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"response_format":${nested(depth)}}`,
      ]) {
        const res = await gateway.handle(raw(body));
        expect(res.status).toBe(400);
        expect((res.body as { kind: "json"; value: any }).value.error.message).toContain(refusal);
      }
    await gateway.close();
  });

  it("rateLimits: {unpaidChatBytes: false} and rateLimits: false leave it unlimited; below one request's worth is refused at start", async () => {
    for (const rateLimits of [{ unpaidChatBytes: false as const }, false as const]) {
      const gateway = createGateway({ store: createMemoryStore(), sweepIntervalMs: 0, rateLimits });
      for (let i = 0; i < 3; i++) expect((await gateway.handle(chat({}, "203.0.113.7", PROMPT))).status).toBe(402);
      await gateway.close();
    }
    expect(() => createGateway({ store: createMemoryStore(), sweepIntervalMs: 0, rateLimits: { unpaidChatBytes: 1_048_575 } })).toThrow(/unpaidChatBytes/);
  });
});
