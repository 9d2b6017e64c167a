/**
 * The request loop against real local servers: retries and their waits (`Retry-After` seconds,
 * `retry-after-ms`, backoff), `x-should-retry`, what a non-idempotent call repeats, the error class
 * of statuses a gateway never sends, connection failures, timeouts, aborts — and a prepare that
 * loses its answer behind a proxy, retried with the same idempotency key so the gateway reserves once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BadRequestError,
  ConnectionError,
  createTollgateClient,
  InternalServerError,
  RateLimitError,
  RequestTimeoutError,
  ServiceUnavailableError,
  TimeoutError,
  TollgateError,
  UnprocessableEntityError,
  UserAbortError,
  type ClientOptions,
} from "../index.js";
import { CHAIN, closedPortUrl, DAY, recordingFetch, startGateway, startStub, thrown, type Stub, type StubReply, type TestGateway } from "../testing/harness.js";

const stubs: Stub[] = [];
/** A stub answering the scripted replies in order (the last one repeats), recording arrival times. */
async function scripted(...replies: StubReply[]): Promise<Stub & { times: number[] }> {
  const times: number[] = [];
  const stub = await startStub((_req, i) => {
    times.push(Date.now());
    return replies[Math.min(i, replies.length - 1)]!;
  });
  stubs.push(stub);
  return Object.assign(stub, { times });
}
afterAll(() => Promise.all(stubs.map((s) => s.close())));

const client = (url: string, options: Partial<ClientOptions> = {}) => createTollgateClient({ baseUrl: url, ...options });
const OK = { status: 200, json: { object: "list", data: [], total: 0, next_cursor: null } } satisfies StubReply;
const envelope = (code: string) => ({ error: { code, message: `it is ${code}`, type: "api_error", requestId: "req_stub" } });
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

describe("retries", () => {
  it("429 with Retry-After: 1 is retried after that second; meta counts the retry", async () => {
    const stub = await scripted({ status: 429, headers: { "retry-after": "1" }, json: envelope("rate_limited") }, OK);
    const { data, meta } = await client(stub.url).models.list().withResponse();
    expect(data.total).toBe(0);
    expect(meta.retries).toBe(1);
    expect(gaps(stub.times)[0]).toBeGreaterThanOrEqual(950);
  });

  it("503 with retry-after-ms is retried as asked, up to maxRetries; then the last error is thrown", async () => {
    const busy: StubReply = { status: 503, headers: { "retry-after-ms": "150" }, json: envelope("busy") };
    const stub = await scripted(busy, busy, OK);
    expect((await client(stub.url, { maxRetries: 2 }).models.list().withResponse()).meta.retries).toBe(2);
    for (const gap of gaps(stub.times)) expect(gap).toBeGreaterThanOrEqual(140);
    const always = await scripted(busy);
    const e = await thrown(() => client(always.url, { maxRetries: 1 }).models.list());
    expect(e).toBeInstanceOf(ServiceUnavailableError);
    expect([e.code, e.requestId]).toEqual(["busy", "req_stub"]);
    expect(always.requests).toHaveLength(2);
  });

  it("a 500 without Retry-After waits the backoff (500 ms less up to 25% jitter); a Retry-After over 60 s is not waited for", async () => {
    const stub = await scripted({ status: 500, json: envelope("internal_error") });
    const e = await thrown(() => client(stub.url, { maxRetries: 1 }).agents.list());
    expect(e).toBeInstanceOf(InternalServerError);
    expect(stub.requests).toHaveLength(2);
    expect(gaps(stub.times)[0]).toBeGreaterThanOrEqual(370);
    const later = await scripted({ status: 429, headers: { "retry-after": "120" }, json: envelope("rate_limited") });
    const limited = await thrown(() => client(later.url).agents.list());
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited.headers.get("retry-after")).toBe("120");
    expect(later.requests).toHaveLength(1);
  });

  it("x-should-retry overrides the status rules both ways", async () => {
    const yes = await scripted({ status: 400, headers: { "x-should-retry": "true", "retry-after-ms": "0" }, json: envelope("invalid_request") }, OK);
    expect((await client(yes.url).models.list().withResponse()).meta.retries).toBe(1);
    const no = await scripted({ status: 503, headers: { "x-should-retry": "false" }, json: envelope("busy") });
    expect(await thrown(() => client(no.url).models.list())).toBeInstanceOf(ServiceUnavailableError);
    expect(no.requests).toHaveLength(1);
  });

  it("a call that charges is repeated only after 408, 429 or 503 — never after 500, 502, 504 or a lost connection", async () => {
    const image = { model: "dall-e-2", prompt: "x" };
    for (const status of [408, 429, 503]) {
      const stub = await scripted({ status, headers: { "retry-after-ms": "0" }, json: envelope("not_processed") }, { status: 200, json: { created: 1, data: [] } });
      expect((await client(stub.url, { apiKey: "svc-x" }).images.generate(image).withResponse()).meta.retries, String(status)).toBe(1);
    }
    for (const status of [500, 502, 504]) {
      const stub = await scripted({ status, headers: { "retry-after-ms": "0" }, json: envelope("maybe_done") });
      expect((await thrown(() => client(stub.url).images.generate(image))).status).toBe(status);
      expect(stub.requests, String(status)).toHaveLength(1);
    }
    const dropped = await scripted("destroy");
    expect(await thrown(() => client(dropped.url).feedback.create({ targetType: "model", targetId: "m", rating: 5 }))).toBeInstanceOf(ConnectionError);
    expect(dropped.requests).toHaveLength(1);
  });
});

