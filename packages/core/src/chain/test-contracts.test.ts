import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { GENERATED_CONTRACTS_FILE, compileTestContracts, renderTestContracts } from "../../../../scripts/contracts-render.js";
import { TEST_SMART_WALLET_CONTRACT, TEST_USDC_CONTRACT } from "./index.js";

it("generated/test-contracts.ts is compiled from the current contracts/*.sol (npm run contracts:build)", () => {
  const compiled = compileTestContracts();
  expect(readFileSync(GENERATED_CONTRACTS_FILE, "utf8")).toBe(renderTestContracts(compiled));
  // What the module exports is what solc produced (the rendering loses nothing).
  expect(TEST_USDC_CONTRACT).toEqual(compiled.contracts.TestUSDC);
  expect(TEST_SMART_WALLET_CONTRACT).toEqual(compiled.contracts.TestSmartWallet);
  const functions = TEST_USDC_CONTRACT.abi.flatMap((item) => (item.type === "function" ? [item.name] : []));
  expect(functions).toEqual(expect.arrayContaining(["transferWithAuthorization", "transferFrom", "approve", "mint", "authorizationState", "DOMAIN_SEPARATOR"]));
});
