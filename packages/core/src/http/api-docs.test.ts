import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { API_DOC, renderApiDoc } from "../../../../scripts/api-docs.js";

it("docs/api.md is generated from the current route and error tables (npm run docs:api)", () => {
  expect(readFileSync(API_DOC, "utf8")).toBe(renderApiDoc());
});
