/**
 * `POST /v1/chat/completions`: OpenAI's chat completions, streamed or not, billed to the token by
 * service key or x402 through the paid-call pipeline (docs/chat.md). Fields the gateway does not
 * read go to the upstream as sent; all but OpenAI's small parameters are counted as prompt
 * ({@link promptExtras}), and fields that override the output cap are refused.
 */
import { z } from "zod";
import { GatewayError, invalidRequest } from "../errors.js";
import { bytes } from "../http/respond.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { sseResponse } from "../http/sse.js";
import type { GatewayResponse } from "../http/types.js";
import { chargedCounter, countOutput, tokenCounter } from "../metering/tokens.js";
import { limitUnpaidTokenizing } from "../http/limits.js";
import type { ModelCard } from "../catalog/card.js";
import { upstreamRefused } from "../media/billing.js";
import { PAID_ROUTE } from "../media/credential.js";
import { modelFields } from "../media/inputs.js";
import { receiptHeader } from "../media/receipt.js";
import { appendMember } from "../providers/pass-through.js";
import { openChatPayment, type ChatPayment, type CutCause } from "./payment.js";
import type { Priced } from "../metering/pricing.js";
import { billedUsage, foreignTokenizer, hidesReasoning, priceChat, quoteChat, type ChatQuote } from "./quote.js";
import { linkedAbort, overrunError, overruns, relayChat } from "./relay.js";
import { promptExtras, refuseCapOverrides, upstreamBody } from "./fields.js";
import type { ChatCompletionResult, ChatStreamChunk } from "../providers/types.js";

const ROLES = ["system", "developer", "user", "assistant", "tool", "function"] as const;
const tokens = z.number().int().min(1).max(100_000_000);

const chatBody = z.looseObject({
  ...modelFields,
  messages: z.array(z.looseObject({ role: z.enum(ROLES) })).min(1, "must not be empty").max(10_000),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  max_completion_tokens: tokens.nullish(),
  max_tokens: tokens.nullish(),
  n: z.number().int().min(1).max(16).nullish(),
  // Options the upstream bills beyond the card's token prices are refused rather than absorbed:
  // priority processing (a higher rate) and audio output (audio tokens); web search and the rest in refuseUnpriced.
  service_tier: z.enum(["auto", "default", "flex"], { error: 'must be "auto", "default" or "flex": other tiers are billed above the card\'s prices' }).nullish(),
  modalities: z.array(z.literal("text", { error: 'only "text" output is priced by this gateway' })).nullish(),
});

/** Fields the upstream bills beyond the card's token prices (or that let another model answer), refused with 400 when present. */
const UNPRICED = {
  web_search_options: "web search is billed by the upstream per call and is not priced by this gateway",
  audio: "audio output is billed as audio tokens and is not priced by this gateway",
  plugins: "upstream plugins (web search…) bill per call and are not priced by this gateway",
  models: "another model answering is not priced by this gateway: name one model",
  fallbacks: "another model answering is not priced by this gateway: name one model",
  route: "another model answering is not priced by this gateway: name one model",
} as const;

/**
 * The content parts a quote can bound: text is counted, an image is reserved at the most its
 * provider bills one as (the card's `imageInputTokens`). A file (a PDF is billed as its extracted
 * text and page images, from a few compressed bytes), audio or video is neither.
 */
const PRICED_PARTS = new Set(["text", "image_url", "input_image", "refusal"]);

/**
 * Refuses the fields in {@link UNPRICED}, message parts other than {@link PRICED_PARTS}, and tools
 * other than functions (hosted tools such as web search bill per call).
 */
