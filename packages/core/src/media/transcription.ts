/**
 * What a transcription costs, before and after the upstream heard the file (docs/media.md
 * "Transcription: quoted before, settled on what the upstream heard"). Only the upstream decodes
 * the audio. Before it, the gateway knows a PCM WAV's length and estimates any other file's at
 * 128 kbit/s or at the length its headers declare when longer (the quote), and bounds what an
 * ordinary file holds by its byte length at a low codec bitrate (the bound). A key reserves the bound, or what it has left down to the quote, and settles
 * the length the upstream heard, at most what it reserved; the transcript of audio that ran past
 * what was paid is cut to the paid seconds. x402 (`exact`) pays the quote, and its transcript is
 * cut the same way to the seconds the quote pays for; the rest is offered to the same request sent
 * again (heard-files.ts).
 */
import type { ModelCard } from "../catalog/card.js";
import type { Priced } from "../metering/pricing.js";
import { priceUsage } from "../metering/usage.js";
import { audioSecondsBound } from "../providers/audio-length.js";
import type { TranscriptionResult } from "../providers/types.js";
import { audioSeconds } from "../providers/wav.js";

/** How much longer than paid for the upstream may hear a file before its transcript is cut: 2 % and 1 s (encoder padding, rounding). */
export const HEARD_SLACK = { ratio: 1.02, seconds: 1 } as const;

/** The seconds of audio an upstream's answer covers: its duration, or its last segment's end when that is later. */
export function heardSeconds(result: TranscriptionResult): number {
  let heard = Number.isFinite(result.durationSeconds) ? result.durationSeconds : 0;
  for (const s of result.segments ?? []) if (Number.isFinite(s.end) && s.end > heard) heard = s.end;
  return heard;
}

/** Whether a settlement that paid for `paid` seconds of `heard` cuts the transcript. */
const cuts = ({ heard, paid }: { heard: number; paid: number }) => heard > paid * HEARD_SLACK.ratio + HEARD_SLACK.seconds;

/** The prices of one transcription, and what its answer may hold. */
export interface TranscriptionPricing {
  /** The price of the file's known or estimated length: the x402 price, and the least a key must reserve. */
  readonly quote: Priced;
  /** The price of the file's bound when it exceeds the quote: what a key reserves if it can. */
  readonly bound: Priced | undefined;
  /**
   * The price of the seconds `result` heard ({@link heardSeconds}), at most the file's bound and at
   * most `limit` atomic units (a reservation, never below the quote): past it, the most whole
   * milliseconds it pays for. Nothing heard prices as the quote.
   */
  meter(result: TranscriptionResult, limit: bigint): Priced;
  /**
   * The transcript to answer with: whole, unless {@link meter} paid for fewer seconds than the
   * upstream heard (beyond {@link HEARD_SLACK}); then the timed segments that end within the paid
   * seconds (and 1 s), or no text at all when the upstream gave no segments; `cutAt` is the
   * seconds paid for. Without a `meter` call (x402), whole.
   */
  deliver(result: TranscriptionResult): { text: string; cutAt?: number };
  /**
   * After {@link meter}: the seconds heard beyond those paid for and their price, when
   * {@link deliver} cuts the transcript; undefined when it is delivered whole.
   */
  rest(): { seconds: number; price: Priced } | undefined;
}

/**
 * Prices a transcription of `file` on `card`, with `promptTokens` of prompt where the card prices
 * input tokens (a model that bills its prompt as text, GPT-4o transcribe): every price of the call
 * carries them, but the price of a cut transcript's rest, whose prompt was paid with the call.
 */
export function priceTranscription(card: ModelCard, file: Uint8Array, feeBps: number, promptTokens = 0): TranscriptionPricing {
  const known = audioSeconds(file).seconds;
  const most = audioSecondsBound(file, known);
  // Whole microseconds, rounded up: a length with more decimals than the pricer reads would price to 0.
  const pricer = (prompt: number) => (seconds: number) =>
    priceUsage(card, prompt > 0 ? { promptTokens: prompt } : undefined, { seconds: Math.ceil(seconds * 1e6) / 1e6 }, feeBps);
  const price = pricer(promptTokens);
  const audioOnly = pricer(0);
  const quote = price(known);
  // What `meter` read: the seconds heard, and those the key's settlement paid for; unset for x402, which pays the quote.
  let metered: { heard: number; paid: number } | undefined;
  const settle = (heard: number, seconds: number, priced: Priced): Priced => {
    metered = { heard, paid: seconds };
    return priced;
  };
  return {
    quote,
    bound: most > known ? price(most) : undefined,
    meter(result, limit) {
      const heard = heardSeconds(result);
      const seconds = Math.min(heard, most);
      const priced = seconds > 0 ? price(seconds) : quote;
      if (seconds > 0 && priced.finalAmount > 0n && priced.finalAmount <= limit) return settle(heard, seconds, priced);
      if (!(seconds > known)) return settle(heard, known, quote);
      // A key that had less left than the bound reserved less: bisect for what its reservation pays.
      let lo = Math.ceil(known * 1000);
      let hi = Math.ceil(seconds * 1000);
      if (lo >= hi || price(lo / 1000).finalAmount > limit) return settle(heard, known, quote);
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (price(mid / 1000).finalAmount <= limit) lo = mid;
        else hi = mid;
      }
      return settle(heard, lo / 1000, price(lo / 1000));
    },
    rest() {
      if (!metered || !cuts(metered)) return undefined;
      const seconds = metered.heard - metered.paid;
      return { seconds, price: audioOnly(seconds) };
    },
    deliver(result) {
      if (!metered || !cuts(metered)) return { text: result.text };
      const cutAt = metered.paid;
      const kept = (result.segments ?? []).filter((s) => s.end <= cutAt + HEARD_SLACK.seconds);
      return {
        text: kept
          .map((s) => s.text)
          .join("")
          .trim(),
        cutAt,
      };
    },
  };
}
