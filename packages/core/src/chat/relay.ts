/**
 * The streamed answer of a chat completion: the upstream's `data:` events relayed unchanged as
 * they arrive, then the receipt and `data: [DONE]`. Billing happens when the stream ends, however
 * it ends:
 *
 * - finished: the upstream's usage (its usage-only chunk is dropped unless the client asked for it
 *   with `stream_options.include_usage`); without one, the counted prompt and output;
 * - the client left after at least one event was relayed: the upstream request is cancelled and
 *   the counted prompt plus the output relayed so far is billed; but a key's call on a model that
 *   thinks in tokens it never streams (`keepUpstream`) reads the upstream on to its end, without
 *   relaying, and pays its usage, hidden reasoning included (without a usage: the prompt and all
 *   the output it sent, counted; such a call's upstream never follows its client, so this holds
 *   from before the first event too). An x402 call paid before its first event was relayed
 *   (ChatPayment.commit; a payment that cannot be collected then cancels the upstream);
 * - the upstream failed after at least one event was relayed: the counted prompt plus the output
 *   relayed so far (see ChatPayment.settleCut for x402);
 * - a key's stream still running a minute before its reservation lapses: the counted prompt plus
 *   the output relayed so far, and the upstream is cancelled;
 * - nothing relayed yet: the payment is released.
 *
 * The receipt travels as one more `chat.completion.chunk` with `choices: []` and a `receipt`
 * member, so OpenAI SDKs (which read every `data:` event as a chunk) take it in their stride.
 */
import { toErrorEnvelope, GatewayError } from "../errors.js";
import { sseFrame } from "../http/sse.js";
import type { SseFrame } from "../http/types.js";
import type { Priced } from "../metering/pricing.js";
import type { TokenCounter } from "../metering/tokens.js";
import type { Receipt } from "../media/receipt.js";
import type { ChatStreamChunk, ChatUsage } from "../providers/types.js";
import type { ChatPayment, CutCause } from "./payment.js";
import { billedUsage } from "./quote.js";

/** What {@link relayChat} needs. */
export interface RelayInput {
  readonly chunks: AsyncIterable<ChatStreamChunk>;
  readonly payment: ChatPayment;
  /** Counts output as it streams, to stop reading past {@link outputLimit}. */
  readonly counter: TokenCounter;
  /** The output tokens billed when the upstream reports none (metering/tokens.ts `countOutput`). */
  readonly outputTokens: (text: string) => number;
  /** Prices a usage on the card. */
  readonly price: (usage: ChatUsage) => Priced;
  /** The prompt billed when the upstream reports no usage (the quote's `billedPromptTokens`). */
  readonly promptTokens: number;
  /** The most output the call may cost (the cap times the choices): reading past it after the client left stops. */
  readonly outputLimit: number;
  /** The client asked for the usage chunk. */
  readonly includeUsage: boolean;
  /** The client's request signal (aborted when it goes away). */
  readonly signal?: AbortSignal | undefined;
  /** The gateway's clock (for the reservation's deadline). */
  readonly now: () => number;
  /** Cancels the upstream request (a stream stopped at its reservation's deadline). */
  readonly cancelUpstream?: (() => void) | undefined;
  /** Hands over billing that runs on after the answer ended, so the gateway's `close()` waits for it. */
  readonly track?: ((work: Promise<unknown>) => void) | undefined;
  /**
   * Given when a key pays for a model with hidden reasoning; called once the first event is about
   * to be relayed: from then on the client going away must not cut the upstream request (its usage
   * is still to come). See {@link linkedAbort}.
   */
  readonly keepUpstream?: (() => void) | undefined;
  readonly model: string;
  readonly requestId: string;
}

/** The frame that carries the receipt. */
export function receiptFrame(receipt: Receipt, model: string): SseFrame {
  return sseFrame({ data: { id: receipt.id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model, choices: [], receipt } });
}

/**
 * An abort signal for the upstream request that follows `client` until `detach()` is called:
 * before the first byte a client that leaves cancels the upstream; after it, a key's call reads on.
 */
export function linkedAbort(client: AbortSignal | undefined): { signal: AbortSignal; detach(): void; cancel(): void } {
  const controller = new AbortController();
  const cancel = () => controller.abort(new Error("the stream reached its reservation's deadline"));
  if (!client) return { signal: controller.signal, detach() {}, cancel };
  const follow = () => controller.abort(client.reason);
  if (client.aborted) follow();
  else client.addEventListener("abort", follow, { once: true });
  return { signal: controller.signal, detach: () => client.removeEventListener("abort", follow), cancel };
}

