import { describe, expect, it } from "vitest";
import { createParamsOf, DEFAULT_BUDGET, emptyCreateForm, formatUtcMinute, parseUtcMinute, type CreateKeyForm } from "./key-create";

const NOW = Date.UTC(2026, 10, 23, 10, 15, 30, 500);
const context = { now: NOW, chainId: 8453 };
const form = (over: Partial<CreateKeyForm> = {}): CreateKeyForm => ({ name: "Agent", purpose: "api", budget: "12.5", expiresAt: "2031-01-15T12:00", ...over });

describe("parseUtcMinute", () => {
  it("reads the datetime-local value as UTC and is the inverse of formatUtcMinute", () => {
    expect(parseUtcMinute("2031-01-15T12:00")).toBe(Date.UTC(2031, 0, 15, 12, 0));
    expect(parseUtcMinute(" 2028-02-29T23:59 ")).toBe(Date.UTC(2028, 1, 29, 23, 59));
    expect(formatUtcMinute(Date.UTC(2031, 0, 15, 12, 0, 59, 999))).toBe("2031-01-15T12:00");
  });

  it("refuses dates that do not exist and other shapes with a sentence", () => {
    for (const bad of [
      "",
      "2031-02-30T12:00",
      "2027-02-29T00:00",
      "2031-13-01T00:00",
      "2031-01-15T24:00",
      "2031-01-15 12:00",
      "2031-01-15T12:00:00",
      "2031-01-15",
      "tomorrow",
    ])
      expect(() => parseUtcMinute(bad), bad).toThrow(/^Enter the expiry as a UTC date and time/);
  });
});

describe("emptyCreateForm", () => {
  it("starts as an unnamed API key of 5 USDC expiring in 30 days, to the next minute", () => {
    expect(emptyCreateForm(NOW)).toEqual({ name: "", purpose: "api", budget: DEFAULT_BUDGET, expiresAt: "2026-12-23T10:16" });
    expect(emptyCreateForm(Date.UTC(2026, 10, 23, 10, 15))).toMatchObject({ expiresAt: "2026-12-23T10:15" });
    expect(createParamsOf(emptyCreateForm(NOW), context)).toMatchObject({ ok: true, params: { budgetLimit: "5000000" } });
  });
});

describe("createParamsOf", () => {
  it("turns the fields into the keys.create body: atomic budget as a string, UTC expiry, the wallet's chain", () => {
    expect(createParamsOf(form({ name: "  Research agent  ", purpose: "session", budget: "1,234.567891" }), context)).toEqual({
      ok: true,
      params: { name: "Research agent", purpose: "session", budgetLimit: "1234567891", expiresAt: Date.UTC(2031, 0, 15, 12, 0), networkId: 8453 },
    });
  });

  it("leaves an empty name out and keeps amounts beyond float precision exact", () => {
    const result = createParamsOf(form({ name: "   ", budget: "9,223,372,036,854.775807" }), { now: NOW, chainId: 84532 });
    expect(result).toEqual({
      ok: true,
      params: { purpose: "api", budgetLimit: "9223372036854775807", expiresAt: Date.UTC(2031, 0, 15, 12, 0), networkId: 84532 },
    });
  });

  it("names the first field in error with a sentence", () => {
    const cases: [Partial<CreateKeyForm>, string, RegExp][] = [
      [{ name: "x".repeat(101) }, "name", /^The name is longer than 100 characters\.$/],
      [{ purpose: "admin" as CreateKeyForm["purpose"] }, "purpose", /^Unknown purpose "admin"\.$/],
      [{ budget: "" }, "budget", /is not a USDC amount/],
      [{ budget: "0" }, "budget", /^The budget limit must be more than 0 USDC\.$/],
      [{ budget: "0.000000" }, "budget", /must be more than 0 USDC/],
      [{ budget: "1.0000001" }, "budget", /has more than 6 decimals/],
      [{ budget: "-5" }, "budget", /is not a USDC amount/],
      [{ budget: "1e6" }, "budget", /is not a USDC amount/],
      [{ expiresAt: "2031-02-30T12:00" }, "expiresAt", /^Enter the expiry as a UTC date and time/],
      [{ expiresAt: "2026-11-23T10:15" }, "expiresAt", /^The expiry must be in the future\.$/],
      [{ expiresAt: "2020-01-01T00:00" }, "expiresAt", /^The expiry must be in the future\.$/],
    ];
    for (const [over, field, message] of cases) {
      const result = createParamsOf(form(over), context);
      expect(result.ok, JSON.stringify(over)).toBe(false);
      if (!result.ok) {
        expect(result.field).toBe(field);
        expect(result.message).toMatch(message);
      }
    }
  });

  it("checks the fields in the form's order: the name before the budget", () => {
    expect(createParamsOf(form({ name: "x".repeat(101), budget: "0" }), context)).toMatchObject({ ok: false, field: "name" });
  });
});
