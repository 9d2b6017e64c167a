/**
 * Token counting for chat quotes and for output the upstream did not report: `gpt-tokenizer`'s
 * o200k_base encoding (OpenAI's current models), pure JavaScript, loaded on the first chat call
 * (its rank table takes ~0.2 s to load, which no other route should pay). Special-token text such
 * as `<|endoftext|>` in a message is counted as plain text, never refused.
 *
 * On a card whose provider counts with o200k the quote adds a margin ({@link promptBound}); other
 * vendors' tokenizers count some text several times more, and get a bound of their own
 * (foreign-bound.ts). Settlement uses the upstream's own usage whenever it reports one.
 */

import { invalidRequest } from "../errors.js";
import { foreignAllowance, foreignPromptBound } from "./foreign-bound.js";

/** Counts the tokens of a text. */
export interface TokenCounter {
  count(text: string): number;
}

/**
 * Longest text, in characters (UTF-16 code units), that is tokenized: ~8 ms for prose on one core,
 * 0.15–0.4 s for random letters or random CJK, the slowest texts found (1–2 µs a UTF-8 byte), which
 * any caller can send before paying (so it is counted: `rateLimits.unpaidChatBytes`). A longer one
 * is counted as its UTF-8 byte length, a bound on the tokens of any byte-level BPE tokenizer, so a
 * huge prompt cannot hold the event loop for seconds.
 */
export const MAX_TOKENIZED_CHARS = 128 * 1024;

/** The UTF-8 length of `text` (a lone surrogate as the 3 bytes of U+FFFD), without encoding it. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // 4 bytes for 2 code units
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** Whether `count` counts `text` as its UTF-8 bytes rather than tokenizing it. */
export const byteCounted = (text: string): boolean => text.length > MAX_TOKENIZED_CHARS;

/**
 * The work `count` does on `text`, in UTF-8 bytes tokenized; a text counted as its bytes (a linear
 * scan, ~1/100 of the cost per byte) weighs 1/16 of its length.
 */
export function tokenizingCost(text: string): number {
  return byteCounted(text) ? Math.ceil(text.length / 16) : utf8Length(text);
}

/**
 * The longest run of non-whitespace, or of whitespace, tokenized whole. BPE over one long "word" is
 * quadratic in its length (256 Ki letters took ~56 s; 128 Ki spaces ~13 s, since o200k makes a
 * whitespace run one piece too): a longer run is counted in pieces of this size, which costs about
 * a microsecond a character and counts within a few per cent of the whole.
 */
export const MAX_RUN_CHARS = 128;
const LONG_RUN = new RegExp(`\\S{${MAX_RUN_CHARS + 1},}|\\s{${MAX_RUN_CHARS + 1},}`, "g");

/** `count` over `text`, its long runs of non-whitespace or of whitespace counted piece by piece (see {@link MAX_RUN_CHARS}). */
function countInPieces(text: string, count: (s: string) => number): number {
  let pieces = 0;
  const rest = text.replace(LONG_RUN, (run) => {
    for (let i = 0; i < run.length; i += MAX_RUN_CHARS) pieces += count(run.slice(i, i + MAX_RUN_CHARS));
    return " ";
  });
  return pieces + count(rest);
}

/**
 * `counter`, calling `charge` with the {@link tokenizingCost} of each text before it counts it:
 * `charge` may throw to refuse the work.
 */
export function chargedCounter(counter: TokenCounter, charge: (bytes: number) => void): TokenCounter {
  return {
    count(text) {
      charge(tokenizingCost(text));
      return counter.count(text);
    },
  };
}

let loading: Promise<TokenCounter> | undefined;
let loaded: TokenCounter | undefined;

/** The shared counter, loaded once on first use. */
export function tokenCounter(): Promise<TokenCounter> {
  loading ??= import("gpt-tokenizer/encoding/o200k_base").then((m) => {
    const plain = { disallowedSpecial: new Set<string>() };
    loaded = {
      count: (text: string) => {
        if (text.length === 0) return 0;
        return byteCounted(text) ? utf8Length(text) : countInPieces(text, (s) => m.countTokens(s, plain));
      },
    };
    return loaded;
  });
  return loading;
}

/** The shared counter when {@link tokenCounter} has loaded it, else undefined (and its loading starts). */
export function loadedTokenCounter(): TokenCounter | undefined {
  if (!loaded) void tokenCounter();
  return loaded;
}

/**
 * Tokens an image part of a message is quoted at on a card without `imageInputTokens`: above the
 * largest image of OpenAI's tile and patch models (1,445 for GPT-4o, 3,779 for GPT-4.1 nano) and
 * of Claude (~1,600), except GPT-4o mini's (48,169), whose card says so.
 */
export const IMAGE_PART_TOKENS = 4_096;
/** Framing tokens per message (role and separators) and per conversation, as OpenAI documents them. */
export const TOKENS_PER_MESSAGE = 4;
export const TOKENS_PER_CONVERSATION = 3;