/**
 * The most output tokens (counted here) an answer may carry before the upstream is taken to have
 * ignored the cap: the limit, with room for another vendor's tokenizer counting the same text
 * differently. Past it the output was not paid for, so it is not served (routes.ts, {@link relayChat}).
 */
export const overrunBound = (outputLimit: number): number => Math.ceil(outputLimit * 1.5) + 64;

/**
 * Whether an answer not streamed passed the cap: its reported output tokens (`usage`, the
 * upstream's own count, reasoning and `predicted` tokens included) past {@link overrunBound} of the
 * limit and the prediction; without a usage, `text` counting past the bound of the limit. A token
 * covers at least one UTF-8 byte, at most three per UTF-16 unit, so shorter text is not counted.
 */
export function overruns(counter: TokenCounter, text: string, usage: ChatUsage | undefined, outputLimit: number, predicted: number): boolean {
  if (usage && usage.completionTokens > 0) return usage.completionTokens > overrunBound(outputLimit + predicted);
  const bound = overrunBound(outputLimit);
  return text.length * 3 > bound && counter.count(text) > bound;
}

/** The error of an answer past {@link overrunBound} (it is billed the cap: the most its caller agreed to pay). */
export const overrunError = (outputLimit: number, headers?: Record<string, string>): GatewayError =>
  new GatewayError(
    "upstream_error",
    `The upstream answered past the output cap this call paid for (${outputLimit} tokens in all): the rest of its answer is not served, and the call is billed its cap. The operator should send the cap in the field this server reads (outputCapField).`,
    headers ? { headers } : {},
  );

/** How long before its reservation lapses a stream still running is stopped and billed. */
export const DEADLINE_MARGIN_MS = 60_000;
/** How often a running stream looks at its deadline. */
const DEADLINE_CHECK_MS = 1_000;

