import { describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createAnonymousRatings, RATINGS_PER_CLIENT_DAY } from "./anonymous-ratings.js";

const target = (id: string) => ({ type: "model", id });
const refusal = (fn: () => void) => {
  try {
    fn();
    return "admitted";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
};

describe("the anonymous rating allowance", () => {
  it("rating other targets never resets a target's allowance: a full map refuses instead of forgetting", () => {
    const clock = createManualClock(Date.UTC(2026, 0, 1));
    const ratings = createAnonymousRatings(clock, 1, 10);
    ratings.admit("1.2.3.4", target("victim"));
    expect(refusal(() => ratings.admit("1.2.3.4", target("victim")))).toBe("rate_limited");
    const junk = Array.from({ length: 20 }, (_, i) => refusal(() => ratings.admit("1.2.3.4", target(`junk-${i}`))));
    expect(junk.filter((r) => r === "admitted")).toHaveLength(9); // the map holds 10 windows of each kind
    expect(refusal(() => ratings.admit("1.2.3.4", target("victim")))).toBe("rate_limited");
    expect(refusal(() => ratings.admit("5.6.7.8", target("victim")))).toBe("rate_limited"); // full: refused, not evicted
    // A day later every window has lapsed, and the client rates the target again.
    clock.advance(86_400_000);
    expect(refusal(() => ratings.admit("1.2.3.4", target("victim")))).toBe("admitted");
  });

  it("one client gives at most 100 anonymous ratings a day in all, and opens no window past them", () => {
    const clock = createManualClock(Date.UTC(2026, 0, 1));
    const ratings = createAnonymousRatings(clock, 1, 1_000);
    const results = Array.from({ length: RATINGS_PER_CLIENT_DAY + 50 }, (_, i) => refusal(() => ratings.admit("9.9.9.9", target(`t${i}`))));
    expect(results.filter((r) => r === "admitted")).toHaveLength(RATINGS_PER_CLIENT_DAY);
    // Another client still has room: the refused ratings took none.
    const others = Array.from({ length: 800 }, (_, i) => refusal(() => ratings.admit(`10.0.${i >> 8}.${i & 255}`, target("x"))));
    expect(others.every((r) => r === "admitted")).toBe(true);
  });

  it("0 ratings a day refuses every anonymous rating", () => {
    const ratings = createAnonymousRatings(createManualClock(0), 0);
    expect(refusal(() => ratings.admit("1.2.3.4", target("a")))).toBe("rate_limited");
  });
});
