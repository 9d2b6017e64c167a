/**
 * A look at a JSON body's shape before it is parsed. `JSON.parse` pays far more for nesting and
 * for huge objects than for their bytes (measured on Node 20: a 1 MiB body nested 500,000 levels
 * deep ~100 ms, one object of 60,000 keys ~20 ms and as much again to validate, a flat 1 MiB
 * string ~1 ms), so one cheap unauthenticated request could take a core for a tenth of a second.
 * No request of the API nests deeper than a few dozen levels or holds an object of a thousand keys.
 */
import { invalidRequest } from "../errors.js";

/** How deep a request body may nest. */
export const MAX_BODY_DEPTH = 128;
/** How many keys one object of a request body may hold. */
export const MAX_OBJECT_KEYS = 1000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;

/**
 * Refuses (400 `invalid_request`) a JSON text that nests deeper than {@link MAX_BODY_DEPTH} or has
 * an object with more than {@link MAX_OBJECT_KEYS} keys, in one pass over its characters (strings
 * skipped, escapes honoured). Says nothing about its validity: `JSON.parse` does that after.
 */
export function assertJsonShape(text: string): void {
  // keys[d]: the keys seen so far in the object open at depth d (arrays count nothing).
  const keys = new Uint16Array(MAX_BODY_DEPTH + 1);
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > MAX_BODY_DEPTH) throw invalidRequest(`The body nests JSON more than ${MAX_BODY_DEPTH} levels deep.`);
      keys[depth] = 0;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (c === COLON && ++keys[depth]! > MAX_OBJECT_KEYS) {
      throw invalidRequest(`The body has an object with more than ${MAX_OBJECT_KEYS} keys.`);
    }
  }
}
