/** Caller-priced line items: exact reading of JSON numbers and decimal strings, unit scales, amounts. */
import { describe, expect, it } from "vitest";
import { checkDecimalInput, priceCallerLines, unitScale } from "./caller-priced.js";

describe("checkDecimalInput: exact, bounded, never float math", () => {
  it.each([
    [0.0000004, "0.0000004"], // String(0.0000004) is "4e-7": the exponent is shifted in decimal
    [1e-7, "0.0000001"],
    [1.5e-10, "0.00000000015"],
    [100000, "100000"],
    [1e15, "1000000000000000"],
    [Number.MAX_SAFE_INTEGER, "9007199254740991"],
    [0.1, "0.1"],
    [0, "0"],
    ["0.0000004", "0.0000004"],
    ["007.50", "7.5"],
    ["0.000000000000000001", "0.000000000000000001"],
  ] as const)("%s → %s", (input, text) => {
    expect(checkDecimalInput(input)).toEqual({ text });
  });

  it.each([["1e-7"], ["-1"], [-0.5], [" 1"], ["1."], [".5"], ["NaN"], [Number.NaN], [Number.POSITIVE_INFINITY], [1e16], ["0.0000000000000000001"], ["0.12345678901234567"], ["9007199254740993"], [null], [true]])("%s is refused", (input) => {
    expect(checkDecimalInput(input)).toHaveProperty("problem");
  });
});

describe("unitScale: the catalog's units, then the origin's naming rule", () => {
  it.each([
    ["usd_per_1m_tokens", 1_000_000n],
    ["usd_per_1k_characters", 1_000n],
    ["usd_per_minute", 60n],
    ["usd_per_request", 1n],
    ["usd_per_1k_tokens", 1_000n],
    ["usd_per_10k_queries", 10_000n],
    ["usd_per_2m_tokens", 2_000_000n],
    ["usd_per_30_seconds", 30n],
    ["USD_PER_1K_TOKENS", 1_000n],
    ["usd_per_0k_tokens", 1n],
    ["usd_per_0_seconds", 1n],
    ["usd_per_search", 1n],
  ] as const)("%s → %s", (unit, scale) => {
    expect(unitScale(unit)).toBe(scale);
  });
});

describe("priceCallerLines", () => {
  it("the origin client's example: 100,000 × 0.0000004 per 1k = 40 atoms, + 1 % fee = 41", () => {
    const p = priceCallerLines([{ key: "search", unit: "usd_per_1k_tokens", quantity: "100000", unitPriceUsd: "0.0000004" }], 100);
    expect([p.providerAmount, p.platformFee, p.finalAmount]).toEqual([40n, 1n, 41n]);
    expect(p.lineItems).toEqual([{ key: "search", unit: "usd_per_1k_tokens", quantity: "100000", unitPriceUsd: "0.0000004", amountWei: "40" }]);
  });

  it("each line is ceil'ed on its own; zero quantities are skipped", () => {
    const p = priceCallerLines(
      [
        { key: "a", unit: "usd_per_request", quantity: "1", unitPriceUsd: "0.0000001" },
        { key: "b", unit: "usd_per_request", quantity: "0", unitPriceUsd: "5" },
        { key: "c", unit: "usd_per_request", quantity: "3", unitPriceUsd: "0.005" },
      ],
      0,
    );
    expect(p.lineItems.map((l) => [l.key, l.amountWei])).toEqual([["a", "1"], ["c", "15000"]]);
    expect(p.finalAmount).toBe(15001n);
  });
});
