import { describe, expect, it } from "vitest";
import { appendMember, countOf, usageAtTail } from "./pass-through.js";

const enc = (text: string) => new TextEncoder().encode(text);
const dec = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("pass-through of an upstream JSON answer", () => {
  it("reads the usage object that ends an OpenAI answer, with or without whitespace and nested details", () => {
    const vector = Array.from({ length: 1536 }, (_, i) => Math.sin(i)).join(",");
    expect(usageAtTail(enc(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[${vector}]}],"model":"m","usage":{"prompt_tokens":9,"total_tokens":9}}`))).toEqual({
      prompt_tokens: 9,
      total_tokens: 9,
    });
    expect(usageAtTail(enc('{\n  "data": [],\n  "usage" : {\n    "prompt_tokens": 3,\n    "prompt_tokens_details": {"cached_tokens": 1}\n  }\n}\n'))).toEqual({
      prompt_tokens: 3,
      prompt_tokens_details: { cached_tokens: 1 },
    });
  });

  it("refuses every other shape, so the caller decodes and validates the whole answer", () => {
    const refused = [
      '{"usage":{"prompt_tokens":1},"model":"m"}', // usage is not the last member
      '{"data":[{"usage":{"prompt_tokens":1}}]}', // nested in an array
      '{"meta":{"usage":{"prompt_tokens":1}}}', // nested in an object
      '{"data":[],"usage":5}', // not an object
      '{"data":[],"usage":{"prompt_tokens":1}', // truncated
      '[{"usage":{"prompt_tokens":1}}]', // not an object answer
      '{"data":[]}', // no usage at all
      '{"note":"\\"usage\\":{\\"prompt_tokens\\":1}"}', // only inside a string
      "",
    ];
    for (const text of refused) expect(usageAtTail(enc(text)), text).toBeUndefined();
  });

  it("countOf accepts non-negative safe integers only", () => {
    const usage = { a: 3, b: -1, c: 1.5, d: "4", e: 2 ** 60 };
    expect(["a", "b", "c", "d", "e", "missing"].map((k) => countOf(usage, k))).toEqual([3, undefined, undefined, undefined, undefined, undefined]);
  });

  it("appendMember adds one member before the closing brace, keeping the upstream bytes", () => {
    const raw = enc('{"object":"list","data":[],"usage":{"prompt_tokens":2}}\n');
    const out = appendMember(raw, "receipt", JSON.stringify({ id: "rcpt_1", finalAmountWei: "7" }));
    expect(JSON.parse(dec(out))).toEqual({ object: "list", data: [], usage: { prompt_tokens: 2 }, receipt: { id: "rcpt_1", finalAmountWei: "7" } });
    expect(dec(out).startsWith('{"object":"list","data":[],"usage":{"prompt_tokens":2}')).toBe(true);
  });
});
