/** The paid media and embedding routes (docs/media.md; video lives in ../video). */
import { z } from "zod";
import { GatewayError, invalidRequest } from "../errors.js";
import { bytes } from "../http/respond.js";
import { PAID_ROUTE, type PaidCredential } from "./credential.js";
import { defineRoute, type AnyRoute, type RouteContext } from "../http/route.js";
import type { GatewayResponse } from "../http/types.js";
import type { ModelCard } from "../catalog/card.js";
import { priceUsage } from "../metering/usage.js";
import { pricedSelection } from "../metering/pricing.js";
import { priceTranscription } from "./transcription.js";
import { heardFileId, restTaken } from "./heard-files.js";
import { subjectOf } from "./billing.js";
import type { ImageResult, InferenceProvider } from "../providers/types.js";
import { decodeFile, fileInput, intInput, modelFields, numberInput, type InputFile } from "./inputs.js";
import { checkImageVariant, MAX_EDIT_IMAGES, priceImages } from "./image-pricing.js";
import { servePaid, withReceipt } from "./serve.js";
import { appendMember } from "../providers/pass-through.js";
import { utf8Length } from "../encoding.js";
import { loadedTokenCounter, tokenCounter } from "../metering/tokens.js";
import { measuredSpeechSeconds, quotedSpeechSeconds } from "./speech-length.js";

const imageFields = {
  ...modelFields,
  prompt: z.string().trim().min(1, "is required").max(32_000),
  n: intInput(1, 10).optional(),
  size: z.string().max(32).optional(),
  quality: z.string().max(32).optional(),
  response_format: z.enum(["b64_json", "url"]).optional(),
};

const imagesBody = z.object({ ...imageFields, style: z.string().max(32).optional(), background: z.string().max(32).optional() });
const editsBody = z.object({
  ...imageFields,
  image: fileInput.optional(),
  /** Several source images (multipart: repeated `image[]` parts, as the OpenAI SDK sends an array), after `image` if both are given. */
  "image[]": z.array(fileInput).min(1, "must not be empty").max(MAX_EDIT_IMAGES).optional(),
  image_url: z.string().optional(),
  mask: fileInput.optional(),
});
const speechBody = z.object({
  ...modelFields,
  input: z.string().min(1, "is required").max(4096),
  voice: z.string().max(64).optional(),
  response_format: z.enum(["mp3", "wav", "pcm", "opus", "flac", "aac"]).optional(),
  speed: numberInput(0.25, 4).optional(),
});
const transcriptionBody = z.object({
  ...modelFields,
  file: fileInput,
  language: z.string().max(16).optional(),
  prompt: z.string().max(4000).optional(),
  response_format: z.enum(["json", "text", "verbose_json"]).optional(),
});
const embeddingsBody = z.object({
  ...modelFields,
  input: z.union([z.string().min(1, "must not be empty").max(100_000), z.array(z.string().min(1).max(100_000)).min(1, "must not be empty").max(2048)]),
  dimensions: intInput(1, 8192).optional(),
  encoding_format: z.enum(["float", "base64"]).optional(),
});

/** The provider method a route needs, or 503 naming the provider that lacks it. */
function method<K extends keyof InferenceProvider>(provider: { name: string; provider: InferenceProvider }, key: K): NonNullable<InferenceProvider[K]> {
  const fn = provider.provider[key];
  if (!fn)
    throw new GatewayError("not_configured", `Provider "${provider.name}" does not serve ${String(key)}; route the model to one that does in options.media.`);
  return fn.bind(provider.provider) as NonNullable<InferenceProvider[K]>;
}

const encoder = new TextEncoder();

/** Special tokens an embedding model's tokenizer may add to each input, beyond its text's (at most 2 in the families served; 4 for room). */
const SPECIAL_TOKENS_PER_INPUT = 4;

/**
 * The tokens of embedding inputs whose upstream reported 0 (some self-hosted servers do): counted
 * with the gateway's tokenizer when it is loaded, else the byte bound. Never below 1.
 */
function unreportedTokens(inputs: readonly string[], bound: number): number {
  const counter = loadedTokenCounter();
  const counted = counter ? inputs.reduce((n, s) => n + counter.count(s), 0) : bound;
  return Math.max(1, counted);
}

