/**
 * The rest of x402 transcriptions, remembered briefly (docs/media.md "x402: a file longer than its
 * quote"). An `exact` payment is fixed before anything decodes the file, from an estimate of its
 * length; when the upstream heard more than it pays for, the payment settles, the transcript is cut
 * to the seconds it paid for, and the price of the seconds heard beyond them (the rest) and the
 * whole transcript are kept here. The same request sent again with x402 is quoted the rest and, once
 * that is paid, answered the whole transcript without a second upstream call; the entry is then
 * gone.
 *
 * In this process's memory: bounded in entries and in transcript characters (the entries whose
 * payment paid least are dropped first), each kept for `ttlMs`. With several instances, a request
 * that reaches another instance is a new call there.
 */
import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";
import type { Priced } from "../metering/pricing.js";
import type { TranscriptionResult } from "../providers/types.js";
import { sha256Hex, sha256BytesHex } from "../sha256.js";

/** The unpaid rest of one transcription. */
export interface HeardFile {
  /** The price of the seconds heard beyond those paid for. */
  readonly rest: Priced;
  /** What the payment that was cut paid (atomic units): the entries that paid least are dropped first. */
  readonly paid: bigint;
  /** The upstream's whole answer, served once the rest is paid. */
  readonly result: TranscriptionResult;
}

/** The remembered transcriptions. */
export interface HeardFiles {
  /** The entry of `id` while it is fresh (see {@link heardFileId}); undefined otherwise. */
  get(id: string): HeardFile | undefined;
  /**
   * Keeps `file` under `id` for the cache's TTL. Beyond the bounds the entries whose payment paid
   * least are dropped first (the oldest of equals), so pushing out a payer's rest takes as many
   * calls each paying at least as much as that payer did.
   */
  remember(id: string, file: HeardFile): void;
  /**
   * Takes the entry of `id` for a call that pays its rest: removes it and returns true only when it
   * is still `file` and fresh, so of concurrent calls one takes it. A call that took it and whose
   * payment surely moved nothing puts it back with {@link putBack}.
   */
  take(id: string, file: HeardFile): boolean;
  /** Puts a taken entry back under `id` (for the cache's TTL), unless another is there by now. */
  putBack(id: string, file: HeardFile): void;
  /** Entries kept now (fresh or not yet dropped). */
  readonly size: number;
}

/** The parts of a transcription request its transcript depends on. */
export interface HeardRequest {
  readonly card: string;
  readonly file: Uint8Array;
  readonly filename?: string | undefined;
  readonly mime?: string | undefined;
  readonly language?: string | undefined;
  readonly prompt?: string | undefined;
}

/**
 * The identity of a transcription request: SHA-256 over the card, the file's name and type as sent
 * upstream, the language, the prompt and the file's bytes. A request matches only with the same
 * file and the same options, so a remembered transcript is served only to whoever holds the same
 * audio.
 */
export function heardFileId(request: HeardRequest): string {
  const head = JSON.stringify([request.card, request.filename ?? null, request.mime ?? null, request.language ?? null, request.prompt ?? null]);
  return sha256Hex(`${head}\n${sha256BytesHex(request.file)}`);
}

/**
 * 409 `invalid_state` for a call whose rest another call took meanwhile. It did no upstream work
 * (`details.nothingDone`), so an x402 claim made for it is released and nothing moves.
 */
export function restTaken(): GatewayError {
  return new GatewayError("invalid_state", "This transcription's rest was just taken by another request; send the request again to be quoted anew.", {
    details: { nothingDone: true },
  });
}

/** Bounds of {@link createHeardFiles}. */
export interface HeardFilesOptions {
  readonly clock: Clock;
  /** How long an entry is served. @default 600000 (10 minutes) */
  readonly ttlMs?: number;
  /** Entries kept at most. @default 256 */
  readonly maxEntries?: number;
  /** UTF-16 code units of transcripts (text and segment texts) kept at most. @default 8388608 */
  readonly maxChars?: number;
}

/** The size an entry counts against `maxChars`: its text and its segments' texts. */
const charsOf = (r: TranscriptionResult) => (r.segments ?? []).reduce((n, s) => n + s.text.length + 32, r.text.length);

/** Creates an empty cache with the given bounds. */
export function createHeardFiles(options: HeardFilesOptions): HeardFiles {
  const { clock, ttlMs = 600_000, maxEntries = 256, maxChars = 8 * 1024 * 1024 } = options;
  // Map order is insertion order: the first entry is the oldest.
  const entries = new Map<string, { file: HeardFile; until: number; chars: number }>();
  let chars = 0;
  const drop = (id: string) => {
    const e = entries.get(id);
    if (!e) return;
    chars -= e.chars;
    entries.delete(id);
  };
  /** The entry to drop first: the least paid, the oldest of equals (Map order is insertion order). */
  const cheapest = () => {
    let found: [string, bigint] | undefined;
    for (const [id, e] of entries) if (!found || e.file.paid < found[1]) found = [id, e.file.paid];
    return found?.[0];
  };
  return {
    get(id) {
      const e = entries.get(id);
      if (!e) return undefined;
      if (e.until > clock.now()) return e.file;
      drop(id);
      return undefined;
    },
    remember(id, file) {
      drop(id);
      const size = charsOf(file.result);
      if (size > maxChars) return;
      entries.set(id, { file, until: clock.now() + ttlMs, chars: size });
      chars += size;
      while (entries.size > maxEntries || chars > maxChars) drop(cheapest()!);
    },
    putBack(id, file) {
      if (!entries.has(id)) this.remember(id, file);
    },
    take(id, file) {
      const e = entries.get(id);
      if (!e || e.file !== file || e.until <= clock.now()) return false;
      drop(id);
      return true;
    },
    get size() {
      return entries.size;
    },
  };
}