/** Relays a chat stream and bills it when it ends. */
export async function* relayChat(input: RelayInput): AsyncGenerator<SseFrame> {
  const { payment, counter } = input;
  const upstream = input.chunks[Symbol.asyncIterator]();
  let output = "";
  let usage: ChatUsage | undefined;
  let relayed = 0;
  let billed = false;
  let failure: unknown;
  let ended = false;
  /** The output counted once it may pass the overrun bound (-1 before). */
  let outputCount = -1;
  const bound = overrunBound(input.outputLimit);
  const deadline = payment.expiresAt === undefined ? undefined : payment.expiresAt - DEADLINE_MARGIN_MS;
  const counted = () => input.price({ promptTokens: input.promptTokens, completionTokens: input.outputTokens(output) });
  /** The upstream's usage (a zero where tokens were seen counted instead), else the counted prompt and output. */
  const reported = () => input.price(billedUsage(usage, input.promptTokens, () => input.outputTokens(output)));
  /** The counted prompt and the whole output cap: the most the call reserved for (capped at the reservation by the payment). */
  const whole = () => input.price({ promptTokens: input.promptTokens, completionTokens: input.outputLimit });
  /**
   * A reasoning model's call cut before its usage arrived (at the deadline): its hidden tokens are
   * unknown, so it pays {@link whole}.
   */
  const ceiling = () => (usage ? reported() : whole());
  /**
   * Reads the rest of the upstream without relaying it, for its usage; stops past the output limit
   * and at the deadline. Resolves to what the call is billed: the usage (or, without one, all the
   * output the upstream sent, counted), or {@link ceiling} when the deadline stopped it first.
   */
  const drain = async (): Promise<Priced> => {
    let tokens = counter.count(output);
    let late = false;
    try {
      while (!ended && tokens <= input.outputLimit) {
        if (deadline !== undefined && input.now() >= deadline) {
          late = true;
          break;
        }
        const step = await upstream.next();
        if (step.done) break;
        if (step.value.usage) usage = step.value.usage;
        output += step.value.outputText;
        tokens += counter.count(step.value.outputText);
      }
    } catch {
      // The upstream failed or timed out while nobody was listening: bill what it sent.
    } finally {
      if (!ended) await Promise.resolve(upstream.return?.()).catch(() => undefined);
    }
    return late ? ceiling() : reported();
  };
  /**
   * Bills a call cut short: what was relayed (a key whose client left: all the upstream made); a
   * client that left before the first byte, the prompt; any other cut with nothing relayed, nothing.
   */
  const cut = async (cause: CutCause): Promise<Receipt | undefined> => {
    billed = true;
    if (outputCount > bound) {
      // An answer past the cap is billed the cap, relayed or not (an x402 call pays here if it had not yet).
      if (relayed === 0) await payment.commit?.().catch(() => undefined);
      return payment.settleCut(whole(), cause);
    }
    const drains = relayed > 0 && cause === "client_disconnected" && input.keepUpstream !== undefined;
    const priced = drains ? await drain() : undefined;
    if (!drains && !ended) await Promise.resolve(upstream.return?.()).catch(() => undefined);
    if (relayed === 0) {
      // The upstream took the request and read its prompt (its answer had begun): a client that left pays that prompt.
      if (cause === "client_disconnected") await payment.settleCut(input.price({ promptTokens: input.promptTokens, completionTokens: 0 }), "client_left_early");
      else await payment.release(cause);
      return undefined;
    }
    // The upstream's usage when it came before the cut (a client may leave right after the last chunk); else the count.
    return payment.settleCut(priced ?? (usage ? reported() : counted()), cause);
  };
  // The gateway's close() waits for this stream to be billed, however it ends (a drain after the
  // client left runs on after the answer, where nothing else awaits it).
  let billedAll!: () => void;
  input.track?.(new Promise<void>((resolve) => (billedAll = resolve)));
  /**
   * A stream still running near its reservation's end (a client that stopped reading parks it; so
   * can a slow upstream): billed for what was relayed (nothing relayed: released), and stopped,
   * while the reservation still holds.
   */
  const lapse = async () => {
    billed = true;
    clearInterval(watch);
    input.cancelUpstream?.();
    // A reasoning model's call parked here would otherwise skip its hidden tokens: it pays its usage
    // if that arrived, else its cap. Failing, the reservation lapses uncharged, as it would have anyway.
    const done = relayed === 0 ? payment.release("deadline") : payment.settleCut(input.keepUpstream ? ceiling() : counted(), "deadline");
    await done.catch(() => undefined);
  };
  let lapsing: Promise<void> | undefined;
  const watch =
    deadline === undefined
      ? undefined
      : setInterval(() => {
          if (!billed && input.now() >= deadline) lapsing = lapse();
        }, DEADLINE_CHECK_MS);
  watch?.unref?.();
  try {
    try {
      for (;;) {
        const step = await upstream.next();
        if (step.done) break;
        const chunk = step.value;
        if (chunk.usage) usage = chunk.usage;
        if (chunk.empty && chunk.usage && !input.includeUsage) continue;
        output += chunk.outputText;
        // Past the bound the upstream ignored the cap: stopped before this chunk is relayed (or, the
        // first, paid for), and billed the most the call reserved for.
        if (output.length * 3 > bound) {
          outputCount = outputCount < 0 ? counter.count(output) : outputCount + counter.count(chunk.outputText);
          if (outputCount > bound) {
            input.cancelUpstream?.();
            await Promise.resolve(upstream.return?.()).catch(() => undefined);
            throw overrunError(input.outputLimit);
          }
        }
        if (relayed === 0) {
          // x402 pays here, before anything is relayed: a payment that cannot be collected stops the upstream too.
          try {
            await payment.commit?.();
          } catch (error) {
            input.cancelUpstream?.();
            await Promise.resolve(upstream.return?.()).catch(() => undefined);
            throw error;
          }
          input.keepUpstream?.();
        }
        relayed += 1;
        yield `data: ${chunk.data}\n\n`;
        if (billed) return; // the deadline billed it while the client was not reading
      }
      ended = true;
    } catch (error) {
      failure = error;
      ended = true;
    }
    if (billed) return; // the deadline billed it and cancelled the upstream
    if (failure === undefined) {
      billed = true;
      const { receipt } = await payment.settle(reported());
      yield receiptFrame(receipt, input.model);
      yield "data: [DONE]\n\n";
      return;
    }
    if (input.signal?.aborted) return;
    // The upstream failed mid-stream (or an x402 payment could not be collected before the first event): bill what was relayed, then tell the client.
    const receipt = await cut("upstream_failed");
    if (receipt) yield receiptFrame(receipt, input.model);
    const error = failure instanceof GatewayError ? failure : new GatewayError("upstream_error", "The upstream stream failed.", { cause: failure });
    yield sseFrame({ data: toErrorEnvelope(error, input.requestId).body });
  } finally {
    clearInterval(watch);
    // The client left (return() at a yield, or its abort ended the upstream read): bill it here.
    try {
      if (!billed) await cut("client_disconnected");
      await lapsing;
    } finally {
      billedAll();
    }
  }
}
