/**
 * The agent discovery route suite (docs/discovery.md "Agents"): seeded cards, relevance search, one
 * card by address, and the external directory client against a local stub directory, through
 * `gateway.fetch` on a real store. A store's test file runs it in one line:
 *
 * ```ts
 * runAgentRouteSuite("sqlite", { createStore: () => createSqliteStore({ filename: tmpFile() }) });
 * ```
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway } from "@tollgate/core";
import type { GatewayOptions, GatewayOptionsError } from "@tollgate/core";
import { closedPortUrl, startDirectoryStub, type DirectoryStub } from "./directory-stub.js";
import { expectError, withGateway, type GatewaySuiteOptions, type Harness } from "./gateway-suite-fixtures.js";

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
const MIXED = "0xABCDEF0000000000000000000000000000000001";
const plugin = (name: string) => ({ registryId: `reg-${name}`, name, origin: `https://plugins.example.com/${name}` });

/** Cards whose only link to "translator" sits in a different field each. */
const SEED = [
  {
    walletAddress: MIXED,
    name: "Translator",
    description: "Turns text into other languages.",
    skills: ["languages"],
    plugins: [{ ...plugin("deepl"), tools: ["translate"] }],
    protocols: ["a2a"],
    endpoint: "https://agents.example.com/t",
    model: "openai/gpt-4o",
    x402Support: true,
    createdAt: 1000,
  },
  { walletAddress: addr(2), name: "Polyglot", description: "A translator for legal documents." },
  { walletAddress: addr(3), name: "Helper", skills: ["translator"] },
  { walletAddress: addr(4), name: "Bot", plugins: [plugin("translator-pro")] },
  { walletAddress: addr(5), name: "Weather", description: "Forecasts." },
  { walletAddress: addr(6), name: "Fast Translator Bot" },
];

/** The origin API's card fields as a card without them shows them (no chains configured). */
const ORIGIN_DEFAULTS = {
  schemaVersion: "1.0.0",
  dnaHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
  chain: null,
  licensePrice: "0",
  licenses: 0,
  cloneable: false,
};

