/**
 * The origin API's card fields (schemaVersion, dnaHash, chain, license fields) and the
 * `compat: "compose"` shapes of `protocols` and `createdAt`, on the memory store. The fields ride
 * in the card's JSON, whose round trip through every store the agents store suite checks.
 */
import { describe, expect, it } from "vitest";
import type { GatewayOptions } from "../options.js";
import { createMemoryStore } from "../store/memory.js";
import { withGateway, type Harness } from "@tollgate/testing";

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
const SEED = [
  { walletAddress: addr(1), name: "Translator", protocols: ["a2a"], createdAt: 1000 },
  { walletAddress: addr(2), name: "Polyglot", description: "A translator for legal documents." },
  { walletAddress: addr(3), name: "Helper", skills: ["translator"] },
];
const CHAINS = [{ chainId: 84532, name: "Base Sepolia", rpcUrl: "http://127.0.0.1:9", usdc: "0x00000000000000000000000000000000000000c5" }];
const options = { createStore: () => createMemoryStore() };
const test = (title: string, fn: (h: Harness) => Promise<void>, extra: () => Partial<GatewayOptions>) => it(title, () => withGateway(options, fn, extra()));
const seeded = () => ({ agents: { seed: SEED } });
const search = (h: Harness, query: string) => h.call("GET", `/agents/search${query}`);

describe("agent cards: the origin API's fields", () => {
  test(
    "origin fields: schemaVersion, a content dnaHash, chain (card, else the default chain), license fields; protocol objects are stored as name@version",
    async (h) => {
      const cards = (await h.call("GET", "/agents")).body.agents;
      expect(cards[0]).toMatchObject({
        protocols: ["a2a"],
        createdAt: 1000,
        schemaVersion: "1.0.0",
        chain: 84532,
        licensePrice: "0",
        licenses: 0,
        cloneable: false,
      });
      expect(new Set(cards.map((c: any) => c.dnaHash)).size).toBe(SEED.length);
      const card = await h.gateway.services.agents.upsert({
        walletAddress: addr(9),
        name: "Licensed",
        protocols: ["mcp", { name: "a2a", version: "0.3.0" }, { name: "x402" }],
        chain: 8453,
        licensePrice: "2500000",
        licenses: 3,
        cloneable: true,
        createdAt: "2025-01-02T03:04:05.678Z",
      });
      expect(card).toMatchObject({ protocols: ["mcp", "a2a@0.3.0", "x402"], createdAt: Date.parse("2025-01-02T03:04:05.678Z") });
      const one = (await h.call("GET", `/agent/${addr(9)}`)).body;
      expect(one).toMatchObject({ protocols: ["mcp", "a2a@0.3.0", "x402"], chain: 8453, licensePrice: "2500000", licenses: 3, cloneable: true });
      // The hash is stable across reads and an upsert of the same content, and follows any edit.
      expect((await h.call("GET", `/agent/${addr(9)}`)).body.dnaHash).toBe(one.dnaHash);
      await h.gateway.services.agents.upsert({
        walletAddress: addr(9),
        name: "Licensed",
        protocols: ["mcp", "a2a@0.3.0", "x402"],
        chain: 8453,
        licensePrice: "2500000",
        licenses: 3,
        cloneable: true,
      });
      expect((await h.call("GET", `/agent/${addr(9)}`)).body.dnaHash).toBe(one.dnaHash);
      await h.gateway.services.agents.upsert({ walletAddress: addr(9), name: "Licensed", licenses: 4 });
      expect((await h.call("GET", `/agent/${addr(9)}`)).body.dnaHash).not.toBe(one.dnaHash);
      for (const [field, value] of [
        ["licensePrice", "1.5"],
        ["licenses", -1],
        ["chain", 0],
        ["protocols", [{ version: "1" }]],
        ["createdAt", "yesterday"],
      ] as const)
        await expect(h.gateway.services.agents.upsert({ walletAddress: addr(9), name: "x", [field]: value } as never)).rejects.toMatchObject({
          code: "invalid_request",
        });
    },
    () => ({ ...seeded(), chains: CHAINS }),
  );

  test(
    'compat "compose": protocols as {name, version} objects and createdAt as ISO on /agents, /agents/search and /agent/{walletAddress}',
    async (h) => {
      await h.gateway.services.agents.upsert({ walletAddress: addr(8), name: "Versioned", protocols: ["a2a@0.3.0", "mcp"], createdAt: 1_700_000_000_123 });
      const expected = {
        protocols: [
          { name: "a2a", version: "0.3.0" },
          { name: "mcp", version: "" },
        ],
        createdAt: "2023-11-14T22:13:20.123Z",
        chain: 84532,
      };
      expect((await h.call("GET", `/agent/${addr(8)}`)).body).toMatchObject(expected);
      expect((await h.call("GET", "/agents")).body.agents.find((a: any) => a.name === "Versioned")).toMatchObject(expected);
      expect((await search(h, "?q=versioned")).body.agents[0]).toMatchObject({ ...expected, score: 60 });
      expect((await h.call("GET", "/agents")).body.agents[0]).toMatchObject({
        protocols: [{ name: "a2a", version: "" }],
        createdAt: "1970-01-01T00:00:01.000Z",
      });
      // The origin's required fields: a card without a model shows "" (absent without compat).
      expect((await h.call("GET", `/agent/${addr(8)}`)).body.model).toBe("");
    },
    () => ({ ...seeded(), chains: CHAINS, compat: "compose" as const }),
  );

  test(
    'compat "compose" without any chain: chain is 0 (unknown), never null',
    async (h) => expect((await h.call("GET", "/agents")).body.agents.map((a: any) => a.chain)).toEqual(SEED.map(() => 0)),
    () => ({ ...seeded(), compat: "compose" as const }),
  );
});