function refuseUnpriced(body: Record<string, unknown>): void {
  for (const [field, why] of Object.entries(UNPRICED)) if (body[field] != null) throw invalidRequest(`${field}: ${why}`, field);
  (body.messages as { content?: unknown }[]).forEach((message, i) => {
    if (!Array.isArray(message.content)) return;
    message.content.forEach((part: unknown, j) => {
      const type = (part as { type?: unknown } | null)?.type;
      if (typeof type !== "string" || !PRICED_PARTS.has(type))
        throw invalidRequest(`messages.${i}.content.${j}.type ${JSON.stringify(type) ?? "(none)"} is not priced by this gateway: send text and images (a file or audio part is billed on what the upstream extracts from it, which a quote cannot bound)`, `messages.${i}.content.${j}.type`);
      const image = (part as { image_url?: unknown }).image_url;
      const url = typeof image === "string" ? image : (image as { url?: unknown } | null | undefined)?.url;
      const scheme = typeof url === "string" ? url.trimStart().slice(0, 11).toLowerCase() : "";
      if (scheme.startsWith("data:") && !scheme.startsWith("data:image/"))
        throw invalidRequest(`messages.${i}.content.${j}.image_url: a data URL here must hold an image (data:image/…); other media are not priced by this gateway`, `messages.${i}.content.${j}.image_url`);
    });
  });
  const tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : [];
  tools.forEach((tool, i) => {
    const type = (tool as { type?: unknown } | null)?.type;
    if (type !== "function" && type !== "custom")
      throw invalidRequest(`tools.${i}.type must be "function" or "custom": hosted tools (web search, code execution…) bill per call and are not priced by this gateway`, `tools.${i}.type`);
  });
}
type ChatBody = z.output<typeof chatBody>;

/**
 * Refuses a prompt longer than the card's context window (a card may stop short of the model's
 * own window where the provider bills long prompts at a higher price). Images count as one token
 * here: their quote is a bound, not their size.
 */
function refuseOverContext(card: ModelCard, quote: ChatQuote): void {
  const counted = quote.textTokens + quote.images;
  if (card.contextWindow !== undefined && counted > card.contextWindow)
    throw invalidRequest(`messages: the prompt counts about ${counted} tokens, more than the ${card.contextWindow} this gateway serves on ${card.modelId}`, "messages");
}


/** `payment`, calling `refund` once it has billed the call (settled, or billed for what a cut call delivered). */
function refundOnBilling(payment: ChatPayment, refund: () => void): ChatPayment {
  return Object.assign({}, payment, {
    settle: async (metered: Priced) => {
      const billed = await payment.settle(metered);
      refund();
      return billed;
    },
    settleCut: async (delivered: Priced, cause: CutCause) => {
      const receipt = await payment.settleCut(delivered, cause);
      refund();
      return receipt;
    },
  });
}

