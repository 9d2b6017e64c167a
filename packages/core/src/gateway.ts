/** `createGateway`: wires options, services and the route table into one {@link Gateway}. */
import { createCatalog } from "./catalog/catalog.js";
import { NATIVE_CATALOG, NATIVE_CATALOG_VERSION } from "./catalog/generated/native-catalog.js";
import { catalogRoutes } from "./catalog/routes.js";
import { systemClock } from "./clock.js";
import type { GatewayContext } from "./context.js";
import type { Gateway } from "./gateway-types.js";
import { createFetchHttpClient } from "./http/client.js";
import { fromWebRequest, toWebResponse } from "./http/fetch.js";
import { createRequestHandler } from "./http/handle.js";
import { openApiRoute } from "./http/openapi.js";
import type { AnyRoute } from "./http/route.js";
import { createRouter } from "./http/router.js";
import { randomIds } from "./ids.js";
import { resolveOptions, type GatewayOptions } from "./options.js";
import type { GatewayServices } from "./services.js";
import { createMemoryStore } from "./store/memory.js";
import { createKeyService } from "./keys/service.js";
import { keyRoutes } from "./keys/routes.js";
import { createLedgerService } from "./ledger/service.js";
import { ledgerRoutes } from "./ledger/routes.js";
import type { CapabilityDeps } from "./capability.js";
import { createX402Service } from "./x402/service.js";
import { createFeedbackService } from "./feedback/service.js";
import { feedbackRoutes } from "./feedback/routes.js";
import { createAgentsService } from "./agents/service.js";
import { agentsRoutes } from "./agents/routes.js";
import { createDispenserService } from "./dispenser/service.js";
import { dispenserRoutes } from "./dispenser/routes.js";
import { createSettlementService } from "./settlement/service.js";
import { settlementRoutes } from "./settlement/routes.js";
import { createMediaService } from "./media/service.js";
import { mediaRoutes } from "./media/routes.js";
import { createVideoService } from "./video/service.js";
import { videoRoutes } from "./video/routes.js";


/** Every route of the gateway, in table order; the last one serves the OpenAPI document of them all. */
export function gatewayRoutes(): AnyRoute[] {
  const routes = [...catalogRoutes(), ...keyRoutes(), ...ledgerRoutes(), ...feedbackRoutes(), ...agentsRoutes(), ...dispenserRoutes(), ...settlementRoutes(), ...mediaRoutes(), ...videoRoutes()];
  routes.push(openApiRoute(routes));
  return routes;
}

/**
 * Creates a gateway. Options are validated with zod; invalid options throw a
 * `GatewayOptionsError` listing every problem at once. With no options it serves the bundled
 * catalog with an in-memory store.
 */
export function createGateway(options: GatewayOptions = {}): Gateway<GatewayServices> {
  const o = resolveOptions(options);
  const catalogOptions = o.providerPriority ? { providerPriority: o.providerPriority } : {};
  const catalog = o.nativeCards
    ? createCatalog(o.nativeCards, catalogOptions)
    : createCatalog(NATIVE_CATALOG, { ...catalogOptions, version: NATIVE_CATALOG_VERSION });
  const extendedCatalog = o.extendedCards ? createCatalog(o.extendedCards, catalogOptions) : catalog;
  const store = o.store ?? createMemoryStore();
  const clock = o.clock ?? systemClock;
  const ids = o.ids ?? randomIds;
  const feeBps = o.feeBps ?? 100;
  const intentTtlMs = o.intentTtlMs ?? 15 * 60_000;
  const http = o.http ?? createFetchHttpClient();
  const keys = createKeyService({ store, clock, ids, compat: o.compat });
  const ledger = createLedgerService({ store, catalog, clock, ids, options: { intentTtlMs, feeBps } });
  const closers: (() => Promise<void> | void)[] = [];
  const descriptions: (() => string)[] = [];
  const deps: CapabilityDeps = {
    store,
    catalog,
    clock,
    ids,
    http,
    options: o,
    keys,
    ledger,
    feeBps,
    compat: o.compat,
    onClose: (fn) => void closers.push(fn),
    describe: (line) => void descriptions.push(line),
  };
  const x402 = createX402Service(deps);
  const media = createMediaService(deps, x402);
  const services: GatewayServices = {
    catalog,
    extendedCatalog,
    modelsService: o.modelsService,
    store,
    feeBps,
    keys,
    ledger,
    x402,
    feedback: createFeedbackService(deps),
    agents: createAgentsService(deps),
    dispenser: createDispenserService(deps),
    settlement: createSettlementService(deps),
    media,
    video: createVideoService(deps, media.upstreams),
  };
  const ctx: GatewayContext = {
    services,
    clock,
    ids,
    http,
    limits: { jsonBodyBytes: o.jsonBodyBytes, mediaBodyBytes: o.mediaBodyBytes },
    compat: o.compat,
  };
  const handle = createRequestHandler(createRouter(gatewayRoutes()), ctx, o.cors);
  let closed: Promise<void> | undefined;
  const sweepMs = o.sweepIntervalMs ?? 60_000;
  // Expiry is enforced on every read; the sweeper only returns idle reservations to budgets sooner.
  const sweeper = sweepMs > 0 ? setInterval(() => void services.ledger.sweep().catch((e: unknown) => console.error("[tollgate] sweep failed:", e)), sweepMs) : undefined;
  (sweeper as { unref?: () => void } | undefined)?.unref?.();
  return {
    services,
    handle,
    fetch: async (request) => toWebResponse(await handle(fromWebRequest(request))),
    describe: () => [
      ...(o.store ? [] : ["store: in-memory (not persisted; pass a store such as createSqliteStore)"]),
      `catalog: ${catalog.size} models from ${catalog.providers().length} providers (version ${catalog.version})`,
      `extended catalog (/v1/models/all): ${o.extendedCards ? `${extendedCatalog.size} models` : "not configured, serving the native catalog"}`,
      `models service (/api/models): ${o.modelsService ? o.modelsService.url : "not configured, serving the native catalog"}`,
      `keys and payment intents: on (intent TTL ${intentTtlMs / 1000} s, platform fee ${feeBps} bps)`,
      ...descriptions.map((d) => d()),
      `cors: ${o.cors ? (o.cors.origins === "*" ? "any origin" : o.cors.origins.join(", ")) : "off"}`,
    ],
    close: () => {
      if (sweeper) clearInterval(sweeper);
      return (closed ??= (async () => {
        for (const fn of closers) await fn();
        await store.close();
      })());
    },
  };
}
