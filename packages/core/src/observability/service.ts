/**
 * The observability of one gateway: its logger, its metrics registry with the telemetry the
 * services report to, the readiness probe and the per-request recorder. Built once by
 * `createGateway` from its options.
 */
import type { Clock } from "../clock.js";
import type { ResolvedOptions } from "../options.js";
import type { Store } from "../store/types.js";
import { createReadiness, type Readiness, type ReadinessSources } from "./health.js";
import { gatewayLogger, type GatewayLogger } from "./logger.js";
import { createGatewayMetrics, disabledMetrics, type GatewayMetrics } from "./metrics.js";
import { createRequestObserver, type RequestObserver } from "./requests.js";
import { noopTelemetry } from "./telemetry.js";

/** What the observability routes and the request pipeline use. */
export interface Observability {
  /** Where the gateway's own warnings and errors go (the host's logger, else the console). */
  readonly logger: GatewayLogger;
  readonly metrics: GatewayMetrics;
  /** Whether metrics are counted and `/metrics` is served. */
  readonly metricsEnabled: boolean;
  /** The bearer token `/metrics` requires, when set. */
  readonly metricsToken: string | undefined;
  readonly readiness: Readiness;
  readonly requests: RequestObserver;
  /** The start-up line saying what is on. */
  describe(): string;
}

/** Builds it from validated options. */
export function createObservability(o: ResolvedOptions, deps: { store: Store; http: ReadinessSources["http"]; clock: Clock }): Observability {
  const logger = gatewayLogger(o.logger);
  const metricsEnabled = o.metrics?.enabled ?? true;
  const store = deps.store;
  const metrics = metricsEnabled
    ? createGatewayMetrics({
        ...(store.countOpenIntents ? { openReservations: () => store.countOpenIntents!(deps.clock.now()) } : {}),
        ...(store.groupCommitStats ? { groupCommit: () => store.groupCommitStats!() } : {}),
        processMetrics: o.metrics?.processMetrics ?? false,
      })
    : disabledMetrics(noopTelemetry);
  const readiness = createReadiness({
    store,
    http: deps.http,
    clock: deps.clock,
    chains: o.chains ?? [],
    providers: o.media?.providers ?? {},
    timeoutMs: o.readiness?.timeoutMs ?? 2000,
    cacheMs: o.readiness?.cacheMs ?? 2000,
    onError: (check, err) => logger.warn({ check, err }, "readiness check failed"),
  });
  const metricsToken = o.metrics?.token;
  return {
    logger,
    metrics,
    metricsEnabled,
    metricsToken,
    readiness,
    requests: createRequestObserver({ log: o.logger ? logger : undefined, fallback: logger, metrics }),
    describe: () =>
      `observability: request logs ${o.logger ? "to the given logger" : "off (pass a logger)"}; health /healthz, readiness /readyz; metrics ${
        metricsEnabled ? `/metrics${metricsToken ? " (bearer token required)" : ""}` : "off"
      }`,
  };
}