/** Builds the chat route table. */
export function chatRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/v1/chat/completions",
      tag: "media",
      summary:
        "Chat completion, OpenAI-compatible (stream: true → SSE ending in a receipt chunk and [DONE]); billed per token: the prompt plus the output cap is reserved, the reported usage settled.",
      body: chatBody,
      ...PAID_ROUTE,
      handle: async ({ request, requestId, auth, body, gateway, trace }) => {
        refuseUnpriced(body);
        const media = gateway.services.media;
        const fee = gateway.services.feeBps;
        const card = media.cardFor(body.model, body.provider, "text", "chat");
        refuseCapOverrides(body, card);
        const upstream = media.upstreams.inference(card);
        const stream = body.stream === true;
        const call = stream ? upstream.provider.chatStream : upstream.provider.chat;
        if (!call) throw new GatewayError("not_configured", `Provider "${upstream.name}" does not serve chat${stream ? " streaming" : ""}; route the model to one that does in options.media.`);
        const counter = await tokenCounter();
        const extras = promptExtras(body);
        // Tokenizing is the costly step before payment: its bytes count against the client IP (no
        // key) or the key's owner wallet until the call is billed (a call released or refused stays counted).
        const owner = auth.kind === "key" ? auth.key.owner : undefined;
        let tokenized = 0;
        const quoting = chargedCounter(counter, (bytes) => {
          limitUnpaidTokenizing(request, gateway, bytes, "fit", owner);
          tokenized += bytes;
        });
        const quote = quoteChat(card, quoting, { messages: body.messages, max_completion_tokens: body.max_completion_tokens ?? undefined, max_tokens: body.max_tokens ?? undefined, n: body.n ?? undefined, extras, prediction: body.prediction }, fee);
        refuseOverContext(card, quote);
        const paid = { request, requestId, credential: auth, trace };
        const opened = await openChatPayment({ ledger: gateway.services.ledger, ids: gateway.ids, feeBps: fee }, media.billing, gateway.services.x402, paid, card, quote, stream);
        if (opened.kind === "respond") return opened.response;
        const payment = refundOnBilling(opened.payment, () => limitUnpaidTokenizing(request, gateway, tokenized, "refund", owner));
        // A streamed upstream request follows the client, but for a key's call on a model with hidden
        // reasoning: that one runs to its usage whenever the client leaves (relay.ts), before the first
        // byte too. One not streamed never follows it: the upstream bills the whole call once it has the
        // request, so the call runs to its answer and is billed its usage, whoever is still listening.
        const readsOn = auth.kind === "key" && hidesReasoning(card);
        const client = readsOn || !stream ? undefined : request.signal;
        const link = stream ? linkedAbort(client) : undefined;
        const signal = link ? link.signal : client;
        const req = { body: upstreamBody(body, card.modelId, payment.outputCap), ...(signal ? { signal } : {}) };
        const price = (usage: { promptTokens: number; completionTokens: number; cachedInputTokens?: number | undefined }) => priceChat(card, usage, fee);
        const foreign = foreignTokenizer(card);
        const outputTokens = (text: string) => countOutput(counter, text, foreign);

        // Tracked until it is billed (or its stream takes over the tracking): a call whose client left
        // may still be running when the gateway closes, and must keep the store until it settles.
        const serve = async (): Promise<GatewayResponse> => {
          let started;
          try {
            started = await media.billing.upstream<ChatCompletionResult | AsyncIterable<ChatStreamChunk>>(paid, card, () =>
              stream ? upstream.provider.chatStream!.call(upstream.provider, req) : upstream.provider.chat!.call(upstream.provider, req),
            );
          } catch (error) {
            await payment.release(request.signal?.aborted ? "client_disconnected" : "upstream_failed", upstreamRefused(error));
            throw error;
          }
          if ("raw" in started) {
            const limit = payment.outputCap * quote.choices;
            if (overruns(counter, started.outputText, started.usage, limit, quote.predictedTokens)) {
              // The upstream ignored the cap: the answer is not served past what was paid for, and the call is billed its cap.
              const { headers } = await payment.settle(price({ promptTokens: quote.billedPromptTokens, completionTokens: limit }));
              throw overrunError(limit, Object.assign({}, payment.headers, headers));
            }
            const usage = billedUsage(started.usage, quote.billedPromptTokens, () => outputTokens(started.outputText));
            const { receipt, headers } = await payment.settle(price(usage));
            const receiptJson = JSON.stringify(receipt);
            return bytes(appendMember(started.raw, "receipt", receiptJson), "application/json", {
              headers: Object.assign({}, payment.headers, headers, { "x-receipt": receiptHeader(receiptJson) }),
            });
          }
          const frames = relayChat({
            chunks: started,
            payment,
            counter,
            outputTokens,
            price,
            promptTokens: quote.billedPromptTokens,
            outputLimit: payment.outputCap * quote.choices,
            includeUsage: body.stream_options?.include_usage === true,
            signal: request.signal,
            keepUpstream: readsOn ? link?.detach : undefined,
            now: () => gateway.clock.now(),
            cancelUpstream: link?.cancel,
            track: gateway.background.track,
            model: card.modelId,
            requestId,
          });
          return sseResponse(frames, payment.headers);
        };
        const served = serve();
        gateway.background.track(served);
        return served;
      },
    }),
  ];
}
