/** Conformance tests of {@link AgentStore}. */
import { expect } from "vitest";
import type { AgentCard } from "@tollgate/core";
import { T0, uniq, type StoreTest } from "./store-fixtures.js";

/** A fresh card with a unique lower-case address, created at T0. */
function makeCard(overrides: Partial<AgentCard> = {}): AgentCard {
  const hex = Buffer.from(uniq()).toString("hex").slice(-40).padStart(40, "0");
  return {
    walletAddress: `0x${hex}`,
    name: "Translator",
    description: "Translates text between languages.",
    plugins: [{ registryId: "reg-1", name: "deepl", origin: "https://plugins.example.com/deepl", tools: ["translate", "detect"] }],
    skills: ["translation"],
    protocols: ["a2a"],
    x402Support: false,
    createdAt: T0,
    ...overrides,
  };
}

export const agentTests = {
  "upsertAgent then getAgent returns every field; records are copies": async ({ store }) => {
    const card = makeCard({ endpoint: "https://agents.example.com/t", model: "openai/gpt-4o", x402Support: true });
    expect(await store.upsertAgent(card)).toEqual(card);
    const read = await store.getAgent(card.walletAddress);
    expect(read).toEqual(card);
    read!.plugins[0]!.tools!.push("mutated");
    read!.skills.push("mutated");
    expect(await store.getAgent(card.walletAddress)).toEqual(card);
    const bare = makeCard({ plugins: [{ registryId: "r", name: "p", origin: "o" }], skills: [], protocols: [] });
    await store.upsertAgent(bare);
    const readBare = await store.getAgent(bare.walletAddress);
    expect(readBare).toEqual(bare);
    expect(Object.keys(readBare!).sort()).toEqual(Object.keys(bare).sort());
    expect(Object.keys(readBare!.plugins[0]!).sort()).toEqual(["name", "origin", "registryId"]);
    expect(await store.getAgent("0x00000000000000000000000000000000000000ff")).toBeNull();
  },

  "the origin fields (chain, licensePrice, licenses, cloneable, versioned protocols) round-trip; absent stays absent": async ({ store }) => {
    const card = makeCard({ protocols: ["a2a@0.3.0", "mcp"], chain: 8453, licensePrice: "123456789012345678901234567890", licenses: 7, cloneable: true });
    expect(await store.upsertAgent(card)).toEqual(card);
    expect(await store.getAgent(card.walletAddress)).toEqual(card);
    const { chain: _c, licensePrice: _p, licenses: _l, cloneable: _x, ...plain } = card;
    expect(await store.upsertAgent(plain)).toEqual(plain);
    expect(Object.keys((await store.getAgent(card.walletAddress))!)).not.toContain("chain");
  },

  "upsertAgent replaces the fields of an existing card but keeps its createdAt": async ({ store }) => {
    const card = makeCard({ endpoint: "https://a.example.com" });
    await store.upsertAgent(card);
    const { endpoint: _dropped, ...rest } = card;
    const changed: AgentCard = { ...rest, name: "Renamed", skills: ["summaries"], createdAt: T0 + 5000 };
    expect(await store.upsertAgent(changed)).toEqual({ ...changed, createdAt: T0 });
    expect(await store.getAgent(card.walletAddress)).toEqual({ ...changed, createdAt: T0 });
    expect(await store.listAgents()).toHaveLength(1);
  },

  "listAgents is oldest first, address breaking ties": async ({ store }) => {
    const cards = [makeCard({ createdAt: T0 + 20 }), makeCard({ createdAt: T0 }), makeCard({ createdAt: T0 + 10 }), makeCard({ createdAt: T0 })];
    for (const c of cards) await store.upsertAgent(c);
    const expected = [...cards].sort((a, b) => a.createdAt - b.createdAt || (a.walletAddress < b.walletAddress ? -1 : 1));
    expect(await store.listAgents()).toEqual(expected);
  },

  "removeAgent deletes once": async ({ store }) => {
    const card = await store.upsertAgent(makeCard());
    expect(await store.removeAgent(card.walletAddress)).toBe(true);
    expect(await store.removeAgent(card.walletAddress)).toBe(false);
    expect(await store.getAgent(card.walletAddress)).toBeNull();
    expect(await store.listAgents()).toEqual([]);
  },

  "concurrent upserts of one address leave one card equal to one of them": async ({ store }) => {
    const base = makeCard();
    const versions = Array.from({ length: 20 }, (_, i) => ({ ...base, name: `v${i}`, createdAt: T0 + i }));
    await Promise.all(versions.map((v) => store.upsertAgent(v)));
    const list = await store.listAgents();
    expect(list).toHaveLength(1);
    expect(versions.map((v) => v.name)).toContain(list[0]!.name);
    expect(versions.map((v) => v.createdAt)).toContain(list[0]!.createdAt);
  },
} satisfies Record<string, StoreTest>;
