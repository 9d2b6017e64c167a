/** The retry policy's pure parts: which answers are retried, the waits, and the header encodings the client reads. */
import { describe, expect, it } from "vitest";
import { isRetryableAnswer, MAX_RETRY_AFTER_MS, retryAfterMs, retryDelayMs } from "./retry.js";
import { base64ToBytes, decodeBase64Json, parseAmount, queryString, stringifyJson } from "./encoding.js";

const h = (init: Record<string, string> = {}) => new Headers(init);
const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

describe("isRetryableAnswer", () => {
  it("idempotent calls retry 408, 409, 429 and 5xx; others only 408, 429 and 503; never 4xx otherwise", () => {
    const statuses = [400, 401, 402, 403, 404, 405, 408, 409, 413, 422, 429, 500, 502, 503, 504];
    expect(statuses.filter((s) => isRetryableAnswer(s, h(), true))).toEqual([408, 409, 429, 500, 502, 503, 504]);
    expect(statuses.filter((s) => isRetryableAnswer(s, h(), false))).toEqual([408, 429, 503]);
  });

  it("x-should-retry decides first; a definitive gateway code (a conflict, not_configured) is never retried", () => {
    expect(isRetryableAnswer(409, h({ "x-should-retry": "false" }), true)).toBe(false);
    expect(isRetryableAnswer(409, h(), true, "idempotency_conflict")).toBe(false);
    expect(isRetryableAnswer(409, h(), true, "lock_timeout")).toBe(true);
    expect(isRetryableAnswer(400, h({ "x-should-retry": "true" }), false)).toBe(true);
    expect(isRetryableAnswer(503, h(), true, "not_configured")).toBe(false);
    expect(isRetryableAnswer(503, h({ "x-should-retry": "true" }), true, "not_configured")).toBe(true);
    expect(isRetryableAnswer(503, h({ "x-should-retry": "maybe" }), true, "busy")).toBe(true);
  });
});

describe("retryAfterMs and retryDelayMs", () => {
  it("reads retry-after-ms, Retry-After seconds and HTTP dates; ignores malformed values", () => {
    expect(retryAfterMs(h({ "retry-after-ms": "250.5", "retry-after": "9" }), NOW)).toBe(250.5);
    expect(retryAfterMs(h({ "retry-after": "3" }), NOW)).toBe(3000);
    expect(retryAfterMs(h({ "retry-after": "1.5" }), NOW)).toBe(1500);
    expect(retryAfterMs(h({ "retry-after": new Date(NOW + 7000).toUTCString() }), NOW)).toBe(7000);
    expect(retryAfterMs(h({ "retry-after": new Date(NOW - 7000).toUTCString() }), NOW)).toBe(0);
    expect(retryAfterMs(h({ "retry-after": "soon" }), NOW)).toBeUndefined();
    expect(retryAfterMs(h({ "retry-after-ms": "-5" }), NOW)).toBeUndefined();
    expect(retryAfterMs(h(), NOW)).toBeUndefined();
  });

  it("waits what the server asks up to 60 s (longer: do not retry), else backs off 0.5, 1, 2, 4, 8, 8 s less up to 25%", () => {
    expect(retryDelayMs(0, h({ "retry-after": "2" }), () => 0.5, NOW)).toBe(2000);
    expect(retryDelayMs(0, h({ "retry-after": String(MAX_RETRY_AFTER_MS / 1000) }), () => 0.5, NOW)).toBe(MAX_RETRY_AFTER_MS);
    expect(retryDelayMs(0, h({ "retry-after": "61" }), () => 0.5, NOW)).toBeUndefined();
    expect([0, 1, 2, 3, 4, 5].map((n) => retryDelayMs(n, undefined, () => 0))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    expect([0, 1, 2].map((n) => retryDelayMs(n, h(), () => 1))).toEqual([375, 750, 1500]);
  });
});

describe("encodings", () => {
  it("decodes standard and URL-safe base64 JSON (padded or not), and refuses malformed input without throwing", () => {
    const value = { id: "rcpt_1", subject: "openai:dall-e-3", note: "é ✓ ~~~???" };
    const standard = Buffer.from(JSON.stringify(value)).toString("base64");
    const url = Buffer.from(JSON.stringify(value)).toString("base64url");
    expect(standard).toMatch(/[+/=]/);
    expect(decodeBase64Json(standard)).toEqual(value);
    expect(decodeBase64Json(url)).toEqual(value);
    expect(decodeBase64Json("%%%")).toBeUndefined();
    expect(decodeBase64Json(Buffer.from("not json").toString("base64"))).toBeUndefined();
    expect(decodeBase64Json(Buffer.from([0xff, 0xfe]).toString("base64"))).toBeUndefined();
    expect(base64ToBytes("A")).toBeUndefined();
  });

  it("bigints travel as decimal strings; query strings drop undefined and join arrays; amounts parse strictly", () => {
    expect(stringifyJson({ a: 2n ** 64n, b: "1", c: undefined })).toBe('{"a":"18446744073709551616","b":"1"}');
    expect(queryString({ q: "a b", tags: ["x", "y"], limit: 5, none: undefined })).toBe("?q=a+b&tags=x%2Cy&limit=5");
    expect(queryString({ none: undefined })).toBe("");
    expect([parseAmount("123"), parseAmount("1.5"), parseAmount("-1"), parseAmount(null)]).toEqual([123n, undefined, undefined, undefined]);
  });
});
