import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { renderDocs } from "../../../../scripts/api-docs.js";

it.each(renderDocs())("$name is generated from the current route and error tables (npm run docs:api)", ({ path, text }) => {
  expect(readFileSync(path, "utf8")).toBe(text);
});
