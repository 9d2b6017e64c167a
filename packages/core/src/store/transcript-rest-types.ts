/**
 * The rests of x402 transcriptions (docs/media.md "x402: a file longer than its quote"), kept in
 * the store so that the request paying a rest may reach any instance, also after a restart. An
 * entry lives for minutes; a request takes it once.
 */

/** The unpaid rest of one transcription, as the store keeps it. */
export interface TranscriptRestRecord {
  /** The transcription request's identity (SHA-256 hex of the card, options and file). */
  id: string;
  /** A fresh random token per entry: {@link TranscriptRestStore.takeTranscriptRest} takes only the entry it read. */
  version: string;
  /** What the payment that was cut paid (atomic units). */
  paid: bigint;
  /** The price of the rest, as JSON (amounts as decimal strings). */
  rest: string;
  /** The upstream's whole answer, as JSON. */
  result: string;
  /** Served until then (ms). */
  expiresAt: number;
}

/** Persistence of transcription rests. Every method is a single native atomic operation. */
export interface TranscriptRestStore {
  /**
   * Keeps `record` under its id, replacing any entry there unless `onlyIfAbsent` (then an entry
   * still fresh at `now` stays). Entries expired at `now` are deleted on the way, and beyond
   * `maxEntries` the entries whose payment paid least (the soonest to expire of equals) are deleted,
   * `record` among them if it paid least: pushing out a payer's rest takes as many payments, each at
   * least as large. Under concurrent puts on PostgreSQL the bound may be passed by a few.
   * @returns whether `record` was stored.
   */
  putTranscriptRest(record: TranscriptRestRecord, now: number, onlyIfAbsent?: boolean, maxEntries?: number): Promise<boolean>;
  /** The entry of `id` if it is fresh at `now`; null otherwise. */
  getTranscriptRest(id: string, now: number): Promise<TranscriptRestRecord | null>;
  /**
   * Deletes the entry of `id` if it is still `version` and fresh at `now`: of concurrent takes of one
   * entry, exactly one returns true.
   */
  takeTranscriptRest(id: string, version: string, now: number): Promise<boolean>;
}
