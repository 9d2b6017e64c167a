/**
 * Builds the upstream providers from `options.media` and routes a catalog card to one of them:
 * a provider configured under the card's provider slug, else `routing[slug]`, else the default
 * (`local` unless configured otherwise).
 */
import type { ModelCard } from "../catalog/card.js";
import type { Clock } from "../clock.js";
import { GatewayError } from "../errors.js";
import { GatewayOptionsError } from "../options.js";
import type { HttpClient } from "../http/client.js";
import { createLocalProvider } from "../providers/local.js";
import { createOpenAICompatibleProvider } from "../providers/openai-compatible.js";
import { createProviderRegistry, type RegisteredProvider } from "../providers/registry.js";
import type { InferenceProvider, ProviderRegistry, VideoProvider } from "../providers/types.js";
import type { MediaOptions } from "./options.js";

/** The upstreams of a gateway and the routing rule. */
export interface Upstreams {
  readonly registry: ProviderRegistry;
  /** The configured provider name serving `card` (throws 503 `not_configured` when it does not exist). */
  nameFor(card: ModelCard): string;
  /** The inference provider for `card`. */
  inference(card: ModelCard): { name: string; provider: InferenceProvider };
  /** The video provider for `card`; 503 when the routed provider has no video API. */
  video(card: ModelCard): { name: string; provider: VideoProvider };
  /** The video provider registered under `name` (polling a stored job). */
  videoByName(name: string): VideoProvider;
}

/** Builds the providers. Throws a {@link GatewayOptionsError} (one line per entry) when `routing` or `defaultProvider` names a provider that is not configured. */
export function createUpstreams(options: MediaOptions, deps: { http: HttpClient; clock: Clock }): Upstreams {
  const map: Record<string, RegisteredProvider> = {};
  const configured = options?.providers ?? {};
  if (!configured.local) map.local = createLocalProvider({ clock: deps.clock });
  for (const [name, config] of Object.entries(configured)) {
    map[name] =
      config.type === "local"
        ? createLocalProvider({
            clock: deps.clock,
            ...(config.videoDurationMs === undefined ? {} : { videoDurationMs: config.videoDurationMs }),
            ...(config.chatChunkDelayMs === undefined ? {} : { chatChunkDelayMs: config.chatChunkDelayMs }),
          })
        : createOpenAICompatibleProvider({
            baseUrl: config.baseUrl,
            http: deps.http,
            ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
            ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
            ...(config.headers === undefined ? {} : { headers: config.headers }),
            ...(config.outputCapField === undefined ? {} : { outputCapField: config.outputCapField }),
          });
  }
  const registry = createProviderRegistry(map);
  const fallback = options?.defaultProvider ?? "local";
  const routing = options?.routing ?? {};
  const unknown = [...Object.entries(routing).map(([from, to]) => [`media.routing.${from}`, to] as const), ["media.defaultProvider", fallback] as const].filter(([, to]) => !registry.inference(to));
  if (unknown.length > 0) throw new GatewayOptionsError(unknown.map(([path, to]) => `${path}: provider "${to}" is not configured (configured: ${registry.names().join(", ")})`));
  const nameFor = (card: ModelCard) => (registry.inference(card.provider) ? card.provider : (routing[card.provider] ?? fallback));
  return {
    registry,
    nameFor,
    inference(card) {
      const name = nameFor(card);
      return { name, provider: registry.inference(name)! };
    },
    video(card) {
      const name = nameFor(card);
      const provider = registry.video(name);
      if (!provider) throw new GatewayError("not_configured", `Provider "${name}" serving ${card.provider}:${card.modelId} has no video API; route it to one in options.media.`);
      return { name, provider };
    },
    videoByName(name) {
      const provider = registry.video(name);
      if (!provider) throw new GatewayError("not_configured", `The video provider "${name}" is no longer configured.`);
      return provider;
    },
  };
}
