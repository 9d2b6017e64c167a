import type { Registry } from "prom-client";
import type { GatewayRequest, GatewayResponse } from "./http/types.js";

/**
 * A running gateway: the one entry point `handle` on the plain shapes, a Web `fetch` wrapper for
 * Next.js / edge runtimes / tests, the domain services for use from code, and `close`.
 */
export interface Gateway<Services = unknown> {
  /** The domain services (catalog, keys, ledger, …) for direct use from application code. */
  readonly services: Services;
  /**
   * The gateway's own prom-client registry (never the global one: two gateways in one process
   * count apart). `GET /metrics` serves it; a host app may serve it itself, e.g.
   * `res.type(gateway.metrics.contentType).send(await gateway.metrics.metrics())`, or merge it
   * with its own (`Registry.merge([register, gateway.metrics])`). Empty when `metrics.enabled` is false.
   */
  readonly metrics: Registry;
  /** Serves one request. Never rejects: every failure becomes an error envelope response. */
  handle(request: GatewayRequest): Promise<GatewayResponse>;
  /** Serves a Web `Request` (Next.js route handlers, edge runtimes, tests). */
  fetch(request: Request): Promise<Response>;
  /** One line per capability saying whether it is enabled and how (printed by the CLI at start-up). */
  describe(): string[];
  /**
   * Stops background work and closes the store. Paid calls still running or being billed (media,
   * embeddings, video submissions, and chat, whose reasoning model runs on to its usage after its
   * client left) get up to 30 s to settle or release their payment first; one that takes longer
   * loses its store, and its reservation lapses uncharged. Idempotent.
   */
  close(): Promise<void>;
}
