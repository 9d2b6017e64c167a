import { describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createMemoryStore } from "../store/memory.js";
import { createHeardFiles, heardFileId, type HeardFile, type HeardFilesOptions } from "./heard-files.js";

/** An entry whose cut payment paid `paid`, with a transcript of `text`. */
const entry = (text: string, paid = 1n): HeardFile => ({
  rest: {
    lineItems: [{ key: "second", unit: "second", quantity: "26.17", unitPriceUsd: "0.0001", amountWei: "2617" }],
    providerAmount: 2617n,
    platformFee: 10n,
    finalAmount: 2627n,
  },
  paid,
  result: { text, durationSeconds: 30, segments: [{ start: 0, end: 30, text }] },
});
const warnings: unknown[] = [];
const make = (options: Partial<HeardFilesOptions> = {}) => {
  const clock = createManualClock();
  const heard = createHeardFiles(
    Object.assign({ store: createMemoryStore(), clock, logger: { warn: (o: unknown) => void warnings.push(o) }, ttlMs: 1_000 }, options),
  );
  return { clock, heard };
};

describe("heard files", () => {
  it("serves an entry, amounts and transcript as they were, until its TTL, and nothing after", async () => {
    const { clock, heard } = make();
    await heard.remember("a", entry("tone", (1n << 70n) + 1n));
    clock.advance(999);
    expect(await heard.get("a")).toEqual(Object.assign({ version: expect.stringMatching(/^[0-9a-f]{32}$/) }, entry("tone", (1n << 70n) + 1n)));
    clock.advance(1);
    expect(await heard.get("a")).toBeUndefined();
  });

  it("is taken once: only by a call holding the same entry, while it is fresh; a put back keeps a newer entry", async () => {
    const { clock, heard } = make();
    await heard.remember("a", entry("first"));
    const seen = (await heard.get("a"))!;
    expect(await heard.take("a", seen)).toBe(true);
    expect(await heard.take("a", seen)).toBe(false); // a concurrent call that read it too
    expect(await heard.get("a")).toBeUndefined();
    // A newer entry under the same id is not taken by a call that read an older one, nor replaced by its put back.
    await heard.remember("a", entry("newer"));
    expect(await heard.take("a", seen)).toBe(false);
    await heard.putBack("a", seen);
    expect((await heard.get("a"))?.result.text).toBe("newer");
    const newer = (await heard.get("a"))!;
    clock.advance(1_000);
    expect(await heard.take("a", newer)).toBe(false);
    // Put back once the slot is free: served again, for a fresh TTL.
    await heard.putBack("a", seen);
    expect((await heard.get("a"))?.result.text).toBe("first");
  });

  it("does not keep a transcript over maxChars; a store that fails is logged, never thrown", async () => {
    const { heard } = make({ maxChars: 500 });
    await heard.remember("d", entry("w".repeat(400))); // 400 + 400 + 32
    expect(await heard.get("d")).toBeUndefined();
    const store = createMemoryStore();
    await store.close();
    const failing = createHeardFiles({
      store: Object.assign(store, { putTranscriptRest: () => Promise.reject(new Error("disk full")) }),
      clock: createManualClock(),
      logger: { warn: (o: unknown) => void warnings.push(o) },
    });
    warnings.length = 0;
    await failing.remember("x", entry("x"));
    expect(warnings).toEqual([{ err: new Error("disk full") }]);
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
