import { describe, expect, it } from "vitest";
import { formatUsdc, formatUsdcShort, parseAtomic, parseBudget, parseUsdc, spendTotals } from "./usdc";

describe("formatUsdc", () => {
  it("always shows six decimals and groups thousands", () => {
    expect(formatUsdc("0")).toBe("0.000000");
    expect(formatUsdc("1")).toBe("0.000001");
    expect(formatUsdc("1250000")).toBe("1.250000");
    expect(formatUsdc(1_000_000n)).toBe("1.000000");
    expect(formatUsdc("1234567890")).toBe("1,234.567890");
  });

  it("stays exact beyond float precision", () => {
    // 2^63 - 1 atomic units: a float would round the last digits.
    expect(formatUsdc("9223372036854775807")).toBe("9,223,372,036,854.775807");
  });

  it("rejects anything that is not a non-negative integer", () => {
    for (const bad of ["", "-1", "1.5", "1e6", " 1", "0x10"]) expect(() => formatUsdc(bad)).toThrow(TypeError);
    expect(() => parseAtomic(-1n)).toThrow(TypeError);
  });
});

describe("parseUsdc", () => {
  it("reads typed USDC amounts to atomic units without floats", () => {
    expect(parseUsdc("20")).toBe(20_000_000n);
    expect(parseUsdc(" 0.5 ")).toBe(500_000n);
    expect(parseUsdc(".5")).toBe(500_000n);
    expect(parseUsdc("1.")).toBe(1_000_000n);
    expect(parseUsdc("0.000001")).toBe(1n);
    expect(parseUsdc("1,234.567890")).toBe(1_234_567_890n);
    // 0.1 + 0.2 style drift cannot happen: beyond float precision stays exact.
    expect(parseUsdc("9,223,372,036,854.775807")).toBe(9_223_372_036_854_775_807n);
  });

  it("is the inverse of formatUsdc", () => {
    for (const atomic of ["0", "1", "1250000", "1234567890", "9223372036854775807"]) expect(parseUsdc(formatUsdc(atomic)).toString()).toBe(atomic);
  });

  it("refuses anything else with a sentence", () => {
    for (const bad of ["", ".", "-1", "+1", "1e6", "0x10", "1.2.3", "12,34", "1,2345", "abc", "1 000", "0.0000001"])
      expect(() => parseUsdc(bad), bad).toThrow(RangeError);
    expect(() => parseUsdc("0.0000001")).toThrow(/more than 6 decimals/);
  });
});

describe("parseBudget", () => {
  it("takes a positive USDC amount and refuses zero with a sentence", () => {
    expect(parseBudget("12.5")).toBe(12_500_000n);
    expect(parseBudget("0.000001")).toBe(1n);
    for (const zero of ["0", "0.0", ".000000"]) expect(() => parseBudget(zero), zero).toThrow("The budget limit must be more than 0 USDC.");
    expect(() => parseBudget("1.0000001")).toThrow(/more than 6 decimals/);
  });
});

describe("formatUsdcShort", () => {
  it("drops trailing zeros beyond two decimals, exactly", () => {
    expect(["0", "1", "10000", "20000", "1000000", "1250000", "1234567890", "9223372036854775807"].map((v) => formatUsdcShort(v))).toEqual([
      "0.00",
      "0.000001",
      "0.01",
      "0.02",
      "1.00",
      "1.25",
      "1,234.56789",
      "9,223,372,036,854.775807",
    ]);
  });
});

describe("spendTotals", () => {
  const key = (used: string, reserved: string, remaining: string, status: string) => ({
    budgetLimit: (BigInt(used) + BigInt(reserved) + BigInt(remaining)).toString(),
    budgetUsed: used,
    budgetReserved: reserved,
    budgetRemaining: remaining,
    status,
  });

  it("sums settled and reserved apart over every key, available over active keys only", () => {
    const totals = spendTotals([key("1250000", "500000", "3250000", "active"), key("9007199254740993", "0", "7", "revoked"), key("10", "0", "0", "exhausted")]);
    expect(totals).toEqual({ settled: 9007199255991003n, reserved: 500000n, available: 3250000n });
  });

  it("never counts a reservation as spend", () => {
    expect(spendTotals([key("0", "750000", "250000", "active")])).toEqual({ settled: 0n, reserved: 750000n, available: 250000n });
  });

  it("is all zero for a wallet without keys", () => {
    expect(spendTotals([])).toEqual({ settled: 0n, reserved: 0n, available: 0n });
  });

  it("refuses a malformed amount instead of guessing", () => {
    expect(() => spendTotals([key("1", "0", "0", "active"), { ...key("1", "0", "0", "active"), budgetUsed: "1.0" }])).toThrow(TypeError);
  });
});
