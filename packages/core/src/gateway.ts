/** `createGateway`: wires options, services and the route table into one {@link Gateway}. */
import { createCatalog } from "./catalog/catalog.js";
import { NATIVE_CATALOG, NATIVE_CATALOG_VERSION } from "./catalog/generated/native-catalog.js";
import { catalogRoutes } from "./catalog/routes.js";
import { systemClock } from "./clock.js";
import type { GatewayContext } from "./context.js";
import type { Gateway } from "./gateway-types.js";
import { createFetchHttpClient, urlForDisplay } from "./http/client.js";
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
import { createKeyGovernance } from "./keys/governance.js";
import { createFundingGuard } from "./settlement/funding.js";
import { keyRoutes } from "./keys/routes.js";
import { createLedgerService } from "./ledger/service.js";
import { ledgerRoutes } from "./ledger/routes.js";
import { startSweeper } from "./ledger/sweeper.js";
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
import { chatRoutes } from "./chat/routes.js";
import { createVideoService } from "./video/service.js";
import { videoRoutes } from "./video/routes.js";
import { createAuthService } from "./auth/service.js";
import { authRoutes } from "./auth/routes.js";
import { createUsageService } from "./usage/service.js";
import { usageRoutes } from "./usage/routes.js";
import { resolveRateLimits } from "./auth/options.js";
import { describeSignInPolicy, signInPolicy } from "./auth/domains.js";
import { tokenCounter } from "./metering/tokens.js";
import { createSignatureVerifier } from "./chain/signatures.js";
import { createBodyBudget } from "./http/body-budget.js";
import { createBodyPacer } from "./http/body-pace.js";
import { createRateLimiter } from "./http/rate-limit.js";
import { createObservability } from "./observability/service.js";
import { observabilityRoutes } from "./observability/routes.js";

/** The sweeper's batch of overdue intents, and the most batches of one run. */
const SWEEP_BATCH = 500;
const SWEEP_BATCHES = 100;