/** The parts of a chat request that the model reads as input. */
export interface PromptParts {
  readonly messages: readonly unknown[];
  /** `tools`, `functions`, `response_format`… as sent: their JSON is counted. */
  readonly extras?: readonly unknown[];
  /** Tokens each image part counts as. @default IMAGE_PART_TOKENS */
  readonly imageTokens?: number;
}

/**
 * The prompt tokens of a chat request as OpenAI counts them for its own models: every string a
 * message carries (content text parts, name, tool calls and their arguments, tool results) plus the
 * JSON of tools and response formats, framing tokens per message, and `imageTokens` per image part
 * (image bytes are not text). Audio and file parts are counted by their JSON.
 */
export function countPrompt(counter: TokenCounter, parts: PromptParts): number {
  const { tokens, images } = countPromptParts(counter, parts);
  return tokens + images * (parts.imageTokens ?? IMAGE_PART_TOKENS);
}

/** How deep a prompt's JSON may nest (a tool's JSON schema needs a few levels); deeper is refused (400). */
export const MAX_DEPTH = 64;
const tooDeep = () => invalidRequest(`The request nests JSON more than ${MAX_DEPTH} levels deep.`);
function assertShallow(value: unknown, depth = 0): void {
  if (!value || typeof value !== "object") return;
  if (depth > MAX_DEPTH) throw tooDeep();
  for (const v of Array.isArray(value) ? value : Object.values(value)) assertShallow(v, depth + 1);
}

/**
 * {@link countPrompt} in its parts: the tokens of everything but images, the number of image parts,
 * and with `foreign`, the {@link foreignAllowance} of the same text (else 0).
 */
export function countPromptParts(
  counter: TokenCounter,
  parts: Omit<PromptParts, "imageTokens">,
  foreign = false,
): { tokens: number; images: number; allowance: number } {
  let text = "";
  let images = 0;
  const visit = (value: unknown, depth = 0): void => {
    if (typeof value === "string") text += `${value}\n`;
    else if (value && typeof value === "object") {
      if (depth > MAX_DEPTH) throw tooDeep();
      if (Array.isArray(value)) for (const v of value) visit(v, depth + 1);
      else for (const [k, v] of Object.entries(value)) if (k !== "role") visit(v, depth + 1);
    }
  };
  // Only a part of a message's content is an image: a `type` anywhere else is text like the rest.
  const visitPart = (part: unknown): void => {
    const type = (part as { type?: unknown } | null)?.type;
    if (type === "image_url" || type === "input_image") images += 1;
    else visit(part);
  };
  for (const message of parts.messages) {
    if (message && typeof message === "object" && !Array.isArray(message))
      for (const [k, v] of Object.entries(message)) {
        if (k === "role") continue;
        if (k === "content" && Array.isArray(v)) v.forEach(visitPart);
        else visit(v);
      }
    else visit(message);
    const role = (message as { role?: unknown } | null)?.role;
    if (typeof role === "string") text += `${role}\n`;
  }
  let extras = "";
  for (const extra of parts.extras ?? []) {
    if (extra === undefined) continue;
    assertShallow(extra);
    extras += JSON.stringify(extra);
  }
  const tokens = counter.count(text) + counter.count(extras) + parts.messages.length * TOKENS_PER_MESSAGE + TOKENS_PER_CONVERSATION;
  // A text counted as its bytes needs only what normalization (NFKC) may add: no byte-level tokenizer counts more.
  const allowance = (s: string) => (foreign ? foreignAllowance(s, byteCounted(s)) : 0);
  return { tokens, images, allowance: allowance(text) + allowance(extras) };
}

/**
 * The tokens of model output the gateway counts itself (a stream cut before its usage, an upstream
 * that reports none, a predicted output's reservation). Tokenized in slices of at most
 * {@link MAX_TOKENIZED_CHARS} characters, so that a long answer is never counted as its UTF-8 bytes
 * (a slice boundary may split one token: at most one more per slice); with `foreign` (a card whose
 * vendor tokenizes otherwise), at the bound a prompt of the same text gets, since that vendor bills
 * what its own tokenizer counts (metering/foreign-bound.ts).
 */
export function countOutput(counter: TokenCounter, text: string, foreign: boolean): number {
  let tokens = 0;
  for (let at = 0; at < text.length;) {
    let end = Math.min(text.length, at + MAX_TOKENIZED_CHARS);
    // Never between the two halves of a surrogate pair.
    if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
    tokens += counter.count(text.slice(at, end));
    at = end;
  }
  return foreign && tokens > 0 ? foreignPromptBound(tokens, foreignAllowance(text, false)) : tokens;
}

/** The prompt count the quote reserves for: the count plus 10 % and 16 tokens, for vendors whose tokenizers count more. */
export function promptBound(count: number): number {
  return count + Math.ceil(count / 10) + 16;
}
