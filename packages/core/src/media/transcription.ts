/**
 * What a transcription costs, before and after the upstream heard the file (docs/media.md
 * "Transcription: quoted before, settled on what the upstream heard"). Only the upstream decodes
 * the audio. Before it, the gateway knows a PCM WAV's length and estimates any other file's at
 * 128 kbit/s (the quote), and bounds what any file can hold by its byte length at the lowest codec
 * bitrate (the bound). A key reserves the bound, or what it has left down to the quote, and settles
 * the length the upstream reports; x402 (`exact`) pays the quote.
 */
import type { ModelCard } from "../catalog/card.js";
import type { Priced } from "../metering/pricing.js";
import { priceUsage } from "../metering/usage.js";
import { audioSecondsBound } from "../providers/audio-length.js";
import { audioSeconds } from "../providers/wav.js";

/** The prices of one transcription. */
export interface TranscriptionPricing {
  /** The price of the file's known or estimated length: the x402 price, and the least a key must reserve. */
  readonly quote: Priced;
  /** The price of the file's bound when it exceeds the quote: what a key reserves if it can. */
  readonly bound: Priced | undefined;
  /**
   * The price of `heard` seconds (the upstream's report), at most the file's bound and at most
   * `limit` atomic units (a reservation, never below the quote): past it, the most whole
   * milliseconds it pays for. A report that is not a positive number prices as the quote.
   */
  meter(heard: number, limit: bigint): Priced;
}

/** Prices a transcription of `file` on `card`. */
export function priceTranscription(card: ModelCard, file: Uint8Array, feeBps: number): TranscriptionPricing {
  const known = audioSeconds(file).seconds;
  const most = audioSecondsBound(file);
  const price = (seconds: number) => priceUsage(card, undefined, { seconds }, feeBps);
  const quote = price(known);
  return {
    quote,
    bound: most > known ? price(most) : undefined,
    meter(heard, limit) {
      if (!(heard > 0)) return quote;
      const seconds = Math.min(heard, most);
      const priced = price(seconds);
      if (priced.finalAmount <= limit) return priced;
      // A key that had less left than the bound reserved less: bisect for what its reservation pays.
      let lo = Math.floor(known * 1000);
      let hi = Math.ceil(seconds * 1000);
      if (lo < 1 || price(lo / 1000).finalAmount > limit) return quote;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (price(mid / 1000).finalAmount <= limit) lo = mid;
        else hi = mid;
      }
      return price(lo / 1000);
    },
  };
}
