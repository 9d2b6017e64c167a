/**
 * The streamed answer of a chat completion: the upstream's `data:` events relayed unchanged as
 * they arrive, then the receipt and `data: [DONE]`. Billing happens when the stream ends, however
 * it ends:
 *
 * - finished: the upstream's usage (its usage-only chunk is dropped unless the client asked for it
 *   with `stream_options.include_usage`); without one, the counted prompt and output;
 * - the client left, or the upstream failed, after at least one event was relayed: the counted
 *   prompt plus the output relayed so far (see ChatPayment.settleCut for x402);
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

/** What {@link relayChat} needs. */
export interface RelayInput {
  readonly chunks: AsyncIterable<ChatStreamChunk>;
  readonly payment: ChatPayment;
  readonly counter: TokenCounter;
  /** Prices a usage on the card. */
  readonly price: (usage: ChatUsage) => Priced;
  /** The prompt as counted, billed when the upstream reports no usage. */
  readonly promptTokens: number;
  /** The client asked for the usage chunk. */
  readonly includeUsage: boolean;
  /** The client's request signal (aborted when it goes away). */
  readonly signal?: AbortSignal | undefined;
  readonly model: string;
  readonly requestId: string;
}

/** The frame that carries the receipt. */
export function receiptFrame(receipt: Receipt, model: string): SseFrame {
  return sseFrame({ data: { id: receipt.id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model, choices: [], receipt } });
}

/** Relays a chat stream and bills it when it ends. */
export async function* relayChat(input: RelayInput): AsyncGenerator<SseFrame> {
  const { payment, counter } = input;
  let output = "";
  let usage: ChatUsage | undefined;
  let relayed = 0;
  let billed = false;
  let failure: unknown;
  const delivered = () => input.price({ promptTokens: input.promptTokens, completionTokens: counter.count(output) });
  /** Bills a call cut short: what was relayed, or nothing when nothing was. */
  const cut = async (cause: CutCause): Promise<Receipt | undefined> => {
    billed = true;
    if (relayed > 0) return payment.settleCut(delivered(), cause);
    await payment.release(cause);
    return undefined;
  };
  try {
    let finished = false;
    try {
      for await (const chunk of input.chunks) {
        if (chunk.usage) usage = chunk.usage;
        if (chunk.empty && chunk.usage && !input.includeUsage) continue;
        output += chunk.outputText;
        relayed += 1;
        yield `data: ${chunk.data}\n\n`;
      }
      finished = true;
    } catch (error) {
      failure = error;
    }
    if (finished) {
      billed = true;
      const { receipt } = await payment.settle(usage ? input.price(usage) : delivered());
      yield receiptFrame(receipt, input.model);
      yield "data: [DONE]\n\n";
      return;
    }
    if (input.signal?.aborted) return;
    // The upstream failed mid-stream: bill what was relayed, then tell the client.
    const receipt = await cut("upstream_failed");
    if (receipt) yield receiptFrame(receipt, input.model);
    const error = failure instanceof GatewayError ? failure : new GatewayError("upstream_error", "The upstream stream failed.", { cause: failure });
    yield sseFrame({ data: toErrorEnvelope(error, input.requestId).body });
  } finally {
    // The client left (return() at a yield, or its abort ended the upstream read): bill it here.
    if (!billed) await cut("client_disconnected");
  }
}
