import { describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createHeardFiles, heardFileId } from "./heard-files.js";

const rest = (finalAmount: bigint) => ({ lineItems: [], providerAmount: finalAmount, platformFee: 0n, finalAmount });

const result = (text: string) => ({ text, durationSeconds: 30, segments: [{ start: 0, end: 30, text }] });

describe("heard files", () => {
  it("serves an entry until its TTL, and nothing after", () => {
    const clock = createManualClock();
    const heard = createHeardFiles({ clock, ttlMs: 1_000 });
    heard.remember("a", { rest: rest(30n), result: result("tone") });
    clock.advance(999);
    expect(heard.get("a")).toMatchObject({ rest: { finalAmount: 30n }, result: { text: "tone" } });
    clock.advance(1);
    expect(heard.get("a")).toBeUndefined();
    expect(heard.size).toBe(0);
    heard.remember("b", { rest: rest(1n), result: result("taken") });
    heard.forget("b");
    expect(heard.get("b")).toBeUndefined();
  });

  it("drops the oldest entries beyond its entry bound and its transcript bound", () => {
    const clock = createManualClock();
    const byCount = createHeardFiles({ clock, maxEntries: 2 });
    for (const id of ["a", "b", "c"]) byCount.remember(id, { rest: rest(1n), result: result(id) });
    expect([byCount.get("a"), byCount.get("b")?.result.text, byCount.get("c")?.result.text]).toEqual([undefined, "b", "c"]);
    // Each entry counts its text and its segments' texts (and 32 per segment): 100 + 100 + 32.
    const byChars = createHeardFiles({ clock, maxChars: 500 });
    byChars.remember("a", { rest: rest(1n), result: result("x".repeat(100)) });
    byChars.remember("b", { rest: rest(1n), result: result("y".repeat(100)) });
    byChars.remember("c", { rest: rest(1n), result: result("z".repeat(100)) });
    expect([byChars.get("a"), byChars.get("b")?.rest.finalAmount, byChars.get("c")?.rest.finalAmount]).toEqual([undefined, 1n, 1n]);
    // One transcript larger than the whole bound is not kept at all.
    byChars.remember("d", { rest: rest(1n), result: result("w".repeat(400)) });
    expect(byChars.get("d")).toBeUndefined();
    expect(byChars.size).toBe(2);
  });

  it("names a request by its card, file name and type, language, prompt and file bytes", () => {
    const file = new Uint8Array([1, 2, 3]);
    const id = heardFileId({ card: "openai:whisper-1", file });
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(heardFileId({ card: "openai:whisper-1", file: new Uint8Array([1, 2, 3]) })).toBe(id);
    expect(
      new Set([
        id,
        heardFileId({ card: "openai:whisper-1", file: new Uint8Array([1, 2, 4]) }),
        heardFileId({ card: "openai:gpt-4o-transcribe", file }),
        heardFileId({ card: "openai:whisper-1", file, language: "en" }),
        heardFileId({ card: "openai:whisper-1", file, prompt: "en" }),
        heardFileId({ card: "openai:whisper-1", file, filename: "en" }),
        heardFileId({ card: "openai:whisper-1", file, mime: "audio/ogg" }),
      ]).size,
    ).toBe(7);
  });
});
