import { describe, expect, it } from "vitest";
import { NATIVE_CATALOG } from "../catalog/generated/native-catalog.js";
import { priceUsage } from "../metering/usage.js";
import { ESTIMATE_BITS_PER_SECOND } from "../providers/wav.js";
import { priceTranscription } from "./transcription.js";

const whisper = NATIVE_CATALOG.find((c) => c.modelId === "whisper-1")!;
const price = (seconds: number) => priceUsage(whisper, undefined, { seconds }, 100).finalAmount;
const heard = (durationSeconds: number, segments?: { start: number; end: number; text: string }[]) =>
  Object.assign({ text: "all of it", durationSeconds }, segments ? { segments } : {});

describe("priceTranscription", () => {
  it("prices files of a few bytes above 0 (lengths with many decimals are rounded up to the microsecond)", () => {
    for (const n of [1, 2, 3, 7, 10]) {
      const p = priceTranscription(whisper, new Uint8Array(n), 100);
      expect(p.quote.finalAmount, `${n} bytes`).toBeGreaterThan(0n);
      expect(p.bound!.finalAmount, `${n} bytes`).toBeGreaterThanOrEqual(p.quote.finalAmount);
    }
  });

  it("settles the quote when nothing (or nothing finite) was heard, and delivers the transcript whole", () => {
    for (const duration of [Number.NaN, 0, -5, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]) {
      const p = priceTranscription(whisper, new Uint8Array(16_000), 100);
      expect(p.meter(heard(duration), p.bound!.finalAmount)).toBe(p.quote);
      expect(p.deliver(heard(duration))).toEqual({ text: "all of it" });
    }
  });

  it("settles at most the bound, however long the upstream says it heard, and cuts the transcript there", () => {
    const p = priceTranscription(whisper, new Uint8Array(16_000), 100);
    expect(p.meter(heard(1e12), 10n ** 30n)).toEqual(p.bound);
    expect(p.deliver(heard(1e12))).toEqual({ text: "", cutAt: (16_000 * 8) / 6_000 });
  });

  it("a reservation of only the quote settles no more and cuts the transcript at the seconds it paid", () => {
    const p = priceTranscription(whisper, new Uint8Array(16_000), 100); // quoted 1 s, bounded at 21.3 s
    expect((16_000 * 8) / ESTIMATE_BITS_PER_SECOND).toBe(1);
    expect(p.meter(heard(30), p.quote.finalAmount).finalAmount).toBe(p.quote.finalAmount);
    const delivered = p.deliver(
      heard(30, [
        { start: 0, end: 1.5, text: " kept" },
        { start: 1.5, end: 30, text: " not paid" },
      ]),
    );
    expect(delivered.text).toBe("kept");
    expect(delivered.cutAt).toBeGreaterThanOrEqual(1);
    expect(delivered.cutAt).toBeLessThan(1.01);
  });

  it("bisects to the whole milliseconds a partial reservation pays, never above it", () => {
    const p = priceTranscription(whisper, new Uint8Array(160_000), 100); // quoted 10 s, bounded at 213 s
    for (const limit of [price(10), price(10) + 1n, price(17.5), price(99.999), price(150)]) {
      const settled = p.meter(heard(200), limit);
      expect(settled.finalAmount).toBeLessThanOrEqual(limit);
      expect(limit - settled.finalAmount).toBeLessThanOrEqual(price(0.002));
    }
  });
});