describe("errors", () => {
  it("every other status gets its class (or TollgateError), with the envelope's fields or the body's text", async () => {
    const cases: [number, Function][] = [
      [408, RequestTimeoutError],
      [422, UnprocessableEntityError],
      [429, RateLimitError],
      [500, InternalServerError],
      [418, TollgateError],
    ];
    for (const [status, Class] of cases) {
      const stub = await scripted({ status, json: envelope(`code_${status}`) });
      const e = await thrown(() => client(stub.url, { maxRetries: 0 }).models.list());
      expect(e.constructor, String(status)).toBe(Class);
      expect([e.status, e.code, e.type, e.requestId, e.message]).toEqual([status, `code_${status}`, "api_error", "req_stub", `${status} code_${status}: it is code_${status}`]);
    }
    const html = await scripted({ status: 502, headers: { "x-request-id": "req_proxy" }, text: "<html>Bad Gateway</html>" });
    const e = await thrown(() => client(html.url, { maxRetries: 0 }).models.list());
    expect([e.code, e.requestId, e.body, e.message]).toEqual([undefined, "req_proxy", "<html>Bad Gateway</html>", "502: <html>Bad Gateway</html>"]);
    const garbled = await scripted({ status: 200, headers: { "content-type": "application/json" }, text: "{not json" });
    const bad = await thrown(() => client(garbled.url).models.list());
    expect(bad).toBeInstanceOf(TollgateError);
    expect([bad.status, bad.code]).toEqual([200, "invalid_response"]);
    expect(garbled.requests).toHaveLength(1);
  });

  it("a 200 page that is not JSON (a wrong base URL, a captive portal) is invalid_response, never a result", async () => {
    const page = await scripted({ status: 200, headers: { "content-type": "text/html" }, text: "<html>Welcome</html>" });
    const listed = await thrown(() => client(page.url).models.list());
    expect([listed.status, listed.code, listed.body]).toEqual([200, "invalid_response", "<html>Welcome</html>"]);
    expect(listed.message).toMatch(/not JSON \(Content-Type: text\/html\)/);
    const untyped = await scripted({ status: 200, text: '{"data":[]}' });
    expect((await thrown(() => client(untyped.url).models.list())).code).toBe("invalid_response");
  });
});

