import { describe, expect, it } from "vitest";
import { json } from "./respond.js";
import { defineRoute } from "./route.js";
import { createRouter } from "./router.js";

const route = (method: "GET" | "POST" | "DELETE", path: string) =>
  defineRoute({ method, path, tag: "t", summary: path, handle: () => json({ path }) });

const router = createRouter([
  route("GET", "/v1/models/:model+"),
  route("GET", "/v1/models/:model+/params"),
  route("GET", "/v1/models/all"),
  route("POST", "/v1/models/search"),
  route("GET", "/api/keys/:keyId"),
  route("DELETE", "/api/keys/:keyId"),
  route("POST", "/api/keys/settle"),
]);

describe("router", () => {
  it("prefers literal segments over parameters", () => {
    const m = router.match("GET", "/v1/models/all");
    expect(m.kind === "found" && m.route.path).toBe("/v1/models/all");
  });

  it("decodes encoded ids and accepts unencoded slashes in greedy params", () => {
    for (const [path, id] of [
      ["/v1/models/black-forest-labs%2Fflux-1.1-pro", "black-forest-labs/flux-1.1-pro"],
      ["/v1/models/amazon.titan-embed-text-v2%3A0", "amazon.titan-embed-text-v2:0"],
      ["/v1/models/fal-ai/flux-pro/v1.1", "fal-ai/flux-pro/v1.1"],
    ] as const) {
      const m = router.match("GET", path);
      expect(m).toMatchObject({ kind: "found", params: { model: id } });
    }
    const p = router.match("GET", "/v1/models/org%2Fx%3A1/params");
    expect(p).toMatchObject({ kind: "found", params: { model: "org/x:1" } });
    expect(p.kind === "found" && p.route.path).toBe("/v1/models/:model+/params");
  });

  it("answers 405 with the allowed methods of the matched path", () => {
    expect(router.match("PUT", "/api/keys/key_1")).toEqual({ kind: "method_not_allowed", allow: ["DELETE", "GET"] });
    expect(router.match("GET", "/v1/models/search")).toEqual({ kind: "method_not_allowed", allow: ["POST"] });
    expect(router.match("GET", "/api/keys/settle")).toEqual({ kind: "method_not_allowed", allow: ["POST"] });
  });

  it("answers not_found for unknown paths and treats HEAD as GET", () => {
    expect(router.match("GET", "/nope")).toEqual({ kind: "not_found" });
    expect(router.match("HEAD", "/v1/models/all").kind).toBe("found");
  });

  it("rejects malformed percent-encoding and duplicate routes", () => {
    expect(() => router.match("GET", "/v1/models/%E0%A4%A")).toThrow(/percent-encoding/);
    expect(() => createRouter([route("GET", "/a/:x"), route("GET", "/a/:y")])).toThrow(/duplicate route/);
  });
});
