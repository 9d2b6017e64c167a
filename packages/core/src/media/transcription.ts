/**
 * What a transcription costs, before and after the upstream heard the file (docs/media.md
 * "Transcription: what the file declares and what the upstream hears"). Only the upstream decodes
 * the audio, and a file's container can understate its length (files concatenated behind one
 * header), so:
 *
 * - the quote is the length the file declares (exact for a PCM WAV): x402 pays it, and a key must
 *   afford at least it;
 * - a key reserves up to the file's bound (its byte length at the lowest codec bitrate) and settles
 *   the length the upstream reports, never above what it reserved;
 * - an x402 payment, which moves exactly the quote, is released and its transcript withheld (400)
 *   when the upstream heard clearly more than was paid for.
 */
import type { ModelCard } from "../catalog/card.js";
import { invalidRequest } from "../errors.js";
import type { Priced } from "../metering/pricing.js";
import { priceUsage } from "../metering/usage.js";
import { audioLength, audioSecondsBound, type AudioLength } from "../providers/audio-length.js";

/** How much longer than paid for the upstream may hear a file before x402 withholds it: 2 % and 1 s (encoder padding, rounding). */
export const HEARD_SLACK = { ratio: 1.02, seconds: 1 } as const;

/** The prices of one transcription. */
export interface TranscriptionPricing {
  /** What the file says of its length. */
  readonly length: AudioLength;
  /** The price of {@link length}: the x402 price, and the least a key must reserve. */
  readonly quote: Priced;
  /** The price of the file's bound when it exceeds the quote: what a key reserves if it can. */
  readonly bound: Priced | undefined;
  /** The price of `heard` seconds, at most the file's bound and at most `limit` atomic units (a reservation of at least the quote). */
  meter(heard: number, limit: bigint): Priced;
  /** Throws 400 `invalid_request` (`param: "file"`) when `heard` is over what the quote paid for, beyond {@link HEARD_SLACK}. */
  assertPaidFor(heard: number): void;
}

/** Prices a transcription of `file` on `card`. */
export async function priceTranscription(card: ModelCard, file: Uint8Array, feeBps: number): Promise<TranscriptionPricing> {
  const length = await audioLength(file);
  const most = audioSecondsBound(file, length);
  const price = (seconds: number) => priceUsage(card, undefined, { seconds }, feeBps);
  const quote = price(length.seconds);
  return {
    length,
    quote,
    bound: most > length.seconds ? price(most) : undefined,
    meter(heard, limit) {
      const seconds = Math.min(Math.max(heard, 0), most);
      const priced = seconds > 0 ? price(seconds) : quote;
      if (priced.finalAmount <= limit) return priced;
      // A key that had less left than the bound: the most whole milliseconds its reservation pays.
      let lo = Math.max(1, Math.floor(length.seconds * 1000));
      let hi = Math.ceil(seconds * 1000);
      if (price(lo / 1000).finalAmount > limit) return quote;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (price(mid / 1000).finalAmount <= limit) lo = mid;
        else hi = mid;
      }
      return price(lo / 1000);
    },
    assertPaidFor(heard) {
      if (heard <= length.seconds * HEARD_SLACK.ratio + HEARD_SLACK.seconds) return;
      throw invalidRequest(
        `The upstream heard ${heard.toFixed(1)} s of audio in this file, which declares ${length.seconds.toFixed(1)} s (${length.source}); the payment covered the declared length, so it was released and the transcript withheld. Send a file whose container states its real length, or pay with a service key (it settles what the upstream hears).`,
        "file",
        { paidSeconds: length.seconds, heardSeconds: heard, lengthSource: length.source },
      );
    },
  };
}
