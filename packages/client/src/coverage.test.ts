/**
 * A guard that the client keeps up with the gateway: every method of every resource is called
 * once against a recording transport, each request is matched with the gateway's own router, and
 * the set of routes reached must be the whole route table. A new route without a client method
 * (or a client method on a path the gateway does not serve) fails here. The behaviour of each
 * method against a real gateway is tested in the resource test files.
 */
import { createRouter, gatewayRoutes } from "@tollgate/core";
import { expect, it } from "vitest";
import { createTollgateClient } from "./client.js";

it("the client has a method for every route of the gateway, and every method reaches a route", async () => {
  const sent: { method: string; path: string }[] = [];
  const client = createTollgateClient({
    baseUrl: "http://gateway.test",
    apiKey: `svc-${"A".repeat(43)}`,
    sessionAddress: "0x00000000000000000000000000000000000000a1",
    networkId: 8453,
    maxRetries: 0,
    fetch: async (url, init) => {
      sent.push({ method: init?.method ?? "GET", path: new URL(String(url)).pathname });
      const stream = String(url).endsWith("/stream");
      return new Response(stream ? "data: [DONE]\n\n" : "{}", { status: 200, headers: { "content-type": stream ? "text/event-stream" : "application/json" } });
    },
  });

  const unreached: string[] = [];
  /** Calls every method of a resource group, and of the groups nested in it (`chat.completions`). */
  const visit = async (path: string, resource: Record<string, unknown>): Promise<void> => {
    for (const [name, method] of Object.entries(resource)) {
      if (method !== null && typeof method === "object") {
        await visit(`${path}.${name}`, method as Record<string, unknown>);
        continue;
      }
      if (typeof method !== "function") continue;
      const before = sent.length;
      try {
        const result = await (method as (...args: unknown[]) => unknown).call(resource, "id-1", { file: new Blob(["x"]), image: new Blob(["x"]) });
        if (result && typeof result === "object" && Symbol.asyncIterator in result) for await (const _ of result as AsyncIterable<unknown>) break;
      } catch {
        // Only whether a request went out matters here.
      }
      if (sent.length === before) unreached.push(`${path}.${name}`);
    }
  };
  for (const [resourceName, resource] of Object.entries(client)) {
    if (typeof resource === "function") continue;
    await visit(resourceName, resource as Record<string, unknown>);
  }
  // Top-level methods other than the generic `request`: `openapi()`.
  for (const [name, method] of Object.entries(client)) {
    if (typeof method !== "function" || name === "request") continue;
    const before = sent.length;
    await (method as () => Promise<unknown>).call(client);
    if (sent.length === before) unreached.push(name);
  }

  const router = createRouter(gatewayRoutes());
  const reached = new Set<string>();
  const strays: string[] = [];
  for (const { method, path } of sent) {
    const match = router.match(method, path);
    if (match.kind === "found") reached.add(`${match.route.method} ${match.route.path}`);
    else strays.push(`${method} ${path}`);
  }
  // Aliases serve old clients; the client calls the canonical path. The operational routes (index,
  // health, readiness, metrics) are for probes and scrapers, not API clients: no client methods.
  const all = gatewayRoutes()
    .filter((r) => !r.summary?.startsWith("Alias of") && r.tag !== "operations")
    .map((r) => `${r.method} ${r.path}`);
  expect(unreached, "client methods that sent nothing").toEqual([]);
  expect(strays, "requests no route serves").toEqual([]);
  expect(all.filter((r) => !reached.has(r)), "routes without a client method").toEqual([]);
});