describe("connections, timeouts and aborts", () => {
  it("a refused connection is a ConnectionError with its cause, retried when idempotent", async () => {
    const recorder = recordingFetch();
    const url = await closedPortUrl();
    const refused = await thrown(() => createTollgateClient({ baseUrl: url, fetch: recorder.fetch, maxRetries: 1 }).models.list());
    expect(refused).toBeInstanceOf(ConnectionError);
    expect(refused).not.toBeInstanceOf(TimeoutError);
    expect(refused.message).toContain("ECONNREFUSED");
    expect(refused.cause).toBeInstanceOf(Error);
    expect(recorder.calls).toHaveLength(2);
  });

  it("an attempt over timeoutMs (before or during the body) is a TimeoutError, retried when idempotent; a body cut short is a ConnectionError, retried only when idempotent", async () => {
    const stub = await scripted("hang");
    const e = await thrown(() => client(stub.url, { timeoutMs: 60_000, maxRetries: 1 }).models.list({}, { timeoutMs: 100 }));
    expect(e).toBeInstanceOf(TimeoutError);
    expect(e).toBeInstanceOf(ConnectionError);
    expect(e.message).toContain("100 ms");
    expect(stub.requests).toHaveLength(2);
    // The deadline covers the body too: headers in time, the rest never.
    const slow = await scripted({ ...OK, half: "stall" });
    expect(await thrown(() => client(slow.url, { timeoutMs: 150, maxRetries: 0 }).models.list())).toBeInstanceOf(TimeoutError);
    const cut = await scripted({ ...OK, half: "cut" }, OK);
    const { meta } = await client(cut.url).models.list().withResponse();
    expect(meta.retries).toBe(1);
    const cutPost = await scripted({ status: 200, json: { created: 1, data: [] }, half: "cut" });
    const lost = await thrown(() => client(cutPost.url).images.generate({ model: "dall-e-2", prompt: "x" }));
    expect([lost.constructor, cutPost.requests.length]).toEqual([ConnectionError, 1]);
  });

  it("the caller's signal: UserAbortError with its reason, during a request, during a retry wait, or before any request", async () => {
    const hang = await scripted("hang");
    const controller = new AbortController();
    const pending = thrown(() => client(hang.url).models.list({}, { signal: controller.signal }));
    // Aborted once the request is at the server (a fixed delay may fire first on a loaded machine).
    await expect.poll(() => hang.requests.length, { timeout: 10_000 }).toBe(1);
    controller.abort(new Error("navigated away"));
    const during = await pending;
    expect(during).toBeInstanceOf(UserAbortError);
    expect(during.cause).toEqual(new Error("navigated away"));
    expect(hang.requests).toHaveLength(1);

    const busy = await scripted({ status: 503, headers: { "retry-after-ms": "30000" }, json: envelope("busy") });
    const waiting = new AbortController();
    setTimeout(() => waiting.abort(), 50);
    // The 30 s wait outlasts the test's timeout: only the abort ends it.
    expect(await thrown(() => client(busy.url).models.list({}, { signal: waiting.signal }))).toBeInstanceOf(UserAbortError);
    expect(busy.requests).toHaveLength(1);

    const idle = await scripted(OK);
    expect(await thrown(() => client(idle.url).models.list({}, { signal: AbortSignal.abort() }))).toBeInstanceOf(UserAbortError);
    expect(idle.requests).toHaveLength(0);
  });
});

