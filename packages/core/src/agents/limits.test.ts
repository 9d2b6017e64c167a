/**
 * The public agent routes (the card list, the search and the directory proxy) share a per-client-IP
 * minute, `rateLimits.perIp.agents` (default 120): each scans every card, or calls the directory
 * with the operator's key. A directory answer larger than 4 MiB is refused, not relayed. The search
 * reads and splits the cards at most once per 5 s.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManualClock } from "../clock.js";
import { createGateway } from "../gateway.js";
import { createMemoryStore } from "../store/memory.js";

let directory: Server;
let url = "";
let calls = 0;
beforeAll(async () => {
  // A directory whose answer is 4 MiB and a byte of JSON.
  directory = createServer((req, res) => {
    calls++;
    req.resume();
    req.on("end", () =>
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ agents: [{ name: "x", readme: "r".repeat(4 * 1024 * 1024) }] })),
    );
  });
  await new Promise<void>((r) => directory.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(directory.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => directory.close(() => r())));

const get = (gateway: ReturnType<typeof createGateway>, path: string, ip: string) => {
  const [p, q = ""] = path.split("?");
  return gateway.handle({ method: "GET", path: p!, query: new URLSearchParams(q), headers: {}, remoteAddress: ip });
};

describe("public agent routes", () => {
  it("share a per-client-IP minute: past it 429 with Retry-After; another client, or the next minute, passes", async () => {
    const clock = createManualClock();
    const gateway = createGateway({ store: createMemoryStore(), clock, sweepIntervalMs: 0, rateLimits: { perIp: { agents: 3 } } });
    const ip = "198.51.100.4";
    expect((await get(gateway, "/agents", ip)).status).toBe(200);
    expect((await get(gateway, "/agents/search?q=weather", ip)).status).toBe(200);
    expect((await get(gateway, "/api/directory/agents?q=x", ip)).status).toBe(503); // not configured, still counted
    const refused = await get(gateway, "/agents/search?q=weather", ip);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect((await get(gateway, "/agents", "198.51.100.5")).status).toBe(200);
    clock.advance(60_000);
    expect((await get(gateway, "/agents", ip)).status).toBe(200);
    await gateway.close();
  });

  it("a directory answer over 4 MiB is a 502 naming the limit, not relayed", async () => {
    const gateway = createGateway({ store: createMemoryStore(), sweepIntervalMs: 0, agents: { directory: { url } } });
    const res = await get(gateway, "/api/directory/agents?q=x", "198.51.100.6");
    expect(res.status).toBe(502);
    const body = res.body as { kind: "json"; value: { error: { code: string; message: string } } };
    expect(body.value.error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("more than 4194304 bytes") });
    expect(calls).toBe(1);
    await gateway.close();
  });

  it("search reuses the cards it read for 5 s: a card written through the service is found at once, one written to the store directly (another instance) within 5 s", async () => {
    const clock = createManualClock();
    const store = createMemoryStore();
    const gateway = createGateway({ store, clock, sweepIntervalMs: 0 });
    const agents = gateway.services.agents;
    const card = (n: number, name: string) => ({ walletAddress: `0x${n.toString(16).padStart(40, "0")}`, name, description: "", skills: [], plugins: [] });
    expect(await agents.search("weather")).toEqual([]);
    await agents.upsert(card(1, "Weather oracle"));
    expect((await agents.search("weather")).map((c) => c.name)).toEqual(["Weather oracle"]);
    const other = createGateway({ store, clock, sweepIntervalMs: 0 });
    expect((await other.services.agents.upsert(card(2, "Weather station"))).name).toBe("Weather station");
    await other.close();
    expect((await agents.search("weather")).map((c) => c.name)).toEqual(["Weather oracle"]);
    clock.advance(5_000);
    expect((await agents.search("weather")).map((c) => c.name)).toEqual(["Weather oracle", "Weather station"]);
    await agents.remove(card(1, "").walletAddress);
    expect((await agents.search("weather")).map((c) => c.name)).toEqual(["Weather station"]);
    await gateway.close();
  });
});