/**
 * The source images of an edit, in order: `image` (or a data: `image_url`), then each `image[]`.
 * 400 without any, with a remote `image_url`, or past {@link MAX_EDIT_IMAGES}.
 */
function sourceImages(body: z.output<typeof editsBody>): [InputFile, ...InputFile[]] {
  const files: InputFile[] = [];
  if (body.image !== undefined) files.push(decodeFile(body.image, "image"));
  else if (body.image_url !== undefined) {
    if (!body.image_url.startsWith("data:"))
      throw invalidRequest("image_url must be a data: URL (the gateway does not fetch remote images); or send image", "image_url");
    files.push(decodeFile(body.image_url, "image_url"));
  }
  for (const file of body["image[]"] ?? []) files.push(decodeFile(file, "image[]"));
  if (files.length === 0) throw invalidRequest("image is required (or image[] for several)", "image");
  if (files.length > MAX_EDIT_IMAGES) throw invalidRequest(`an edit takes at most ${MAX_EDIT_IMAGES} source images`, "image[]");
  return files as [InputFile, ...InputFile[]];
}

/**
 * Image generations and edits alike (priced by ./image-pricing.ts): per image by (size, quality),
 * plus, on a card that prices them (GPT Image), the prompt's tokens and an edit's `inputImages`
 * tokens, reserved at a bound and billed as the upstream reports them. Answered in OpenAI's shape.
 */
async function serveImages(
  ctx: Pick<RouteContext<unknown, unknown, unknown, PaidCredential>, "request" | "requestId" | "gateway" | "auth" | "trace">,
  card: ModelCard,
  action: string,
  body: { prompt: string; n?: number | undefined; size?: string | undefined; quality?: string | undefined },
  inputImages: number,
  run: (common: { n: number; size?: string; quality?: string; signal?: AbortSignal }) => Promise<ImageResult>,
): Promise<GatewayResponse> {
  const n = body.n ?? 1;
  const variant: { size?: string; quality?: string } = {};
  if (body.size) variant.size = body.size;
  if (body.quality) variant.quality = body.quality;
  checkImageVariant(card, variant);
  const pricing = await priceImages(card, { prompt: body.prompt, n, variant, inputImages }, ctx.gateway.services.feeBps);
  // The size and quality the price was read at go upstream, defaults included: the images made are the ones billed.
  const priced = pricedSelection(card, variant);
  const sent: { size?: string; quality?: string } = {};
  if (priced.size !== undefined) sent.size = priced.size;
  if (priced.quality !== undefined) sent.quality = priced.quality;
  return servePaid(
    ctx.gateway,
    { request: ctx.request, requestId: ctx.requestId, credential: ctx.auth, trace: ctx.trace },
    {
      card,
      action,
      mimeType: "application/json",
      quote: pricing.quote,
      // An upstream that answers more images than asked for serves (and bills) the `n` paid for.
      run: async (signal) => {
        const r = await run(Object.assign({ n }, variant, sent, signal ? { signal } : {}));
        return r.data.length > n ? Object.assign({}, r, { data: r.data.slice(0, n) }) : r;
      },
      meter: (r) => pricing.meter(r),
    },
    (r, receipt, headers) => withReceipt({ created: r.created, data: r.data }, receipt, headers),
  );
}

