import { ConflictError } from "@tollgate/client";
import { describe, expect, it } from "vitest";
import type { GovernedKey } from "./key-admin";
import { formOf, formatModelCaps, keyUpdateOf, parseModelCaps, parseModelList, updateErrorHint, type KeyForm } from "./key-form";

const key = (over: Partial<GovernedKey> = {}): GovernedKey => ({
  keyId: "key_1",
  name: "Research agent",
  purpose: "api",
  chainId: 8453,
  budgetLimit: "25000000",
  budgetUsed: "1250000",
  budgetReserved: "500000",
  budgetRemaining: "23250000",
  status: "active",
  createdAt: 0,
  expiresAt: 1,
  ...over,
});

describe("parseModelList", () => {
  it("splits on commas and new lines, trims, drops blanks and repeats", () => {
    expect(parseModelList(" gpt-4o, openai/*\n\nclaude-sonnet-4-5 ,gpt-4o")).toEqual(["gpt-4o", "openai/*", "claude-sonnet-4-5"]);
    expect(parseModelList(" \n , ")).toBeNull();
  });
});

describe("parseModelCaps", () => {
  it("reads one pattern = USDC amount per line, splitting at the last =", () => {
    expect(parseModelCaps("openai/* = 2.5\n\n amazon.nova-lite-v1:0=1,000")).toEqual({ "openai/*": "2500000", "amazon.nova-lite-v1:0": "1000000000" });
    expect(parseModelCaps("  \n")).toBeNull();
  });

  it("names the line at fault", () => {
    expect(() => parseModelCaps("openai/* = 1\ngpt-4o")).toThrow(/^Line 2: /);
    expect(() => parseModelCaps("= 1")).toThrow(/^Line 1: /);
    expect(() => parseModelCaps("gpt-4o = 1.0000001")).toThrow(/^Line 1: .*decimals/);
    expect(() => parseModelCaps("gpt-4o = 1\ngpt-4o = 2")).toThrow(/^Line 2: gpt-4o has a cap already/);
  });

  it("round-trips what formatModelCaps shows", () => {
    const caps = { "openai/*": { limit: "2500000" }, "gpt-4o": { limit: "1234567890" } };
    expect(formatModelCaps(caps)).toBe("openai/* = 2.500000\ngpt-4o = 1,234.567890");
    expect(parseModelCaps(formatModelCaps(caps))).toEqual({ "openai/*": "2500000", "gpt-4o": "1234567890" });
  });
});

describe("keyUpdateOf", () => {
  const edit = (k: GovernedKey, over: Partial<KeyForm>) => keyUpdateOf(k, { ...formOf(k), ...over });

  it("sends nothing when nothing changed", () => {
    const governed = key({
      budgetPeriod: "weekly",
      models: ["openai/*"],
      modelBudgets: { "openai/*": { limit: "1000000", used: "5", reserved: "0", remaining: "999995" } },
    });
    expect(keyUpdateOf(governed, formOf(governed))).toEqual({ ok: true, update: {} });
    // Formatting differences are not changes.
    expect(edit(governed, { budgetLimit: "25", modelBudgets: "openai/* = 1.0" })).toEqual({ ok: true, update: {} });
  });

  it("sends only the changed fields, amounts as atomic strings", () => {
    expect(edit(key(), { budgetLimit: "20", budgetPeriod: "weekly" })).toEqual({ ok: true, update: { budgetLimit: "20000000", budgetPeriod: "weekly" } });
    expect(edit(key(), { models: "openai/*, claude-sonnet-4-5", modelBudgets: "openai/* = 2.5" })).toEqual({
      ok: true,
      update: { models: ["openai/*", "claude-sonnet-4-5"], modelBudgets: { "openai/*": "2500000" } },
    });
  });

  it("clears with null: name, period, models and caps", () => {
    const governed = key({ budgetPeriod: "daily", models: ["gpt-4o"], modelBudgets: { "gpt-4o": { limit: "1", used: "0", reserved: "0", remaining: "1" } } });
    expect(edit(governed, { name: " ", budgetPeriod: "", models: "", modelBudgets: "" })).toEqual({
      ok: true,
      update: { name: null, budgetPeriod: null, models: null, modelBudgets: null },
    });
  });

  it("points at the field in error", () => {
    expect(edit(key(), { budgetLimit: "1.5 USDC" })).toMatchObject({ ok: false, field: "budgetLimit" });
    expect(edit(key(), { budgetLimit: "0" })).toMatchObject({ ok: false, field: "budgetLimit", message: expect.stringMatching(/more than 0/) });
    expect(edit(key(), { modelBudgets: "gpt-4o" })).toMatchObject({ ok: false, field: "modelBudgets" });
    expect(edit(key(), { name: "x".repeat(101) })).toMatchObject({ ok: false, field: "name" });
  });
});

describe("updateErrorHint", () => {
  it("explains limit_below_committed in USDC", () => {
    const error = new ConflictError("409 limit_below_committed: …", {
      status: 409,
      code: "limit_below_committed",
      details: { budgetUsed: "1250000", budgetReserved: "500000" },
    });
    expect(updateErrorHint(error)).toBe(
      "In its current window the key has used 1.250000 and reserved 0.500000 USDC, so the limit must be at least 1.750000 USDC.",
    );
  });

  it("adds nothing to other errors", () => {
    expect(updateErrorHint(new ConflictError("409 other", { status: 409, code: "invalid_state" }))).toBeUndefined();
    expect(updateErrorHint(new Error("boom"))).toBeUndefined();
  });
});