describe("options", () => {
  it("checks options at once; per-call headers override the client's, null removes one", async () => {
    expect(() => createTollgateClient({ baseUrl: "not a url" })).toThrow(TypeError);
    expect(() => createTollgateClient({ baseUrl: "ftp://x.test" })).toThrow(TypeError);
    expect(() => createTollgateClient({ baseUrl: "http://x.test", maxRetries: -1 })).toThrow(RangeError);
    await expect(createTollgateClient({ baseUrl: "http://x.test" }).models.list({}, { timeoutMs: 0 })).rejects.toThrow(RangeError);
    const stub = await scripted(OK);
    const c = createTollgateClient({ baseUrl: `${stub.url}/mount/`, apiKey: "svc-a", sessionAddress: "0xabc", headers: { "x-app": "demo", "x-drop": "1" } });
    await c.models.list({ q: "flux", limit: 2 }, { apiKey: "svc-b", sessionAddress: null, headers: { "x-drop": null, "x-call": "yes" } });
    const [seen] = stub.requests;
    expect(seen!.url).toBe("/mount/v1/models?q=flux&limit=2");
    expect([seen!.headers.authorization, seen!.headers["x-session-user-address"], seen!.headers["x-app"], seen!.headers["x-drop"], seen!.headers["x-call"]]).toEqual([
      "Bearer svc-b",
      undefined,
      "demo",
      undefined,
      "yes",
    ]);
  });
});

describe("a prepare whose answer is lost", () => {
  let gw: TestGateway;
  beforeAll(async () => void (gw = await startGateway()));
  afterAll(() => gw?.close());

  it("is retried after the proxy's 503 with the same idempotency key: the gateway reserves once and replays", async () => {
    const owner = await gw.signedIn();
    const key = await owner.keys.create({ budgetLimit: 1000n, expiresAt: gw.clock.now() + DAY, purpose: "api" });
    // A proxy that forwards every request, but answers the first prepare with a 503 after the gateway handled it.
    const proxy = await startStub(async (req, index) => {
      const { host: _host, "content-length": _length, ...headers } = req.headers;
      const res = await fetch(`${gw.url}${req.url}`, { method: req.method, headers, ...(req.body === undefined ? {} : { body: req.body }) });
      const json = await res.json();
      if (index === 0) return { status: 503, headers: { "retry-after": "0" }, json: envelope("proxy_timeout") };
      const pass = ["x-request-id", "x-payment-intent-id", "x-idempotent-replay", ...["limit", "used", "reserved", "remaining"].map((n) => `x-key-budget-${n}`)];
      return { status: res.status, headers: Object.fromEntries(pass.flatMap((h) => (res.headers.has(h) ? [[h, res.headers.get(h)!]] : []))), json };
    });
    stubs.push(proxy);
    const payer = createTollgateClient({ baseUrl: proxy.url, apiKey: key.token, networkId: CHAIN });
    const { data, meta } = await payer.payments.prepare({ service: "inference", action: "chat", resource: "r", method: "POST", maxAmountWei: 300n }).withResponse();
    expect(meta.retries).toBe(1);
    expect(meta.idempotentReplay).toBe(true);
    const sentKeys = proxy.requests.map((r) => r.headers["x-idempotency-key"]);
    expect(sentKeys).toEqual([meta.idempotencyKey, meta.idempotencyKey]);
    expect(meta.budget).toEqual({ limit: 1000n, used: 0n, reserved: 300n, remaining: 700n });
    const intents = await owner.payments.list();
    expect(intents.intents.map((i) => [i.paymentIntentId, i.status])).toEqual([[data.paymentIntentId, "authorized"]]);
    expect((await gw.client({ apiKey: key.token }).keys.get(key.keyId)).budgetReserved).toBe("300");
    // Without the idempotency key two prepares would be two reservations: a second call of the client gets a new key.
    const second = await payer.payments.prepare({ service: "inference", action: "chat", resource: "r", method: "POST", maxAmountWei: 300n }).withResponse();
    expect(second.meta.idempotencyKey).not.toBe(meta.idempotencyKey);
    expect(second.meta.budget?.reserved).toBe(600n);
  });

  it("a 400 from the gateway is never retried (BadRequestError)", async () => {
    const c = gw.client({ maxRetries: 2 });
    expect(await thrown(() => c.payments.meter({ modelId: "", modality: "text" }))).toBeInstanceOf(BadRequestError);
    expect(c.calls).toHaveLength(1);
  });
});