/** Every route of the gateway, in table order; the last one serves the OpenAPI document of them all. */
export function gatewayRoutes(): AnyRoute[] {
  const routes = [
    ...catalogRoutes(),
    ...authRoutes(),
    ...keyRoutes(),
    ...ledgerRoutes(),
    ...feedbackRoutes(),
    ...agentsRoutes(),
    ...dispenserRoutes(),
    ...settlementRoutes(),
    ...usageRoutes(),
    ...mediaRoutes(),
    ...chatRoutes(),
    ...videoRoutes(),
    ...observabilityRoutes(),
  ];
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
  const observability = createObservability(o, { store, http, clock });
  const { telemetry } = observability.metrics;
  const funding = createFundingGuard({ store, clock, chains: o.chains, settlement: o.settlement, telemetry });
  const keys = createKeyService({
    store,
    clock,
    ids,
    compat: o.compat,
    telemetry,
    funding,
    liveKeysPerWallet: o.liveKeysPerWallet,
    ...(o.keyCacheMs === undefined ? {} : { keyCacheMs: o.keyCacheMs }),
  });
  const keyGovernance = createKeyGovernance({
    store,
    clock,
    ids,
    compat: o.compat,
    funding,
    onChange: () => keys.forget(),
    liveKeysPerWallet: o.liveKeysPerWallet,
  });
  const ledger = createLedgerService({ store, catalog, clock, ids, options: { intentTtlMs, feeBps, openIntentsPerKey: o.openIntentsPerKey }, telemetry });
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
    keyGovernance,
    funding,
    ledger,
    feeBps,
    compat: o.compat,
    telemetry,
    logger: observability.logger,
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
    keyGovernance,
    ledger,
    x402,
    feedback: createFeedbackService(deps),
    agents: createAgentsService(deps),
    dispenser: createDispenserService(deps),
    settlement: createSettlementService(deps),
    media,
    video: createVideoService(deps, media.upstreams),
    auth: createAuthService(deps, createSignatureVerifier(o.chains ?? [])),
    usage: createUsageService(deps),
  };
  const rateLimits = resolveRateLimits(o.rateLimits);
  const internalSecret = o.internalSecret ?? o.settlement?.internalSecret;
  const walletMode = o.walletAuth ?? "verified";
  const pending = new Set<Promise<unknown>>();
  const background = {
    // One reaction per tracked call (every paid call is tracked): the failures are swallowed at close.
    track(work: Promise<unknown>) {
      pending.add(work);
      const done = () => void pending.delete(work);
      work.then(done, done);
    },
  };
  // Loaded before the first paid call needs it (an embeddings upstream reporting 0 tokens is counted with it).
  void tokenCounter();
  const signIn = signInPolicy({ domains: o.auth?.domains, corsOrigins: o.cors?.origins, nodeEnv: globalThis.process?.env?.NODE_ENV });
  const bodyPace = createBodyPacer(o.bodyPace);
  closers.push(() => bodyPace.close());
  const ctx: GatewayContext = {
    services,
    clock,
    ids,
    http,
    limits: { jsonBodyBytes: o.jsonBodyBytes, mediaBodyBytes: o.mediaBodyBytes, unpaidBodyBytes: o.unpaidBodyBytes },
    compat: o.compat,
    wallets: { mode: walletMode, authenticate: o.authenticateWallet, internalSecret, cookieName: o.auth?.cookie?.name ?? "tollgate_session" },
    rateLimits: { ...rateLimits, trustedProxies: o.trustedProxies ?? 0, limiter: createRateLimiter({ clock, maxSubjects: rateLimits.maxTrackedClients }) },
    bodyBudget: createBodyBudget(o.inFlightBodyBytes, o.inFlightBodyBytesPerClient),
    bodyPace,
    signIn,
    sessionCookie: { sameSite: o.auth?.cookie?.sameSite ?? (o.cors?.credentials ? "none" : "lax"), secure: o.auth?.cookie?.secure },
    observability,
    background,
  };
  const handle = createRequestHandler(createRouter(gatewayRoutes()), ctx, o.cors);
  let closed: Promise<void> | undefined;
  const sweepMs = o.sweepIntervalMs ?? 60_000;
  // Expiry is enforced on every read; the sweeper only returns idle reservations to budgets sooner.
  // Up to 100 batches of 500 a run, requests served between batches; a run that stops at that cap
  // is followed soon by the next (ledger/sweeper.ts), so a backlog of lapsed holds drains fast.
  const sweep = async () => {
    const expired = await services.ledger.sweep(SWEEP_BATCH, SWEEP_BATCHES);
    await services.auth.prune();
    return expired >= SWEEP_BATCH * SWEEP_BATCHES;
  };
  const sweeper =
    sweepMs > 0 ? startSweeper({ intervalMs: sweepMs, run: sweep, onError: (err) => observability.logger.error({ err }, "sweep failed") }) : undefined;
  return {
    services,
    metrics: observability.metrics.registry,
    handle,
    fetch: async (request) => toWebResponse(await handle(fromWebRequest(request))),
    describe: () => [
      ...(o.store ? [] : ["store: in-memory (not persisted; pass a store such as createSqliteStore)"]),
      `catalog: ${catalog.size} models from ${catalog.providers().length} providers (version ${catalog.version})`,
      `extended catalog (/v1/models/all): ${o.extendedCards ? `${extendedCatalog.size} models` : "not configured, serving the native catalog"}`,
      `models service (/api/models): ${o.modelsService ? urlForDisplay(o.modelsService.url) : "not configured, serving the native catalog"}`,
      `keys and payment intents: on (intent TTL ${intentTtlMs / 1000} s, platform fee ${feeBps} bps)`,
      walletMode === "trusted-header"
        ? "wallet auth: TRUSTED-HEADER: x-session-user-address is believed as sent; only run so behind a proxy that authenticates users"
        : `wallet auth: verified (SIWE sessions${internalSecret ? ", internal secret" : ""}${o.authenticateWallet ? ", authenticateWallet hook" : ""}, keys of the wallet); sign-in domain: ${describeSignInPolicy(
            signIn,
          )}`,
      `rate limits: ${describeLimits(rateLimits)}`,
      ...descriptions.map((d) => d()),
      observability.describe(),
      `cors: ${o.cors ? (o.cors.origins === "*" ? "any origin" : o.cors.origins.join(", ")) : "off"}`,
    ],
    close: () => {
      sweeper?.stop();
      return (closed ??= (async () => {
        // Billing still running (a stream its client left) gets the store while it finishes, within a bound.
        if (pending.size > 0) await settleWithin([...pending].map((work) => work.catch(() => undefined)), CLOSE_WAIT_MS);
        for (const fn of closers) await fn();
        await store.close();
      })());
    },
  };
}

/** How long `close()` waits for background billing before it closes the store. */
const CLOSE_WAIT_MS = 30_000;

/** Resolves when every one of `work` has settled, or after `ms`, whichever is first. */
async function settleWithin(work: Promise<unknown>[], ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([Promise.all(work), bound]);
  clearTimeout(timer);
}

function describeLimits(r: ReturnType<typeof resolveRateLimits>): string {
  const ip = Object.entries(r.perIp)
    .map(([g, n]) => `${g} ${n === undefined ? "off" : `${n}/min`}`)
    .join(", ");
  const wallet = r.perWallet.keys === undefined ? "off" : `${r.perWallet.keys}/min`;
  const chat = r.unpaidChatBytes === undefined ? "off" : `${r.unpaidChatBytes} bytes/min`;
  return `per IP ${ip}, unpaid chat tokenizing ${chat}; per wallet key writes ${wallet}; per key ${r.keyDefault === undefined ? "only keys with their own rateLimit" : `${r.keyDefault}/min default`} (in memory, per instance)`;
}