/** Builds the media route table. */
export function mediaRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/v1/images/generations",
      tag: "media",
      summary: "Generate images from a prompt (billed per image by size/quality, and the prompt's tokens where the model prices them; service key or x402).",
      body: imagesBody,
      ...PAID_ROUTE,
      handle: (ctx) => {
        const { body, gateway } = ctx;
        const media = gateway.services.media;
        const card = media.cardFor(body.model, body.provider, "image", "generation");
        const generate = method(media.upstreams.inference(card), "generateImages");
        const extra: { style?: string; background?: string } = {};
        if (body.style) extra.style = body.style;
        if (body.background) extra.background = body.background;
        const format = body.response_format ? { responseFormat: body.response_format } : {};
        return serveImages(ctx, card, "images.generations", body, 0, (common) =>
          generate({ model: card.modelId, prompt: body.prompt, ...common, ...format, extra }),
        );
      },
    }),
    defineRoute({
      method: "POST",
      path: "/v1/images/edits",
      tag: "media",
      summary:
        "Edit images with a prompt (image as base64, data URL or multipart file, several as image[]; billed per image, and the prompt's and input images' tokens where the model prices them).",
      body: editsBody,
      ...PAID_ROUTE,
      multipart: true,
      handle: (ctx) => {
        const { body, gateway } = ctx;
        const [image, ...more] = sourceImages(body);
        const mask = body.mask === undefined ? undefined : decodeFile(body.mask, "mask");
        const media = gateway.services.media;
        const card = media.cardFor(body.model, body.provider, "image", "edit");
        const edit = method(media.upstreams.inference(card), "editImages");
        const inputs = {
          image: image.data,
          ...(image.contentType ? { imageMime: image.contentType } : {}),
          ...(more.length > 0 ? { moreImages: more.map((f) => (f.contentType ? { data: f.data, mime: f.contentType } : { data: f.data })) } : {}),
          ...(mask ? { mask: mask.data } : {}),
        };
        // Every source image and the mask go upstream, and each may be billed as input image tokens.
        const inputImages = 1 + more.length + (mask ? 1 : 0);
        return serveImages(ctx, card, "images.edits", body, inputImages, (common) => edit({ model: card.modelId, prompt: body.prompt, ...inputs, ...common }));
      },
    }),
    defineRoute({
      method: "POST",
      path: "/v1/audio/speech",
      tag: "media",
      summary: "Generate speech audio bytes from text (billed per character).",
      body: speechBody,
      ...PAID_ROUTE,
      handle: ({ request, requestId, auth, body, gateway, trace }) => {
        const media = gateway.services.media;
        const card = media.cardFor(body.model, body.provider, "audio", "speech");
        const speak = method(media.upstreams.inference(card), "speech");
        const characters = [...body.input].length;
        const quoted = quotedSpeechSeconds(body.input, body.speed);
        // Only a card priced per audio second needs the answer's length (./speech-length.ts).
        const perSecond = card.pricing.some((line) => line.key === "audio_seconds");
        return servePaid(
          gateway,
          { request, requestId, credential: auth, trace },
          {
            card,
            action: "audio.speech",
            mimeType: "audio/*",
            quote: priceUsage(card, undefined, { characters, seconds: quoted }, gateway.services.feeBps),
            run: async (signal) => {
              const r = await speak({
                model: card.modelId,
                input: body.input,
                ...(body.voice ? { voice: body.voice } : {}),
                ...(body.response_format ? { responseFormat: body.response_format } : {}),
                ...(body.speed === undefined ? {} : { speed: body.speed }),
                ...(signal ? { signal } : {}),
              });
              const seconds = perSecond ? await measuredSpeechSeconds(r.audio, r.contentType, body.response_format, quoted) : undefined;
              return Object.assign(r, { seconds: seconds ?? quoted });
            },
            meter: (r) => priceUsage(card, undefined, { characters: r.characters, seconds: r.seconds }, gateway.services.feeBps),
          },
          (r, _receipt, headers) => bytes(r.audio, r.contentType, { headers }),
        );
      },
    }),
    defineRoute({
      method: "POST",
      path: "/v1/audio/transcriptions",
      tag: "media",
      summary: "Transcribe audio (file as base64, data URL or multipart; billed per second of audio the upstream reports).",
      body: transcriptionBody,
      ...PAID_ROUTE,
      multipart: true,
      handle: async ({ request, requestId, auth, body, gateway, trace }) => {
        const file = decodeFile(body.file, "file");
        const media = gateway.services.media;
        const card = media.cardFor(body.model, body.provider, "audio", "transcription");
        const transcribe = method(media.upstreams.inference(card), "transcribe");
        // A model that bills its prompt as text tokens prices it (o200k: GPT-4o's own tokenizer).
        const promptTokens = body.prompt && card.pricing.some((l) => l.key === "input_tokens") ? (await tokenCounter()).count(body.prompt) : 0;
        const pricing = priceTranscription(card, file.data, gateway.services.feeBps, promptTokens);
        // x402: a request whose earlier payment was cut is quoted the rest, and answered the whole transcript (heard-files.ts).
        let id: string | undefined;
        const idOf = () =>
          (id ??= heardFileId({
            card: subjectOf(card),
            file: file.data,
            filename: file.filename,
            mime: file.contentType,
            language: body.language,
            prompt: body.prompt,
          }));
        const rest = auth.kind !== "key" ? await media.heard.get(idOf()) : undefined;
        // Whether this call took the rest, and whether its payment settled (else the rest goes back).
        let taken = false;
        let settled = false;
        const served = servePaid(
          gateway,
          { request, requestId, credential: auth, trace },
          {
            card,
            action: "audio.transcriptions",
            mimeType: "application/json",
            quote: rest ? rest.rest : pricing.quote,
            bound: rest ? undefined : pricing.bound,
            untimed: rest !== undefined,
            run: (signal) => {
              if (rest)
                return media.heard.take(idOf(), rest).then((took) => {
                  if (!(taken = took)) throw restTaken();
                  return rest.result;
                });
              return transcribe({
                model: card.modelId,
                file: file.data,
                ...(file.filename ? { filename: file.filename } : {}),
                ...(file.contentType ? { mime: file.contentType } : {}),
                ...(body.language ? { language: body.language } : {}),
                ...(body.prompt ? { prompt: body.prompt } : {}),
                ...(signal ? { signal } : {}),
              });
            },
            meter: (r, limit) => pricing.meter(r, limit),
            paidWith: async (r, paid) => {
              settled = true;
              if (rest) return;
              pricing.meter(r, paid);
              const unpaid = pricing.rest();
              if (unpaid) await media.heard.remember(idOf(), { rest: unpaid.price, paid, result: r });
            },
          },
          (r, receipt, paidHeaders) => {
            const { text, cutAt } = pricing.deliver(r);
            const headers = cutAt === undefined ? paidHeaders : Object.assign({ "x-transcript-cut-at": String(cutAt) }, paidHeaders);
            return body.response_format === "text"
              ? bytes(encoder.encode(text), "text/plain; charset=utf-8", { headers })
              : withReceipt({ text }, receipt, headers);
          },
        );
        return served.catch((error: unknown) => {
          // A payment that surely moved nothing gives the rest back; one that may still land does not (it is watched for).
          const unsure = error instanceof GatewayError && error.details?.["settlementUnsure"] === true;
          if (taken && !settled && !unsure) return media.heard.putBack(idOf(), rest!).then(() => Promise.reject(error));
          throw error;
        });
      },
    }),
    defineRoute({
      method: "POST",
      path: "/v1/embeddings",
      tag: "media",
      summary: "Embed text (billed per input token; the reservation is the UTF-8 byte count, settled on the upstream's usage).",
      body: embeddingsBody,
      ...PAID_ROUTE,
      handle: ({ request, requestId, auth, body, gateway, trace }) => {
        const media = gateway.services.media;
        const card = media.cardFor(body.model, body.provider, "embedding", "embedding");
        const embed = method(media.upstreams.inference(card), "embeddings");
        const inputs = Array.isArray(body.input) ? body.input : [body.input];
        // A token is at least one UTF-8 byte for the tokenizers these models use: bytes bound the bill,
        // with the special tokens a tokenizer adds to each input (BERT's [CLS] and [SEP], T5's </s>).
        const bound = inputs.reduce((n, s) => n + utf8Length(s) + SPECIAL_TOKENS_PER_INPUT, 0);
        return servePaid(
          gateway,
          { request, requestId, credential: auth, trace },
          {
            card,
            action: "embeddings",
            mimeType: "application/json",
            quote: priceUsage(card, { promptTokens: bound }, undefined, gateway.services.feeBps),
            run: (signal) =>
              embed({
                model: card.modelId,
                input: body.input,
                ...(body.dimensions === undefined ? {} : { dimensions: body.dimensions }),
                ...(body.encoding_format ? { encodingFormat: body.encoding_format } : {}),
                ...(signal ? { signal } : {}),
              }),
            meter: (r) => priceUsage(card, { promptTokens: r.usage.promptTokens > 0 ? r.usage.promptTokens : unreportedTokens(inputs, bound) }, undefined, gateway.services.feeBps),
          },
          (r, receipt, headers, receiptJson) =>
            r.raw
              ? bytes(appendMember(r.raw, "receipt", receiptJson), "application/json", { headers })
              : withReceipt(
                  {
                    object: "list",
                    data: r.data.map((embedding, index) => ({ object: "embedding", embedding, index })),
                    model: card.modelId,
                    usage: { prompt_tokens: r.usage.promptTokens, total_tokens: r.usage.totalTokens },
                  },
                  receipt,
                  headers,
                ),
        );
      },
    }),
  ];
}
