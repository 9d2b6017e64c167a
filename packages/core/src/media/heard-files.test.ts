import { describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createHeardFiles, heardFileId, type HeardFile } from "./heard-files.js";

/** An entry whose cut payment paid `paid`, with a transcript of `text`. */
const entry = (text: string, paid = 1n): HeardFile => ({
  rest: { lineItems: [], providerAmount: 10n, platformFee: 0n, finalAmount: 10n },
  paid,
  result: { text, durationSeconds: 30, segments: [{ start: 0, end: 30, text }] },
});

describe("heard files", () => {
  it("serves an entry until its TTL, and nothing after", () => {
    const clock = createManualClock();
    const heard = createHeardFiles({ clock, ttlMs: 1_000 });
    heard.remember("a", entry("tone"));
    clock.advance(999);
    expect(heard.get("a")).toMatchObject({ paid: 1n, result: { text: "tone" } });
    clock.advance(1);
    expect(heard.get("a")).toBeUndefined();
    expect(heard.size).toBe(0);
  });

  it("is taken once: only by a call holding the same entry, while it is fresh", () => {
    const clock = createManualClock();
    const heard = createHeardFiles({ clock, ttlMs: 1_000 });
    const first = entry("first");
    heard.remember("a", first);
    const seen = heard.get("a")!;
    expect(heard.take("a", seen)).toBe(true);
    expect(heard.take("a", seen)).toBe(false); // a concurrent call that read it too
    expect(heard.get("a")).toBeUndefined();
    // A newer entry under the same id is not taken by a call that read an older one.
    heard.remember("a", entry("newer"));
    expect(heard.take("a", first)).toBe(false);
    expect(heard.get("a")?.result.text).toBe("newer");
    clock.advance(1_000);
    expect(heard.take("a", heard.get("a") ?? first)).toBe(false);
  });

  it("beyond its bounds drops the entries that paid least, the oldest of equals", () => {
    const clock = createManualClock();
    const byCount = createHeardFiles({ clock, maxEntries: 2 });
    byCount.remember("rich", entry("rich", 100n));
    for (const id of ["a", "b", "c"]) byCount.remember(id, entry(id));
    expect([byCount.get("rich")?.paid, byCount.get("a"), byCount.get("b"), byCount.get("c")?.result.text]).toEqual([100n, undefined, undefined, "c"]);
    // Each entry counts its text and its segments' texts (and 32 per segment): 100 + 100 + 32.
    const byChars = createHeardFiles({ clock, maxChars: 500 });
    byChars.remember("a", entry("x".repeat(100)));
    byChars.remember("b", entry("y".repeat(100)));
    byChars.remember("c", entry("z".repeat(100)));
    expect([byChars.get("a"), byChars.get("b")?.paid, byChars.get("c")?.paid]).toEqual([undefined, 1n, 1n]);
    // One transcript larger than the whole bound is not kept at all.
    byChars.remember("d", entry("w".repeat(400)));
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
