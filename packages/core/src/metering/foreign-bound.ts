/**
 * The prompt bound of a model whose tokenizer the gateway does not have: every card without
 * `tokenizer: "o200k_base"` (Gemini, Claude, Llama, Mistral, Command, Nova…).
 *
 * The gateway counts with OpenAI's o200k_base. Other vendors' tokenizers count the same text
 * differently, and not by a constant factor: they split digits one by one where o200k groups
 * three, keep newlines and runs of one character apart where o200k merges them, and fall back to
 * bytes on scripts their vocabulary covers thinly (Gujarati, Kannada, Tamil, Khmer, Armenian,
 * Georgian: up to ~5× o200k's count). A flat margin either misses those or overprices English.
 * So the bound is {@link FOREIGN_FACTOR} × the o200k count, plus an allowance per character of each
 * of those kinds. The weights come from measuring the public tokenizers of Gemini (Gemma's),
 * Llama 3, Llama 2, Mistral (v1) and Claude (2) on real text in 60 languages, code, JSON and
 * adversarial text (docs/chat.md has the method and the figures); a script the measurement did not
 * cover is weighed at nearly its UTF-8 bytes, the most any byte-fallback tokenizer can count.
 */

/** The o200k count is multiplied by this: English, code and JSON count up to ~1.25×, European languages up to ~1.45×. */
export const FOREIGN_FACTOR = 1.5;

/** Weights are in twelfths of a token per character. */
const TWELFTHS = 12;
const DIGIT = 8;
const LINE_BREAK = 12;
const REPEAT = 1;
/** Non-ASCII ranges [first, last, twelfths per character] the measurement covered. */
const SCRIPTS: readonly (readonly [number, number, number])[] = [
  [0x0080, 0x036f, 6], // Latin-1, Latin Extended A/B, IPA, combining marks
  [0x0370, 0x03ff, 8], // Greek
  [0x0400, 0x052f, 3], // Cyrillic
  [0x0530, 0x058f, 19], // Armenian
  [0x0590, 0x08ff, 9], // Hebrew, Arabic, Syriac, Thaana
  [0x0900, 0x097f, 12], // Devanagari
  [0x0980, 0x0dff, 30], // Bengali, Gurmukhi, Gujarati, Oriya, Tamil, Telugu, Kannada, Malayalam, Sinhala
  [0x0e00, 0x0eff, 15], // Thai, Lao
  [0x0f00, 0x109f, 12], // Tibetan, Myanmar
  [0x10a0, 0x10ff, 18], // Georgian
  [0x1100, 0x11ff, 14], // Hangul Jamo
  [0x1780, 0x17ff, 27], // Khmer
  [0x1e00, 0x1eff, 16], // Latin Extended Additional (Vietnamese)
  [0x2e80, 0x9fff, 12], // CJK, kana (o200k has many as one token where others take two or three)
  [0xac00, 0xd7af, 14], // Hangul syllables
];
/** Any other character: of the Basic Multilingual Plane, and beyond it (emoji). */
const OTHER_BMP = 24;
const ASTRAL = 12;

function weightOf(cp: number): number {
  for (const [first, last, w] of SCRIPTS) if (cp >= first && cp <= last) return w;
  return cp > 0xffff ? ASTRAL : OTHER_BMP;
}

const utf8Bytes = (cp: number): number => (cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);

/**
 * What NFKC normalization (Claude's tokenizer applies it, others may) makes of a character, in
 * UTF-8 bytes, when that is more than the character's own: U+FDFA, one Arabic ligature, becomes 18
 * characters (33 bytes); "…" becomes "..." (3). 0 for any other character. Built on first use for
 * planes 0–2, the only ones with compatibility mappings (~190 Ki normalizations, ~30 ms once).
 */
let growth: Uint8Array | undefined;
const LAST_MAPPED = 0x2ffff;
function nfkcBytes(cp: number): number {
  if (cp > LAST_MAPPED) return 0;
  if (!growth) {
    growth = new Uint8Array(LAST_MAPPED + 1);
    for (let c = 0xa0; c <= LAST_MAPPED; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const ch = String.fromCodePoint(c);
      const normalized = ch.normalize("NFKC");
      if (normalized === ch) continue;
      let bytes = 0;
      for (const n of normalized) bytes += utf8Bytes(n.codePointAt(0)!);
      if (bytes > utf8Bytes(c)) growth[c] = Math.min(255, bytes);
    }
  }
  return growth[cp]!;
}

/**
 * The tokens beyond {@link FOREIGN_FACTOR} × the o200k count that `text` may cost another vendor's
 * tokenizer; `byteCounted` (the text was counted as its UTF-8 bytes, already a bound for every
 * byte-level tokenizer): only what NFKC normalization may add beyond those bytes.
 */
export function foreignAllowance(text: string, byteCounted = false): number {
  let twelfths = 0;
  let prev = -1;
  for (let i = 0; i < text.length; i++) {
    let cp = text.charCodeAt(i);
    if (cp >= 0xd800 && cp <= 0xdbff) {
      cp = text.codePointAt(i)!;
      if (cp > 0xffff) i++;
    }
    if (cp < 0x80) {
      if (byteCounted) continue;
      if (cp >= 0x30 && cp <= 0x39) twelfths += DIGIT;
      else if (cp === 0x0a || cp === 0x09 || cp === 0x0d) twelfths += LINE_BREAK;
      else if (cp === prev) twelfths += REPEAT;
    } else {
      // A character NFKC expands may cost up to the bytes it becomes, one token each; a repeated one
      // its bytes too (o200k merges runs of one CJK character that others count one by one).
      const grown = cp >= 0xa0 ? nfkcBytes(cp) : 0;
      if (byteCounted) twelfths += grown === 0 ? 0 : (grown - utf8Bytes(cp)) * TWELFTHS;
      else twelfths += Math.max(weightOf(cp), grown * TWELFTHS, cp === prev ? utf8Bytes(cp) * TWELFTHS : 0);
    }
    prev = cp;
  }
  return Math.ceil(twelfths / TWELFTHS);
}

/** The prompt bound on a foreign-tokenizer card: {@link FOREIGN_FACTOR} × `count` + 16 + `allowance`. */
export function foreignPromptBound(count: number, allowance: number): number {
  return Math.ceil(count * FOREIGN_FACTOR) + 16 + allowance;
}
