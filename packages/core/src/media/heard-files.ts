/**
 * The rest of x402 transcriptions, remembered briefly (docs/media.md "x402: a file longer than its
 * quote"). An `exact` payment is fixed before anything decodes the file, from an estimate of its
 * length; when the upstream heard more than it pays for, the payment settles, the transcript is cut
 * to the seconds it paid for, and the price of the seconds heard beyond them (the rest) and the
 * whole transcript are kept here. The same request sent again with x402 is quoted the rest and, once
 * that is paid, answered the whole transcript without a second upstream call; the entry is then
 * gone.
 *
 * In the store (`TranscriptRestStore`), so the request that pays the rest may reach any instance,
 * also after a restart. Each entry costs its maker a paid call and lives `ttlMs`; a transcript
 * longer than `maxChars` is not kept (its rest is then a new call); beyond `maxEntries` the entries
 * whose payment paid least are dropped first.
 */
import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";
import { randomBytes, toHex } from "../ids.js";
import type { LineItem, Priced } from "../metering/pricing.js";
import type { TranscriptionResult } from "../providers/types.js";
import { sha256Hex, sha256BytesHex } from "../sha256.js";
import type { GatewayLogger } from "../observability/logger.js";
import type { TranscriptRestStore } from "../store/transcript-rest-types.js";

/** The unpaid rest of one transcription. */
export interface HeardFile {
  /** The price of the seconds heard beyond those paid for. */
  readonly rest: Priced;
  /** What the payment that was cut paid (atomic units). */
  readonly paid: bigint;
  /** The upstream's whole answer, served once the rest is paid. */
  readonly result: TranscriptionResult;
}

/** An entry as read back: {@link HeardFiles.take} takes only the version it read. */
export interface HeardEntry extends HeardFile {
  readonly version: string;
}

/** The remembered transcriptions. */
export interface HeardFiles {
  /** The entry of `id` while it is fresh (see {@link heardFileId}); undefined otherwise. */
  get(id: string): Promise<HeardEntry | undefined>;
  /**
   * Keeps `file` under `id` for the TTL, replacing any entry there. Never rejects: the payment
   * that was cut has moved, so a store that fails is logged and the rest is a new call later.
   */
  remember(id: string, file: HeardFile): Promise<void>;
  /**
   * Takes the entry of `id` for a call that pays its rest: removes it and returns true only when it
   * is still `entry` and fresh, so of concurrent calls (on any instance) one takes it. A call that
   * took it and whose payment surely moved nothing puts it back with {@link putBack}.
   */
  take(id: string, entry: HeardEntry): Promise<boolean>;
  /** Puts a taken entry back under `id` (for the TTL), unless another is there by now. */
  putBack(id: string, entry: HeardEntry): Promise<void>;
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

/** Options of {@link createHeardFiles}. */
export interface HeardFilesOptions {
  readonly store: TranscriptRestStore;
  readonly clock: Clock;
  /** Where a rest that could not be kept is reported. */
  readonly logger: Pick<GatewayLogger, "warn">;
  /** How long an entry is served. @default 600000 (10 minutes) */
  readonly ttlMs?: number;
  /** UTF-16 code units of one transcript (text and segment texts) kept at most. @default 8388608 */
  readonly maxChars?: number;
  /** Entries kept at most (beyond, the least paid go first). @default 10000 */
  readonly maxEntries?: number;
}

/** The size an entry counts against `maxChars`: its text and its segments' texts. */
const charsOf = (r: TranscriptionResult) => (r.segments ?? []).reduce((n, s) => n + s.text.length + 32, r.text.length);

/** The rest's price as the store keeps it: amounts as decimal strings. */
const encodeRest = (p: Priced): string =>
  JSON.stringify({
    lineItems: p.lineItems,
    providerAmount: p.providerAmount.toString(),
    platformFee: p.platformFee.toString(),
    finalAmount: p.finalAmount.toString(),
  });
const decodeRest = (text: string): Priced => {
  const p = JSON.parse(text) as { lineItems: LineItem[]; providerAmount: string; platformFee: string; finalAmount: string };
  return { lineItems: p.lineItems, providerAmount: BigInt(p.providerAmount), platformFee: BigInt(p.platformFee), finalAmount: BigInt(p.finalAmount) };
};

/** Creates the remembered transcriptions over `options.store`. */
export function createHeardFiles(options: HeardFilesOptions): HeardFiles {
  const { store, clock, logger, ttlMs = 600_000, maxChars = 8 * 1024 * 1024, maxEntries = 10_000 } = options;
  const recordOf = (id: string, entry: HeardEntry) => ({
    id,
    version: entry.version,
    paid: entry.paid,
    rest: encodeRest(entry.rest),
    result: JSON.stringify(entry.result),
    expiresAt: clock.now() + ttlMs,
  });
  return {
    async get(id) {
      const r = await store.getTranscriptRest(id, clock.now());
      return r ? { version: r.version, paid: r.paid, rest: decodeRest(r.rest), result: JSON.parse(r.result) as TranscriptionResult } : undefined;
    },
    async remember(id, file) {
      if (charsOf(file.result) > maxChars) return;
      await store
        .putTranscriptRest(recordOf(id, Object.assign({ version: toHex(randomBytes(16)) }, file)), clock.now(), false, maxEntries)
        .catch((err: unknown) => logger.warn({ err }, "x402: could not keep a transcription's rest (a request for it will be a new call)"));
    },
    async putBack(id, entry) {
      await store.putTranscriptRest(recordOf(id, entry), clock.now(), true, maxEntries);
    },
    take: (id, entry) => store.takeTranscriptRest(id, entry.version, clock.now()),
  };
}
