import { describe, expect, it } from "vitest";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import {
  countPrompt,
  IMAGE_PART_TOKENS,
  MAX_RUN_CHARS,
  MAX_TOKENIZED_CHARS,
  tokenizingCost,
  utf8Length,
  promptBound,
  tokenCounter,
  TOKENS_PER_CONVERSATION,
  TOKENS_PER_MESSAGE,
} from "./tokens.js";

describe("token counting", () => {
  it("counts with o200k_base; special-token text is plain text, never refused", async () => {
    const counter = await tokenCounter();
    expect(counter.count("")).toBe(0);
    expect(counter.count("Hello world")).toBe(2);
    expect(counter.count("<|endoftext|>")).toBeGreaterThan(1);
  });

  it("counts a long run without whitespace piece by piece (BPE over one long word is quadratic: 256 Ki letters took ~56 s)", async () => {
    const counter = await tokenCounter();
    let seed = 7;
    const letters = Array.from({ length: 100_000 }, () => String.fromCharCode(97 + ((seed = (seed * 48271) % 2147483647) % 26))).join("");
    const pieces = Array.from({ length: Math.ceil(letters.length / MAX_RUN_CHARS) }, (_, i) => letters.slice(i * MAX_RUN_CHARS, (i + 1) * MAX_RUN_CHARS));
    const expected = pieces.reduce((n, piece) => n + countTokens(piece), 0) + countTokens("say   twice");
    expect(counter.count(`say ${letters} twice`)).toBe(expected);
    // Within a few per cent of the whole (checked on a run short enough to count whole).
    const short = letters.slice(0, 4_000);
    expect(Math.abs(counter.count(short) - countTokens(short)) / countTokens(short)).toBeLessThan(0.03);
  });

  it("counts a long run of whitespace piece by piece too (o200k makes one piece of it: 128 Ki spaces took ~13 s whole)", async () => {
    const counter = await tokenCounter();
    const run = " \t\u3000".repeat(10_000);
    const pieces = Array.from({ length: Math.ceil(run.length / MAX_RUN_CHARS) }, (_, i) => run.slice(i * MAX_RUN_CHARS, (i + 1) * MAX_RUN_CHARS));
    expect(counter.count(`a${run}b`)).toBe(pieces.reduce((n, piece) => n + countTokens(piece), 0) + countTokens("a b"));
  });

  it("counts a text past the tokenized limit as its UTF-8 bytes (a bound, computed in linear time), and weighs the work", async () => {
    const counter = await tokenCounter();
    const long = "é".repeat(MAX_TOKENIZED_CHARS + 1);
    expect(counter.count(long)).toBe(2 * (MAX_TOKENIZED_CHARS + 1));
    // The work: the UTF-8 bytes tokenized, or 1/16 of the length of a text counted as bytes.
    expect(tokenizingCost("中".repeat(1000))).toBe(3000);
    expect(tokenizingCost(long)).toBe(Math.ceil((MAX_TOKENIZED_CHARS + 1) / 16));
    expect(["", "a", "é", "中", "😀", "\ud83d", "a😀é"].map(utf8Length)).toEqual(
      ["", "a", "é", "中", "😀", "\ud83d", "a😀é"].map((t) => new TextEncoder().encode(t).length),
    );
  });

  it("counts a prompt: message strings and roles, tool JSON, framing, and a fixed amount per image part", async () => {
    const counter = await tokenCounter();
    const messages = [
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        ],
      },
    ];
    const tools = [{ type: "function", function: { name: "f", parameters: {} } }];
    const text = counter.count("Be brief.\nsystem\ntext\nWhat is this?\nuser\n");
    expect(countPrompt(counter, { messages, extras: [tools, undefined] })).toBe(
      text + counter.count(JSON.stringify(tools)) + IMAGE_PART_TOKENS + 2 * TOKENS_PER_MESSAGE + TOKENS_PER_CONVERSATION,
    );
    // A card's own bound per image replaces the default, for each image part (input_image too).
    const two = [
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "u" } },
          { type: "input_image", image_url: "u" },
        ],
      },
    ];
    const framing = counter.count("user\n") + TOKENS_PER_MESSAGE + TOKENS_PER_CONVERSATION;
    expect(countPrompt(counter, { messages: two, imageTokens: 48_169 })).toBe(2 * 48_169 + framing);
    expect(countPrompt(counter, { messages: two })).toBe(2 * IMAGE_PART_TOKENS + framing);
    // Only a content part is an image: a message that calls itself one is counted as the text it carries.
    const disguised = [{ role: "user", type: "image_url", content: "word ".repeat(2_000) }];
    expect(countPrompt(counter, { messages: disguised })).toBe(
      counter.count(`image_url\n${"word ".repeat(2_000)}\nuser\n`) + TOKENS_PER_MESSAGE + TOKENS_PER_CONVERSATION,
    );
    expect(promptBound(100)).toBe(126);
  });
});
