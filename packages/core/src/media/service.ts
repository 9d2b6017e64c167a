/**
 * The media service: upstream routing, the paid-call pipeline and the card checks of the media
 * routes. Turning a paid outcome into an HTTP answer is the routes' part (./serve.ts).
 */
import type { CapabilityDeps } from "../capability.js";
import type { ModelCard } from "../catalog/card.js";
import { invalidRequest } from "../errors.js";
import type { X402Service } from "../x402/service.js";
import { createBilling, type Billing } from "./billing.js";
import { createUpstreams, type Upstreams } from "./upstreams.js";
import { createHeardFiles, type HeardFiles } from "./heard-files.js";

/** What the media capability offers to routes and application code. */
export interface MediaService {
  readonly upstreams: Upstreams;
  readonly billing: Billing;
  /** Transcriptions an x402 payment was short for, kept for the paid retry (heard-files.ts). */
  readonly heard: HeardFiles;
  /**
   * The card for a media request: 404 `model_not_found` when unknown (before any payment), 400
   * when the model does not serve `modality`/`operation`.
   */
  cardFor(modelId: string, provider: string | undefined, modality: string, operation: string): ModelCard;
}

/** Creates the media service. `x402` is the gateway's x402 service. */
export function createMediaService(deps: CapabilityDeps, x402: X402Service): MediaService {
  const upstreams = createUpstreams(deps.options.media, { http: deps.http, clock: deps.clock });
  const billing = createBilling(deps, x402, upstreams);
  deps.describe(() => `media: providers ${upstreams.registry.names().join(", ")} (default ${deps.options.media?.defaultProvider ?? "local"})`);
  return {
    upstreams,
    billing,
    heard: createHeardFiles({ store: deps.store, clock: deps.clock, logger: deps.logger }),
    cardFor(modelId, provider, modality, operation) {
      const card = deps.catalog.get(modelId, provider);
      if (!card.operations.some((o) => o.modality === modality && o.operation === operation))
        throw invalidRequest(
          `${card.provider}:${card.modelId} does not serve ${modality} ${operation} (it serves ${card.operations.map((o) => `${o.modality} ${o.operation}`).join(", ")})`,
          "model",
        );
      return card;
    },
  };
}
