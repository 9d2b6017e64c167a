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

/** A sign-in nonce request (limited per IP) with `headers`. */
const signInNonce = (headers: Record<string, string>) =>
  new Request("http://app.test/api/auth/nonce", {
    method: "POST",
    headers: Object.assign({ "content-type": "application/json" }, headers),
    body: JSON.stringify({ address: "0x00000000000000000000000000000000000000aa", chainId: 84532 }),
  });

it("keys the per-IP limits on clientIp: a client rotating X-Forwarded-For gets nowhere, two clients are counted apart", async () => {
  const gateway = createGateway({ store: createMemoryStore(), sweepIntervalMs: 0, rateLimits: { perIp: { auth: 3 } } });
  const { POST } = createHandler(gateway, { clientIp: (request) => request.headers.get("x-real-ip") ?? undefined });
  const nonce = (realIp: string, forged: string) => POST(signInNonce({ "x-real-ip": realIp, "x-forwarded-for": forged }));
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await nonce("203.0.113.7", `6.6.6.${i}`)).status);
  expect(statuses).toEqual([200, 200, 200, 429, 429]);
  expect((await nonce("203.0.113.8", "6.6.6.6")).status).toBe(200);
  await gateway.close();
});

it("without clientIp and without trusted proxies, a route handler has no client address: the per-IP limits cannot apply", async () => {
  const gateway = createGateway({ store: createMemoryStore(), sweepIntervalMs: 0, rateLimits: { perIp: { auth: 3 } } });
  const { POST } = createHandler(gateway);
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await POST(signInNonce({ "x-forwarded-for": `6.6.6.${i}` }))).status);
  expect(statuses).toEqual([200, 200, 200, 200, 200]);
  await gateway.close();
});
