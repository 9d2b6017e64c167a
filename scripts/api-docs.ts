/**
 * Renders docs/api.md and docs/openapi.json from the route table and the error table, so the docs
 * cannot drift from the code. `npx tsx --conditions=tollgate-source scripts/api-docs.ts` writes
 * both; `--check` exits 1 naming each stale file (a test runs the same comparison).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ERROR_TABLE, gatewayRoutes } from "../packages/core/src/index.js";
import { API_VERSION, buildOpenApiDocument } from "../packages/core/src/http/openapi.js";

/** The path of the generated Markdown reference. */
export const API_DOC = fileURLToPath(new URL("../docs/api.md", import.meta.url));
/** The path of the generated OpenAPI document (the one `/openapi.json` serves, without `servers`). */
export const OPENAPI_DOC = fileURLToPath(new URL("../docs/openapi.json", import.meta.url));

/** The OpenAPI document text: pretty-printed JSON with a trailing newline. */
export function renderOpenApiDoc(): string {
  return `${JSON.stringify(buildOpenApiDocument(gatewayRoutes(), { title: "Tollgate", version: API_VERSION }), null, 2)}\n`;
}

/** Every generated file with its current text. */
export function renderDocs(): { path: string; name: string; text: string }[] {
  return [
    { path: API_DOC, name: "docs/api.md", text: renderApiDoc() },
    { path: OPENAPI_DOC, name: "docs/openapi.json", text: renderOpenApiDoc() },
  ];
}

/**
 * Every alias accepted on input and every output difference of `compat: "compose"` (the origin
 * API's clients), in one table.
 */
const COMPAT_SECTION = [
  "## Aliases and compat differences",
  "",
  "Input aliases are always accepted. Outputs carry both names where both can coexist; `compat: \"compose\"` switches the few that cannot.",
  "",
  "| where | Tollgate name | also accepted (input) or under `compat: \"compose\"` (output) |",
  "|---|---|---|",
  "| request header | `x-network-id` | `x-chain-id` |",
  "| key create body | `networkId` | `chainId` |",
  "| prepare body | `runId` | `composeRunId` |",
  "| prepare body | `maxAmountWei` or `meter` | top-level `modelId`, `modality`, `usage`/`media` (priced as a meter) |",
  "| feedback body | `targetType`, `targetId`, `comment` | `target: {type, id}`, `message` |",
  "| settlement status | `x-chain-id` header | `?chainId=` query |",
  "| directory | `/api/directory/agents` | `/api/agentverse/agents` |",
  "| `Authorization` | `Bearer <token>` | the bare token |",
  "| GET/DELETE | no body | `Content-Type: application/json` with an empty body |",
  "| output: key tokens | `svc-…` | `compose-…` (compat) |",
  "| output: video SSE events | `video.status`, `svc.error` | `compose.video.status`, `compose.error` (compat) |",
  "| output: feedback verification | `service_key` | `compose_key` (compat; records and summary counts) |",
  "| output: error messages | name `svc-` tokens | never mention `svc-` (compat) |",
  "| output: agent cards | `protocols: [\"name\"]`, `createdAt` Unix ms | `protocols: [{name, version}]`, `createdAt` ISO string, `model: \"\"` and `chain: 0` when unknown (compat) |",
  "| output: model params | `modality` | `type` (both always sent) |",
  "| output: feedback records | `comment` | `message` (both always sent) |",
  "",
];

/** The document text. */
export function renderApiDoc(): string {
  const routes = gatewayRoutes();
  const tags = [...new Set(routes.map((r) => r.tag))];
  const lines = [
    "# HTTP API",
    "",
    "Generated from the route table by `scripts/api-docs.ts` — do not edit by hand.",
    "Paths with `:name+` take a URL-encoded id that may contain `/` and `:`.",
    "",
    "List sizes (`limit`, `recentLimit`) are clamped to their range, never refused: a value out of range becomes the nearest bound, and a value that is not a number means the default.",
    "",
    "The same table as an OpenAPI 3.1 document: `GET /openapi.json` on a running gateway (with `servers` set to the origin it was reached at) and [`docs/openapi.json`](openapi.json) in the repository, both generated, with parameter and request-body schemas, security schemes and error responses.",
    "",
  ];
  for (const tag of tags) {
    lines.push(`## ${tag}`, "", "| method | path | body | what it does |", "|---|---|---|---|");
    for (const r of routes.filter((x) => x.tag === tag)) lines.push(`| ${r.method} | \`${r.path}\` | ${r.body ? `JSON (${typeof r.bodyLimit === "function" ? "media limit; 1 MiB without a credential" : `${r.bodyLimit ?? "json"} limit`})` : "—"} | ${r.summary} |`);
    lines.push("");
  }
  lines.push(...COMPAT_SECTION);
  lines.push("## Errors", "", "Every error answers `{\"error\":{\"code\",\"message\",\"type\",\"param\"?,\"details\"?,\"requestId\"}}`.", "", "| code | status | type | default message |", "|---|---:|---|---|");
  for (const [code, spec] of Object.entries(ERROR_TABLE)) lines.push(`| \`${code}\` | ${spec.status} | ${spec.type} | ${spec.message} |`);
  return `${lines.join("\n")}\n`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const docs = renderDocs();
  if (process.argv.includes("--check")) {
    const stale = docs.filter((d) => {
      try {
        return readFileSync(d.path, "utf8") !== d.text;
      } catch {
        return true; // missing counts as stale
      }
    });
    if (stale.length > 0) {
      console.error(`${stale.map((d) => d.name).join(" and ")} ${stale.length > 1 ? "are" : "is"} stale: run npm run docs:api`);
      process.exit(1);
    }
  } else for (const d of docs) writeFileSync(d.path, d.text);
}
