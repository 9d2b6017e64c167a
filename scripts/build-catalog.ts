/**
 * Builds the bundled native catalog: validates packages/core/catalog/sources, sorts the cards by
 * (modelId, provider) and writes packages/core/src/catalog/generated/native-catalog.ts.
 *
 *   npx tsx scripts/build-catalog.ts           write the generated module
 *   npx tsx scripts/build-catalog.ts --check   exit 1 if the committed module is out of date
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";
import { SOURCE_CARDS } from "../packages/core/catalog/sources/index.js";
import { GENERATED_CATALOG_FILE, renderCatalog, validateCatalog } from "./catalog-render.js";

const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== "--check");
if (unknown.length > 0) {
  console.error(`build-catalog: unknown argument(s) ${unknown.join(" ")}; usage: tsx scripts/build-catalog.ts [--check]`);
  process.exit(2);
}
const check = args.includes("--check");
const target = relative(process.cwd(), GENERATED_CATALOG_FILE);

const result = validateCatalog(SOURCE_CARDS);
if (!result.ok) {
  console.error(`build-catalog: the catalog sources have ${result.problems.length} problem(s):`);
  for (const line of result.problems) console.error(`  ${line}`);
  process.exit(1);
}

const text = renderCatalog(result.cards);
const current = existsSync(GENERATED_CATALOG_FILE) ? readFileSync(GENERATED_CATALOG_FILE, "utf8") : null;
const providers = new Set(result.cards.map((c) => c.provider)).size;

if (check) {
  if (current !== text) {
    console.error(`build-catalog: ${target} is ${current === null ? "missing" : "out of date"}; run \`npm run catalog:build\` and commit the result.`);
    process.exit(1);
  }
  console.log(`build-catalog: ${target} is up to date (${result.cards.length} cards, ${providers} providers).`);
} else {
  if (current !== text) {
    mkdirSync(dirname(GENERATED_CATALOG_FILE), { recursive: true });
    writeFileSync(GENERATED_CATALOG_FILE, text);
  }
  console.log(`build-catalog: ${current === text ? "unchanged" : "wrote"} ${target} (${result.cards.length} cards, ${providers} providers).`);
}
