import { describe, expect, it } from "vitest";
import { createGateway } from "../gateway.js";
import { createMemoryStore } from "../store/memory.js";
import { assertJsonShape, MAX_BODY_DEPTH, MAX_OBJECT_KEYS } from "./json-shape.js";

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const object = (keys: number) => `{${Array.from({ length: keys }, (_, i) => `"k${i}":{"a":1,"b":[1,2]}`).join(",")}}`;

describe("the shape of a JSON body", () => {
  it("passes up to the depth and key limits, and refuses beyond them", () => {
    expect(() => assertJsonShape(nested(MAX_BODY_DEPTH))).not.toThrow();
    expect(() => assertJsonShape(nested(MAX_BODY_DEPTH + 1))).toThrow(/more than 128 levels deep/);
    expect(() => assertJsonShape(object(MAX_OBJECT_KEYS))).not.toThrow();
    expect(() => assertJsonShape(object(MAX_OBJECT_KEYS + 1))).toThrow(/more than 1000 keys/);
    // Keys are counted per object: many small objects in an array pass.
    expect(() => assertJsonShape(`[${Array.from({ length: 5_000 }, () => '{"a":1,"b":2}').join(",")}]`)).not.toThrow();
  });

  it("does not count brackets, braces or colons inside strings, escaped quotes included", () => {
    const inString = JSON.stringify({ text: `${"[{".repeat(5_000)}\\" :::: ${":".repeat(5_000)}` });
    expect(() => assertJsonShape(inString)).not.toThrow();
    expect(() => assertJsonShape(`{"a\\"[[[[":${nested(MAX_BODY_DEPTH - 1)}}`)).not.toThrow();
  });

  it("a deep or wide body gets a 400 envelope from a public route, before the parser runs", async () => {
    const gateway = createGateway({ store: createMemoryStore(), sweepIntervalMs: 0 });
    const post = (body: string) =>
      gateway.fetch(new Request("http://gw.test/v1/models/search", { method: "POST", headers: { "content-type": "application/json" }, body }));
    const deep = await post(`{"limit":${nested(500_000)}}`);
    expect([deep.status, ((await deep.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_request"]);
    const wide = await post(object(2_000));
    expect(wide.status).toBe(400);
    expect((await post('{"q":"gpt"}')).status).toBe(200);
    await gateway.close();
  });
});
