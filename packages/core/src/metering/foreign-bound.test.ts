import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { foreignAllowance, foreignPromptBound } from "./foreign-bound.js";
import { promptBound, tokenCounter } from "./tokens.js";
import { NATIVE_CATALOG } from "../catalog/generated/native-catalog.js";
import { quoteChat } from "../chat/quote.js";

const require = createRequire(import.meta.url);
const SAMPLE_CHARS = 6_000;

/** A deterministic pseudo-random source, so the adversarial samples are the same on every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1_103_515_245 + 12_345) & 0x7fffffff) / 0x7fffffff;
}
const fill = (make: () => string) => {
  let s = "";
  while (s.length < SAMPLE_CHARS) s += make();
  return s.slice(0, SAMPLE_CHARS);
};

/** Real text: this repository's docs and code, and zod's error messages in its ~60 languages; then adversarial text. */
function corpus(): Record<string, string> {
  const root = path.resolve(__dirname, "../../../..");
  const samples: Record<string, string> = {
    docs: readFileSync(path.join(root, "docs/chat.md"), "utf8").slice(0, SAMPLE_CHARS),
    code: readFileSync(path.join(__dirname, "tokens.ts"), "utf8").slice(0, SAMPLE_CHARS),
    json: JSON.stringify(JSON.parse(readFileSync(path.join(root, "docs/openapi.json"), "utf8")), null, 2).slice(0, SAMPLE_CHARS),
  };
  const locales = path.join(path.dirname(require.resolve("zod/package.json")), "v4/locales");
  for (const file of readdirSync(locales).filter((f) => f.endsWith(".js") && f !== "index.js")) {
    const source = readFileSync(path.join(locales, file), "utf8");
    const strings = [...source.matchAll(/(["`'])((?:(?!\1).)*[^\x00-\x7f](?:(?!\1).)*)\1/g)].map((m) => m[2]).join(" ");
    if (strings.length > 300) samples[`lang-${file.replace(".js", "")}`] = fill(() => `${strings} `);
  }
  const r = random(7);
  const pick = (chars: string) => chars[Math.floor(r() * chars.length)]!;
  const from = (first: number, size: number) => () => String.fromCodePoint(first + Math.floor(r() * size));
  Object.assign(samples, {
    digits: fill(() => pick("0123456789")),
    "digits-csv": fill(() => `${fill(() => pick("0123456789")).slice(0, 1 + Math.floor(r() * 9))},`),
    spaces: " ".repeat(SAMPLE_CHARS),
    newlines: fill(() => "x" + "\n".repeat(1 + Math.floor(r() * 20))),
    tabs: fill(() => "\t".repeat(1 + Math.floor(r() * 10)) + "y\n"),
    "same-letter": "a".repeat(SAMPLE_CHARS),
    "same-symbol": "=".repeat(SAMPLE_CHARS),
    letters: fill(() => pick("abcdefghijklmnopqrstuvwxyz")),
    base64: fill(() => pick("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")),
    hex: fill(() => pick("0123456789abcdef")),
    punctuation: fill(() => pick("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")),
    emoji: fill(from(0x1f300, 0x2ff)),
    cjk: fill(from(0x4e00, 0x5000)),
    malayalam: fill(from(0x0d00, 0x7f)),
    thai: fill(from(0x0e01, 0x5a)),
    fullwidth: fill(from(0xff01, 0x5e)),
    "zero-width": fill(() => pick("\u200b\u200d\u200c\ufeff\u2060")),
    // One CJK character repeated: o200k merges pairs of it, Llama 3 and Claude take two or three tokens each.
    "cjk-repeated": "媽".repeat(SAMPLE_CHARS),
    "hangul-repeated": "뷁".repeat(SAMPLE_CHARS),
    "kana-repeated": "ヴ".repeat(SAMPLE_CHARS),
    // Characters NFKC normalization expands (Claude's tokenizer normalizes): Arabic ligatures, squared CJK words, ellipses.
    "nfkc-ligatures": fill(() => pick("\ufdfa\ufdfb\ufdfd\ufdf2")),
    "nfkc-squared": fill(from(0x3300, 0x100)),
    "nfkc-mixed": fill(() => pick("\u2026\u2025\ufb01\u00bc\u2122\u2474\u3232\u33ff\ud83c\udd10")),
  });
  return samples;
}

describe("foreign prompt bound", () => {
  it("weighs the characters other tokenizers count apart: digits, line breaks, repeats, and non-Latin scripts", () => {
    expect(foreignAllowance("The quick brown fox jumps over the lazy dog.")).toBe(0);
    expect(foreignAllowance("123456789")).toBe(6); // 8/12 each
    expect(foreignAllowance("a\n\n\tb")).toBe(3);
    expect(foreignAllowance("=".repeat(13))).toBe(1); // 1/12 per repeat
    expect(foreignAllowance("ગુજરાતી")).toBe(18); // Gujarati: 30/12 a character
    expect(foreignAllowance("中文")).toBe(2);
    expect(foreignAllowance("媽媽媽")).toBe(7); // 1, then 3 bytes for each repeat
    // A pair of surrogates is one character, weighed once; a lone surrogate is weighed as any other BMP code unit.
    expect(foreignAllowance("😀😁😂")).toBe(3);
    expect(foreignAllowance("😀😀😀")).toBe(9); // a repeat weighs its 4 bytes
    expect(foreignAllowance("\ud83d")).toBe(2);
    // NFKC turns U+FDFA into 18 characters, Arabic letters and spaces (33 bytes): weighed at those bytes; counted as bytes already (3), at what it adds.
    expect(foreignAllowance("\ufdfa")).toBe(33);
    expect(foreignAllowance("\ufdfa", true)).toBe(30);
    expect(foreignAllowance("abc 123 中文", true)).toBe(0);
    expect(foreignPromptBound(100, 7)).toBe(173);
  });

  // Llama 3's tokenizer (Groq, Together) and Anthropic's public one (Claude 2: the one Anthropic
  // has published) are on the npm registry; the docs list the other references, which are too
  // large for CI (docs/chat.md).
  it("covers what Llama 3's and Claude's tokenizers count, on real text in ~60 languages and on adversarial text", async () => {
    const llama3 = (await import("llama3-tokenizer-js")).default as { encode(text: string, options: { bos: boolean; eos: boolean }): number[] };
    const claude = require("@anthropic-ai/tokenizer") as { countTokens(text: string): number };
    const counter = await tokenCounter();
    const vendors = { llama3: (t: string) => llama3.encode(t, { bos: false, eos: false }).length, claude: (t: string) => claude.countTokens(t) };
    const samples = corpus();
    expect(Object.keys(samples).length).toBeGreaterThan(70);
    const under: string[] = [];
    let tightest = Infinity;
    for (const [name, text] of Object.entries(samples)) {
      const bound = foreignPromptBound(counter.count(text), foreignAllowance(text));
      for (const [vendor, count] of Object.entries(vendors)) {
        const theirs = count(text);
        tightest = Math.min(tightest, bound / theirs);
        if (bound < theirs) under.push(`${name} on ${vendor}: bound ${bound} < ${theirs}`);
      }
    }
    expect(under).toEqual([]);
    expect(tightest).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it("quotes a card with tokenizer o200k_base at its count + 10 %, and any other at the foreign bound", async () => {
    const counter = await tokenCounter();
    const card = (id: string, provider: string) => NATIVE_CATALOG.find((c) => c.modelId === id && c.provider === provider)!;
    const own = NATIVE_CATALOG.filter((c) => c.tokenizer === "o200k_base").map((c) => `${c.provider}/${c.modelId}`);
    expect(own).toHaveLength(14);
    expect(own).toEqual(expect.arrayContaining(["openai/gpt-4o", "openai/o3", "groq/openai/gpt-oss-20b", "together/openai/gpt-oss-120b"]));
    const messages = [{ role: "user", content: `Sum these: ${"4096 ".repeat(200)}\nટોટલ કેટલો છે?` }];
    const quote = (c: ReturnType<typeof card>) => quoteChat(c, counter, { messages, max_tokens: 1, extras: [] }, 0);
    const openai = quote(card("gpt-4o", "openai"));
    expect(openai.promptBound).toBe(promptBound(openai.promptTokens));
    const gemini = quote(card("gemini-2.5-flash", "google"));
    expect(gemini.textTokens).toBe(openai.textTokens);
    const text = `${messages[0]!.content}\nuser\n`;
    expect(gemini.promptBound).toBe(foreignPromptBound(gemini.textTokens, foreignAllowance(text) + foreignAllowance("")));
    // 800 digits (Gemini counts each) and 14 Gujarati letters: above one token per digit.
    expect(gemini.promptBound).toBeGreaterThan(800 + 14);
    expect(gemini.promptBound).toBeGreaterThan(openai.promptBound * 2);
  });
});
