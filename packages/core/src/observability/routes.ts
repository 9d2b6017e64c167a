/**
 * The operational routes: `GET /` (an index), `GET /healthz` (liveness), `GET /readyz`
 * (readiness) and `GET /metrics` (Prometheus). None takes an API credential or counts against a
 * rate limit; `/metrics` takes its own bearer token when `metrics.token` is set.
 */
import pkg from "../../package.json" with { type: "json" };
import { GatewayError } from "../errors.js";
import { API_VERSION } from "../http/openapi.js";
import { bytes, json } from "../http/respond.js";
import { defineRoute, type AnyRoute } from "../http/route.js";
import { secretsEqual } from "../secrets.js";
import { OPERATIONS_TAG } from "./requests.js";

/** The package version the index reports. */
export const GATEWAY_VERSION: string = pkg.version;

/** The token of `Authorization: Bearer <token>` (or a bare token). */
function bearerOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(header.trim());
  return (m ? m[1]! : header).trim();
}

/** Builds the operational route table. */
export function observabilityRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: "/",
      tag: OPERATIONS_TAG,
      summary:
        "Index: the gateway's name and version, and links (relative to the gateway's base URL) to the model list, health, readiness, metrics and the OpenAPI document.",
      handle: ({ gateway }) =>
        json({
          name: "tollgate",
          version: GATEWAY_VERSION,
          apiVersion: API_VERSION,
          links: {
            models: "/v1/models",
            health: "/healthz",
            readiness: "/readyz",
            ...(gateway.observability.metricsEnabled ? { metrics: "/metrics" } : {}),
            docs: "/openapi.json",
          },
        }),
    }),
    defineRoute({
      method: "GET",
      path: "/healthz",
      tag: OPERATIONS_TAG,
      summary: 'Liveness: 200 {status:"ok"} whenever the process serves requests; checks nothing else.',
      handle: () => json({ status: "ok" }),
    }),
    defineRoute({
      method: "GET",
      path: "/readyz",
      tag: OPERATIONS_TAG,
      summary:
        'Readiness: 200 {status:"ready", checks} when the store answers with every migration applied, each configured chain RPC serves its chain id and each configured upstream answers; else 503 not_ready with the checks in details. Cached for a couple of seconds.',
      handle: async ({ gateway }) => {
        const report = await gateway.observability.readiness.check();
        if (report.ready) return json({ status: "ready", checks: report.checks }, { headers: { "cache-control": "no-store" } });
        const failed = Object.entries(report.checks)
          .filter(([, c]) => !c.ok)
          .map(([name, c]) => `${name}: ${c.detail}`);
        throw new GatewayError("not_ready", `Not ready: ${failed.join("; ")}.`, {
          details: { checks: report.checks },
          headers: { "cache-control": "no-store" },
        });
      },
    }),
    defineRoute({
      method: "GET",
      path: "/metrics",
      tag: OPERATIONS_TAG,
      summary: "Prometheus metrics of this gateway (text exposition format); with metrics.token set, only with Authorization: Bearer <token>.",
      security: { accepts: ["metricsToken"], optional: true },
      handle: async ({ request, gateway }) => {
        const o = gateway.observability;
        if (!o.metricsEnabled) throw new GatewayError("not_found", "Metrics are turned off on this gateway (metrics.enabled: false).");
        if (o.metricsToken !== undefined) {
          const challenge = { "www-authenticate": 'Bearer realm="metrics"' };
          const token = bearerOf(request.headers.authorization);
          if (token === undefined)
            throw new GatewayError("authentication_required", "Send the metrics token as Authorization: Bearer <token>.", { headers: challenge });
          if (!secretsEqual(token, o.metricsToken)) throw new GatewayError("unauthorized", "The metrics token is wrong.", { headers: challenge });
        }
        const registry = o.metrics.registry;
        return bytes(new TextEncoder().encode(await registry.metrics()), registry.contentType, { headers: { "cache-control": "no-store" } });
      },
    }),
  ];
}
