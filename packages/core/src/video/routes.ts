/** The video routes: paid submission, status (not billed), and the SSE status stream. */
import { z } from "zod";
import { priceUsage } from "../metering/usage.js";
import { pricedSelection } from "../metering/pricing.js";
import { json } from "../http/respond.js";
import { GatewayError, invalidRequest } from "../errors.js";
import { PAID_ROUTE } from "../media/credential.js";
import { servePaid } from "../media/serve.js";
import { clientIp } from "../http/client-ip.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { sseFrame, sseResponse } from "../http/sse.js";
import type { SseFrame } from "../http/types.js";
import { decodeFile, fileInput, modelFields, numberInput } from "../media/inputs.js";
import type { ModelCard } from "../catalog/card.js";
import { jobView, STREAM_LIMITS, type VideoStreamEvent } from "./service.js";

const submitBody = z.object({
  ...modelFields,
  prompt: z.string().trim().min(1, "is required").max(32_000),
  seconds: numberInput(1, 600).optional(),
  size: z.string().max(32).optional(),
  resolution: z.string().max(32).optional(),
  ratio: z.string().max(32).optional(),
  image: fileInput.optional(),
});

const idParams = z.object({ id: z.string().min(1).max(100) });

/** The upstream's headers that describe a relayed file; a type other than `video/*` is sent as bytes, and never sniffed. */
function fileHeaders(upstream: Record<string, string>): Record<string, string> {
  const type = upstream["content-type"]?.trim().toLowerCase() ?? "";
  const out: Record<string, string> = {
    "content-type": /^video\/[a-z0-9.+-]+$/.test(type) ? type : "application/octet-stream",
    "x-content-type-options": "nosniff",
    "cache-control": "private, max-age=3600",
  };
  for (const name of ["content-length", "content-range", "accept-ranges", "etag", "last-modified"]) {
    const value = upstream[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** A stream query number: non-numeric → default, else clamped (docs/media.md "Video jobs"). */
function streamNumber(limits: { def: number; min: number; max: number }) {
  return z
    .string()
    .optional()
    .transform((v) => {
      const n = v === undefined || !/^-?\d+(\.\d+)?$/.test(v.trim()) ? limits.def : Math.trunc(Number(v));
      return Math.min(limits.max, Math.max(limits.min, n));
    });
}

const DURATION_PARAMS = ["seconds", "duration", "duration_seconds"] as const;
const secondsOf = (v: unknown): number => (typeof v === "number" ? v : typeof v === "string" ? Number.parseFloat(v) : NaN);

/**
 * The clip length a request asks for and how the card's model names it upstream: `seconds` (one of
 * the card's duration options, within its bounds), else the card's default, else 4 s. The length
 * billed is the length rendered: a length the model does not render (sora's 5 s, veo's 1 s) is a
 * 400 rather than a short bill for the upstream's own default, and the card's duration parameter
 * (`seconds`, `duration` or `duration_seconds`, in its own format such as `"5s"`) goes upstream.
 * @throws GatewayError 400 `invalid_request` (`param: "seconds"`).
 */
function clipLength(card: ModelCard, asked: number | undefined): { seconds: number; param?: Record<string, string> } {
  const name = DURATION_PARAMS.find((n) => card.params?.[n] !== undefined);
  const spec = name === undefined ? undefined : card.params![name]!;
  if (asked === undefined) {
    const d = secondsOf(spec?.default);
    return Number.isFinite(d) && d > 0 ? { seconds: d, param: { [name!]: String(spec!.default) } } : { seconds: 4 };
  }
  if (!spec || !name) return { seconds: asked };
  const option = spec.options?.find((o) => secondsOf(o) === asked);
  if (spec.options && option === undefined)
    throw invalidRequest(`${card.modelId} renders clips of ${spec.options.map(secondsOf).join(", ")} seconds; ${asked} is not one of them`, "seconds");
  if (spec.type === "integer" && !Number.isInteger(asked)) throw invalidRequest(`${card.modelId} renders clips of whole seconds; ${asked} is not one`, "seconds");
  if ((spec.minimum !== undefined && asked < spec.minimum) || (spec.maximum !== undefined && asked > spec.maximum))
    throw invalidRequest(`${card.modelId} renders clips of ${spec.minimum ?? 0} to ${spec.maximum ?? "any"} seconds; ${asked} is outside`, "seconds");
  return { seconds: asked, param: { [name]: String(option ?? asked) } };
}

/** The stream's events as SSE frames, then `data: [DONE]` unless the client went away. */
async function* sseFrames(events: AsyncIterable<VideoStreamEvent>, signal: AbortSignal | undefined): AsyncIterable<SseFrame> {
  for await (const e of events) yield sseFrame(e);
  if (!signal?.aborted) yield "data: [DONE]\n\n";
}

/** Builds the video route table. */
export function videoRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/v1/videos/generations",
      tag: "media",
      summary: "Submit a video generation (billed at submission per second of video) → 202 with the job.",
      body: submitBody,
      ...PAID_ROUTE,
      handle: ({ request, requestId, auth, body, gateway, trace }) => {
        const { media, feeBps } = gateway.services;
        const card = media.cardFor(body.model, body.provider, "video", "generation");
        const upstream = media.upstreams.video(card);
        const image = body.image === undefined ? undefined : decodeFile(body.image, "image");
        const clip = clipLength(card, body.seconds);
        const seconds = clip.seconds;
        const variant: { size?: string; resolution?: string; ratio?: string } = {};
        if (body.size) variant.size = body.size;
        if (body.resolution) variant.resolution = body.resolution;
        if (body.ratio) variant.ratio = body.ratio;
        const price = priceUsage(card, undefined, { seconds, ...variant }, feeBps);
        const jobId = gateway.ids.next("vid");
        return servePaid(
          gateway,
          { request, requestId, credential: auth, trace },
          {
            card,
            action: "videos.generations",
            mimeType: "application/json",
            quote: price,
            // Not cancelled when the client goes away: an upstream that has the job renders it anyway, so
            // the submission completes and is billed (with its job row) whether or not anyone reads the 202.
            run: async () => {
              const created = await upstream.provider.createVideo({
                model: card.modelId,
                prompt: body.prompt,
                seconds,
                ...(body.size ? { size: body.size } : {}),
                // Every param the price depends on goes upstream, defaults included: the clip rendered is the one billed.
                priced: Object.assign(pricedSelection(card, variant), clip.param),
                ...(image ? { image: image.data } : {}),
              });
              // Refused on arrival (moderation…): nothing will be rendered, so nothing is billed.
              if (created.status === "failed")
                throw new GatewayError("upstream_error", "The upstream refused the video job as it was submitted (status failed); nothing was billed.", {
                  details: { nothingDone: true },
                });
              return created;
            },
            meter: () => price,
            // The job row lands in the same store step as the charge: never a charge without its job.
            persist: (created, receipt) => ({
              id: jobId,
              model: card.modelId,
              provider: card.provider,
              upstream: upstream.name,
              upstreamId: created.upstreamId,
              status: created.status,
              ...(created.progress === undefined ? {} : { progress: created.progress }),
              receipt,
              createdAt: gateway.clock.now(),
              updatedAt: gateway.clock.now(),
            }),
          },
          (created, receipt, headers) =>
            json({ id: jobId, object: "video.generation", status: created.status, created: Math.floor(gateway.clock.now() / 1000), model: card.modelId, receipt }, { status: 202, headers }),
        );
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/videos/:id",
      tag: "media",
      summary: "Poll a video job (not billed).",
      params: idParams,
      rateLimit: { ip: "videos" },
      handle: async ({ params, gateway }) => {
        const job = await gateway.services.video.get(params.id);
        return json(jobView(job, gateway.services.video.relays(job)));
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/videos/:id/content",
      tag: "media",
      summary: "Download a completed video job's file, relayed from its upstream with the operator's credentials (not billed; Range passed on).",
      params: idParams,
      rateLimit: { ip: "videos" },
      handle: async ({ request, params, gateway }) => {
        const range = request.headers.range;
        const client = clientIp(request, gateway.rateLimits.trustedProxies);
        const file = await gateway.services.video.content(
          params.id,
          Object.assign({}, range ? { range } : {}, request.signal ? { signal: request.signal } : {}, client === undefined ? {} : { client }),
        );
        return { status: file.status, headers: fileHeaders(file.headers), body: { kind: "stream", chunks: file.body } };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/videos/:id/stream",
      tag: "media",
      summary: "Stream video.status events until a terminal state (pollIntervalMs 500..30000, timeoutMs 5000..3600000), then [DONE].",
      params: idParams,
      query: z.object({ pollIntervalMs: streamNumber(STREAM_LIMITS.pollIntervalMs), timeoutMs: streamNumber(STREAM_LIMITS.timeoutMs) }),
      rateLimit: { ip: "videos" },
      handle: async ({ request, params, query, gateway }) => {
        const video = gateway.services.video;
        const client = clientIp(request, gateway.rateLimits.trustedProxies);
        video.assertStreamRoom(client); // 429 before the stream starts
        await video.get(params.id); // 404 before the stream starts
        const options = Object.assign({}, query, request.signal ? { signal: request.signal } : undefined, client === undefined ? undefined : { client });
        return sseResponse(sseFrames(video.stream(params.id, options), request.signal));
      },
    }),
  ];
}
