/**
 * Renders docs/api.md from the route table and the error table, so the docs cannot drift from
 * the code. `npx tsx --conditions=tollgate-source scripts/api-docs.ts` writes it; `--check` fails when
 * the committed file is stale (a test runs the check too).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ERROR_TABLE, gatewayRoutes } from "../packages/core/src/index.js";

/** The path of the generated document. */
export const API_DOC = fileURLToPath(new URL("../docs/api.md", import.meta.url));

/** The document text. */
export function renderApiDoc(): string {
  const routes = gatewayRoutes();
  const tags = [...new Set(routes.map((r) => r.tag))];
  const lines = [
    "# HTTP API",
    "",
    "Generated from the route table by `scripts/api-docs.ts` — do not edit by hand. Shapes and status codes: `CONTRACT.md`.",
    "Paths with `:name+` take a URL-encoded id that may contain `/` and `:`.",
    "",
  ];
  for (const tag of tags) {
    lines.push(`## ${tag}`, "", "| method | path | body | what it does |", "|---|---|---|---|");
    for (const r of routes.filter((x) => x.tag === tag)) lines.push(`| ${r.method} | \`${r.path}\` | ${r.body ? `JSON (${r.bodyLimit ?? "json"} limit)` : "—"} | ${r.summary} |`);
    lines.push("");
  }
  lines.push("## Errors", "", "Every error answers `{\"error\":{\"code\",\"message\",\"type\",\"param\"?,\"details\"?,\"requestId\"}}`.", "", "| code | status | type | default message |", "|---|---:|---|---|");
  for (const [code, spec] of Object.entries(ERROR_TABLE)) lines.push(`| \`${code}\` | ${spec.status} | ${spec.type} | ${spec.message} |`);
  return `${lines.join("\n")}\n`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const text = renderApiDoc();
  if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(API_DOC, "utf8");
    } catch {
      // missing counts as stale
    }
    if (current !== text) {
      console.error("docs/api.md is stale: run npm run docs:api");
      process.exit(1);
    }
  } else writeFileSync(API_DOC, text);
}