/** Registers the agent route suite for the store `name` in the current vitest file. */
export function runAgentRouteSuite(name: string, options: GatewaySuiteOptions): void {
  const test = (title: string, fn: (h: Harness) => Promise<void>, extra: () => Partial<GatewayOptions> = () => ({})) =>
    it(title, () => withGateway(options, fn, extra()));
  const seeded = () => ({ agents: { seed: SEED } });
  const search = (h: Harness, query: string) => h.call("GET", `/agents/search${query}`);

  describe(`agent routes: ${name}`, () => {
    describe("cards", () => {
      test(
        "seeded cards: /agents lists them with defaults filled in, addresses lower-cased",
        async (h) => {
          const r = await h.call("GET", "/agents");
          expect(r.status).toBe(200);
          expect(r.body.total).toBe(SEED.length);
          expect(r.body.agents).toHaveLength(SEED.length);
          expect(r.body.agents[0]).toEqual({
            walletAddress: MIXED.toLowerCase(),
            name: "Translator",
            description: "Turns text into other languages.",
            plugins: [{ registryId: "reg-deepl", name: "deepl", origin: "https://plugins.example.com/deepl", tools: ["translate"] }],
            skills: ["languages"],
            protocols: ["a2a"],
            endpoint: "https://agents.example.com/t",
            model: "openai/gpt-4o",
            x402Support: true,
            createdAt: 1000,
            ...ORIGIN_DEFAULTS,
          });
          const helper = r.body.agents.find((a: any) => a.name === "Helper");
          expect(helper).toEqual({
            walletAddress: addr(3),
            name: "Helper",
            description: "",
            plugins: [],
            skills: ["translator"],
            protocols: [],
            x402Support: false,
            createdAt: h.clock.now(),
            ...ORIGIN_DEFAULTS,
          });
          expect(h.gateway.describe().join("\n")).toMatch(/agents .*6 seed cards.*directory .*not configured/);
        },
        seeded,
      );

      test(
        "/agent/{walletAddress}: any case → the card; unknown → 404 agent_not_found; malformed → 400",
        async (h) => {
          for (const address of [MIXED, MIXED.toLowerCase()]) {
            const r = await h.call("GET", `/agent/${address}`);
            expect(r.status).toBe(200);
            expect(r.body.name).toBe("Translator");
          }
          expectError(await h.call("GET", `/agent/${addr(99)}`), 404, "agent_not_found");
          for (const bad of ["0x123", "not-an-address", `${MIXED}00`])
            expectError(await h.call("GET", `/agent/${bad}`), 400, "invalid_request", "walletAddress");
        },
        seeded,
      );

      test(
        "seeding is an idempotent upsert: a second gateway on the same store keeps createdAt; upsert from code",
        async (h) => {
          const before = (await h.call("GET", "/agents")).body;
          h.clock.advance(60_000);
          const again = createGateway({ store: h.gateway.services.store, clock: h.clock, sweepIntervalMs: 0, agents: { seed: SEED } });
          await again.services.agents.ready();
          expect((await h.call("GET", "/agents")).body).toEqual(before);
          const updated = await h.gateway.services.agents.upsert({
            ...SEED[1]!,
            walletAddress: addr(2).toUpperCase().replace("0X", "0x"),
            name: "Polyglot Pro",
          });
          expect(updated).toMatchObject({ walletAddress: addr(2), name: "Polyglot Pro", createdAt: before.agents[1].createdAt });
          const added = await h.gateway.services.agents.upsert({ walletAddress: addr(7), name: "Newcomer" });
          expect(added.createdAt).toBe(h.clock.now());
          const after = (await h.call("GET", "/agents")).body;
          expect(after.total).toBe(SEED.length + 1);
          expect(after.agents.at(-1).name).toBe("Newcomer");
          await expect(h.gateway.services.agents.upsert({ walletAddress: "0x1", name: "" })).rejects.toMatchObject({
            code: "invalid_request",
            param: "walletAddress",
          });
          expect(await h.gateway.services.agents.remove(addr(7))).toBe(true);
          expectError(await h.call("GET", `/agent/${addr(7)}`), 404, "agent_not_found");
        },
        seeded,
      );

      it(`${name}: bad seeds are option errors, all reported at once`, () => {
        const dup = { walletAddress: MIXED.toLowerCase(), name: "Copy" };
        let issues: readonly string[] = [];
        try {
          createGateway({ agents: { seed: [...SEED, dup, { walletAddress: "0xnope", name: "" }] } });
        } catch (error) {
          issues = (error as GatewayOptionsError).issues;
        }
        expect([...issues].sort()).toEqual([
          expect.stringMatching(/^agents\.seed\.6\.walletAddress: repeats the address of seed card 0/),
          expect.stringMatching(/^agents\.seed\.7\.name: /),
          expect.stringMatching(/^agents\.seed\.7\.walletAddress: must be a 0x-prefixed/),
        ]);
      });

      test("no seed: an empty list", async (h) => {
        expect((await h.call("GET", "/agents")).body).toEqual({ agents: [], total: 0 });
        expect((await search(h, "?q=anything")).body).toEqual({ agents: [], total: 0 });
      });
    });

    describe("search", () => {
      test(
        "ranks an exact name over a name word, a skill, a plugin, then the description",
        async (h) => {
          const r = await search(h, "?q=translator");
          expect(r.status).toBe(200);
          expect(r.body.agents.map((a: any) => [a.name, a.score])).toEqual([
            ["Translator", 60],
            ["Fast Translator Bot", 10],
            ["Helper", 5],
            ["Bot", 4],
            ["Polyglot", 2],
          ]);
          expect(r.body.total).toBe(5);
          expect(r.body.agents[0]).toMatchObject({ walletAddress: MIXED.toLowerCase(), x402Support: true, score: 60 });
          // A phrase in the name outranks its words elsewhere; prefixes count less than words.
          expect((await search(h, "?q=Fast%20Translator")).body.agents.map((a: any) => [a.name, a.score]).slice(0, 2)).toEqual([
            ["Fast Translator Bot", 35],
            ["Translator", 10],
          ]);
          expect((await search(h, "?query=transl")).body.agents.map((a: any) => [a.name, a.score])).toEqual([
            ["Fast Translator Bot", 6],
            ["Translator", 6],
            ["Helper", 3],
            ["Bot", 2],
            ["Polyglot", 1],
          ]);
          expect((await search(h, `?q=${MIXED.toLowerCase()}`)).body.agents[0]).toMatchObject({ name: "Translator", score: 100 });
          expect((await search(h, "?q=zzz")).body).toEqual({ agents: [], total: 0 });
        },
        seeded,
      );

      test("q (or query) is required; limit default 8, clamped to 1..50", async (h) => {
        for (const query of ["", "?q=", "?q=%20%20", "?query=", "?limit=5"]) expectError(await search(h, query), 400, "invalid_request", "q");
        for (let i = 0; i < 60; i++) await h.gateway.services.agents.upsert({ walletAddress: addr(1000 + i), name: `Agent ${i}` });
        expect((await search(h, "?q=agent")).body.agents).toHaveLength(8);
        expect((await search(h, "?q=agent&limit=0")).body.agents).toHaveLength(1);
        const all = (await search(h, "?q=agent&limit=1000")).body;
        expect(all.agents).toHaveLength(50);
        expect(all.total).toBe(50);
        expect((await search(h, "?q=agent&limit=lots")).body.agents).toHaveLength(8);
      });
    });

    describe("directory", () => {
      let stub: DirectoryStub;
      beforeAll(async () => {
        stub = await startDirectoryStub();
      });
      afterAll(() => stub.close());
      const configured =
        (extra: Record<string, unknown> = {}) =>
        () => ({ agents: { directory: { url: `${stub.url}/`, apiKey: "dir-secret", timeoutMs: 5000, ...extra } } });
      const last = () => stub.requests.at(-1)!;

      test("not configured → 503 not_configured naming the option, on both paths", async (h) => {
        for (const path of ["/api/directory/agents", "/api/agentverse/agents"]) {
          const e = expectError(await h.call("GET", `${path}?q=x`), 503, "not_configured");
          expect(e.message).toContain("agents.directory.url");
        }
      });

      test(
        "maps the query to the upstream body (search_text, filters, limit clamp, offset, sort, direction)",
        async (h) => {
          stub.respond({ json: { agents: [], total: 0 } });
          const r = await h.call(
            "GET",
            "/api/directory/agents?search=weather&q=ignored&category=fetch-ai&tags=a,%20b,,c&limit=500&offset=20&sort=interactions&direction=asc",
          );
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          expect(last()).toMatchObject({ method: "POST", url: "/v1/search/agents" });
          expect(last().headers.authorization).toBe("Bearer dir-secret");
          expect(last().headers["content-type"]).toMatch(/^application\/json/);
          expect(last().body).toEqual({
            search_text: "weather",
            filters: { category: ["fetch-ai"], tags: ["a", "b", "c"] },
            sort: "interactions",
            direction: "asc",
            offset: 20,
            limit: 100,
          });
          expect(r.body).toEqual({ agents: [], total: 0, offset: 20, limit: 100 });
          await h.call("GET", "/api/agentverse/agents?q=maps&limit=0");
          expect(last().body).toEqual({ search_text: "maps", filters: {}, offset: 0, limit: 1 });
          await h.call("GET", "/api/directory/agents");
          expect(last().body).toEqual({ filters: {}, offset: 0, limit: 30 });
          // A limit that is not a number falls back to the default (30).
          await h.call("GET", "/api/directory/agents?limit=x");
          expect(last().body).toEqual({ filters: {}, offset: 0, limit: 30 });
          const count = stub.requests.length;
          for (const [query, param] of [
            ["sort=newest", "sort"],
            ["direction=up", "direction"],
            ["offset=-1", "offset"],
            ["offset=abc", "offset"],
          ] as const)
            expectError(await h.call("GET", `/api/directory/agents?${query}`), 400, "invalid_request", param);
          expect(stub.requests.length).toBe(count);
        },
        configured(),
      );

      test(
        "normalises the answer: defaults for missing or mistyped fields, num_hits, bare arrays",
        async (h) => {
          const full = {
            address: "agent1q",
            name: "Maps",
            description: "Directions",
            readme: "# Maps",
            protocols: [{ name: "chat", digest: "proto:1" }, "raw", 7],
            avatar_href: "https://img.example/a.png",
            total_interactions: 10,
            recent_interactions: 2,
            rating: 4.5,
            status: "active",
            type: "hosted",
            featured: true,
            category: "fetch-ai",
            system_wide_tags: ["geo", 3],
            last_updated: "2026-01-01T00:00:00Z",
            created_at: "2025-01-01T00:00:00Z",
            owner: "owner1",
            geo_location: null,
          };
          stub.respond({
            json: { agents: [full, { name: 42, total_interactions: "many", featured: "yes" }, "junk", null], num_hits: 77, offset: 5, limit: 2 },
          });
          const r = await h.call("GET", "/api/directory/agents?q=maps&limit=2&offset=5");
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          const { geo_location: _g, ...expected } = full;
          expect(r.body).toEqual({
            agents: [
              { ...expected, protocols: [{ name: "chat", digest: "proto:1" }, "raw"], system_wide_tags: ["geo"] },
              {
                address: "",
                name: "",
                description: "",
                readme: "",
                protocols: [],
                avatar_href: null,
                total_interactions: 0,
                recent_interactions: 0,
                rating: null,
                status: null,
                type: null,
                featured: false,
                category: null,
                system_wide_tags: [],
                last_updated: null,
                created_at: null,
                owner: null,
              },
            ],
            total: 77,
            offset: 5,
            limit: 2,
          });
          stub.respond({ json: [{ address: "agent1z", name: "Bare" }] });
          const bare = await h.call("GET", "/api/agentverse/agents?offset=3");
          expect(bare.body).toMatchObject({ agents: [{ address: "agent1z", name: "Bare", featured: false }], total: 4, offset: 3, limit: 30 });
          stub.respond({ json: {} });
          expect((await h.call("GET", "/api/directory/agents")).body).toEqual({ agents: [], total: 0, offset: 0, limit: 30 });
        },
        configured(),
      );

      test(
        "upstream non-2xx, non-JSON or a shape without agents → 502 upstream_error",
        async (h) => {
          const answers = [
            { status: 500, json: { error: "boom" } },
            { status: 404, raw: "nope" },
            { raw: "<html>" },
            { json: "just a string" },
            { json: { agents: "none" } },
          ];
          for (const answer of answers) {
            stub.respond(answer);
            const e = expectError(await h.call("GET", "/api/directory/agents?q=x"), 502, "upstream_error");
            expect(e.message).toContain("127.0.0.1");
            expect(e.message).not.toContain("dir-secret");
          }
        },
        configured(),
      );

      test(
        "a slow directory → 504 upstream_timeout",
        async (h) => {
          stub.respond({ json: { agents: [] }, delayMs: 2000 });
          const started = Date.now();
          expectError(await h.call("GET", "/api/directory/agents?q=slow"), 504, "upstream_timeout");
          expect(Date.now() - started).toBeLessThan(1500);
          stub.respond({ json: { agents: [] } });
        },
        configured({ timeoutMs: 100 }),
      );

      it(`${name}: a directory that refuses connections → 502 upstream_error`, async () => {
        const url = await closedPortUrl();
        await withGateway(
          options,
          async (h) => {
            expectError(await h.call("GET", "/api/directory/agents?q=x"), 502, "upstream_error");
          },
          { agents: { directory: { url } } },
        );
      });
    });
  });
}
