import { describe, expect, it } from "vitest";
import { actorLabel, changeLines, eventTitle, formatChangeValue } from "./key-events";

describe("key events", () => {
  it("shows amounts in USDC, times in UTC and cleared values by name", () => {
    expect(formatChangeValue("budgetLimit", "25000000")).toBe("25.000000 USDC");
    expect(formatChangeValue("budgetPeriod", null)).toBe("none (lifetime budget)");
    expect(formatChangeValue("models", null)).toBe("every model");
    expect(formatChangeValue("models", ["openai/*", "gpt-4o"])).toBe("openai/*, gpt-4o");
    expect(formatChangeValue("modelBudgets", { "openai/*": "2500000" })).toBe("openai/* ≤ 2.500000 USDC");
    expect(formatChangeValue("previousTokenValidUntil", Date.UTC(2031, 0, 15, 12, 0, 5))).toBe("2031-01-15 12:00:05 UTC");
    expect(formatChangeValue("rateLimit", { requestsPerMinute: 60 })).toBe("60 requests / minute");
    expect(formatChangeValue("name", "Research")).toBe("Research");
    expect(formatChangeValue("somethingNew", { a: 1 })).toBe('{"a":1}');
  });

  it("orders the changes like the form and labels them", () => {
    const lines = changeLines({ changes: { budgetPeriod: { from: null, to: "weekly" }, budgetLimit: { from: "25000000", to: "20000000" } } });
    expect(lines).toEqual([
      { field: "budgetLimit", label: "Budget limit", from: "25.000000 USDC", to: "20.000000 USDC" },
      { field: "budgetPeriod", label: "Budget period", from: "none (lifetime budget)", to: "weekly" },
    ]);
  });

  it("names the event and who made it", () => {
    expect(eventTitle({ type: "rotate" })).toBe("Token rotated");
    expect(eventTitle({ type: "update" })).toBe("Updated");
    expect(actorLabel("wallet:0xabc", "key_1")).toBe("wallet 0xabc");
    expect(actorLabel("key:key_1", "key_1")).toBe("the key itself");
    expect(actorLabel("key:key_2", "key_1")).toBe("key key_2");
  });
});
