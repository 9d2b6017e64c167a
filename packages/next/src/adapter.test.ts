// Next.js calls a catch-all route's handlers with real Web Requests; `route` plays the App Router:
// paths under the route's folder reach the handlers, everything else gets the app's own 404.
import { createGateway, createMemoryStore } from "@tollgate/core";
import { runAdapterConformance } from "@tollgate/testing";
import { expect, it } from "vitest";
import { createHandler, type NextRouteHandlers } from "./index.js";

runAdapterConformance("next", {
  start: async (gateway, { basePath, ...options }) => {
    const handlers = createHandler(gateway, { basePath, ...options });
    return {
      fetch: async (request) => {
        const { pathname } = new URL(request.url);
        const handler = handlers[request.method as keyof NextRouteHandlers];
        const routed = pathname === basePath || pathname.startsWith(`${basePath}/`);
        return routed && handler ? handler(request) : new Response("This page could not be found.", { status: 404 });
      },
    };
  },
});

it("strips basePath only at a segment boundary, even when Next hands it a path outside", async () => {
  const gateway = createGateway({ store: createMemoryStore(), sweepIntervalMs: 0 });
  const { GET } = createHandler(gateway, { basePath: "/gw/" });
  expect((await GET(new Request("http://app.test/gw/v1/models?limit=1"))).status).toBe(200);
  const outside = await GET(new Request("http://app.test/gwx/v1/models"));
  expect([outside.status, ((await outside.json()) as { error: { message: string } }).error.message]).toEqual([404, "No route for GET /gwx/v1/models."]);
  await gateway.close();
});
