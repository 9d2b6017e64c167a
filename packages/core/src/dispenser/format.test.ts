import { describe, expect, it } from "vitest";
import { formatUsdc } from "./format.js";

describe("formatUsdc", () => {
  it("formats atomic units exactly: at least 2 decimals, up to 6, no float rounding", () => {
    const cases: [bigint | number | string, string][] = [
      [0n, "$0.00 USDC"],
      [1n, "$0.000001 USDC"],
      [10_000n, "$0.01 USDC"],
      [250_000, "$0.25 USDC"],
      [1_000_000n, "$1.00 USDC"],
      [1_500_000n, "$1.50 USDC"],
      [1_234_567n, "$1.234567 USDC"],
      [9_007_199_254_740_993n, "$9007199254.740993 USDC"], // above 2^53: a float would lose the last digit
      [10n ** 30n, "$1000000000000000000000000.00 USDC"],
      ["4000000", "$4.00 USDC"],
      [-500_000n, "-$0.50 USDC"],
    ];
    for (const [atomic, text] of cases) expect(formatUsdc(atomic)).toBe(text);
  });
});
