/**
 * Compiles the test contracts (packages/core/contracts/*.sol) with solc and writes their ABI and
 * bytecode to packages/core/src/chain/generated/test-contracts.ts, so that nothing compiles at
 * run time (the dev chain of `npm start` deploys from it).
 *
 *   npx tsx scripts/build-contracts.ts           write the generated module
 *   npx tsx scripts/build-contracts.ts --check   exit 1 if the committed module is out of date
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";
import { GENERATED_CONTRACTS_FILE, TEST_CONTRACTS, compileTestContracts, renderTestContracts } from "./contracts-render.js";

const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== "--check");
if (unknown.length > 0) {
  console.error(`build-contracts: unknown argument(s) ${unknown.join(" ")}; usage: tsx scripts/build-contracts.ts [--check]`);
  process.exit(2);
}
const check = args.includes("--check");
const target = relative(process.cwd(), GENERATED_CONTRACTS_FILE);

let text: string;
try {
  text = renderTestContracts(compileTestContracts());
} catch (error) {
  console.error(`build-contracts: ${(error as Error).message}`);
  process.exit(1);
}
const current = existsSync(GENERATED_CONTRACTS_FILE) ? readFileSync(GENERATED_CONTRACTS_FILE, "utf8") : null;
const names = TEST_CONTRACTS.map((c) => c.name).join(", ");

if (check) {
  if (current !== text) {
    console.error(`build-contracts: ${target} is ${current === null ? "missing" : "out of date"}; run \`npm run contracts:build\` and commit the result.`);
    process.exit(1);
  }
  console.log(`build-contracts: ${target} is up to date (${names}).`);
} else {
  if (current !== text) {
    mkdirSync(dirname(GENERATED_CONTRACTS_FILE), { recursive: true });
    writeFileSync(GENERATED_CONTRACTS_FILE, text);
  }
  console.log(`build-contracts: ${current === text ? "unchanged" : "wrote"} ${target} (${names}).`);
}
