import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { generateCards, prng } from "@tollgate/testing";
import { createCatalog } from "./catalog.js";
import type { ModelCard } from "./card.js";

const cards = generateCards(3000, 7);
const catalog = createCatalog(cards);

/** The reference: a plain scan with the documented semantics. */
function scan(f: { q?: string; provider?: string; modality?: string; operation?: string }): ModelCard[] {
  const tokens = (f.q ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  return [...cards]
    .sort((a, b) => (`${a.modelId}\u0000${a.provider}` < `${b.modelId}\u0000${b.provider}` ? -1 : 1))
    .filter((c) => {
      const hay = `${c.modelId}\n${c.name}\n${c.provider}\n${c.description}`.toLowerCase();
      if (!tokens.every((t) => hay.includes(t))) return false;
      if (f.provider && c.provider !== f.provider) return false;
      if (f.modality && !c.operations.some((o) => o.modality === f.modality)) return false;
      if (f.operation && !c.operations.some((o) => o.operation === f.operation && (!f.modality || o.modality === f.modality))) return false;
      return true;
    });
}

function pageAll(f: Parameters<typeof scan>[0], limit: number): ModelCard[] {
  const out: ModelCard[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = catalog.search({ ...f, limit, cursor });
    expect(page.data.length).toBeLessThanOrEqual(limit);
    out.push(...page.data);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return out;
}

describe("catalog search", () => {
  it("equals a full scan for random queries and filters (index is exact)", () => {
    const rand = prng(42);
    const queries = ["", "fl", "flux", "ux-t", "pro ultra", "org-5/", ":0", "v1", "synthetic image", "zzz", "a", "TURBO", "e-v2"];
    // Several terms: repeats, parts inside others, short parts checked on the cards left, punctuation.
    queries.push("a a  a", "flux fl x", "pro a e", "ux-t a 5", "1 2 3", "e). e-v2 v", "image i m", "turbo t u r b o");
    for (let i = 0; i < 120; i++) {
      const f = {
        q: queries[Math.floor(rand() * queries.length)],
        provider: rand() < 0.3 ? "together" : undefined,
        modality: rand() < 0.3 ? "image" : undefined,
        operation: rand() < 0.2 ? "edit" : undefined,
      };
      const want = scan(f);
      const got = catalog.search({ ...f, limit: 200 });
      expect(got.total).toBe(want.length);
      expect(got.data.map((c) => `${c.provider}:${c.modelId}`)).toEqual(want.slice(0, 200).map((c) => `${c.provider}:${c.modelId}`));
    }
  });

  it("pages with a cursor without duplicates or gaps", () => {
    for (const f of [{}, { q: "flux" }, { modality: "audio", operation: "speech" }]) {
      const paged = pageAll(f, 37).map((c) => `${c.provider}:${c.modelId}`);
      const all = scan(f).map((c) => `${c.provider}:${c.modelId}`);
      expect(paged).toEqual(all);
      expect(new Set(paged).size).toBe(paged.length);
    }
  });

  it("keeps pages gap-free when the catalog changes between pages", () => {
    const first = catalog.search({ limit: 10 });
    const smaller = createCatalog(cards.filter((c) => c !== first.data[9]));
    const second = smaller.search({ limit: 10, cursor: first.next_cursor! });
    const expected = scan({}).slice(10, 20);
    expect(second.data.map((c) => c.modelId)).toEqual(expected.map((c) => c.modelId));
  });

  it("refuses a query of more than 16 distinct terms (repeats count once); the same terms in any spacing are one search", () => {
    const terms = Array.from({ length: 17 }, (_, i) => `t${i}`);
    expect(() => catalog.search({ q: terms.join(" "), limit: 10 })).toThrow(/more than 16 distinct terms/);
    expect(catalog.search({ q: `${terms.slice(0, 16).join(" ")} t0 t1 t2`, limit: 10 }).total).toBe(0);
    expect(catalog.search({ q: "  flux   pro flux ", limit: 10 }).total).toBe(scan({ q: "flux pro" }).length);
    const parts = Array.from({ length: 33 }, (_, i) => `p${i}`);
    expect(() => catalog.search({ q: parts.join("-"), limit: 10 })).toThrow(/more than 32 distinct words/);
    expect(catalog.search({ q: parts.slice(0, 32).join("-"), limit: 10 }).total).toBe(0);
  });

  it("rejects unknown provider, modality, operation and foreign cursors with 400", () => {
    const bad = [
      { provider: "nope" },
      { modality: "smell" },
      { operation: "dance" },
      { modality: "audio", operation: "edit" },
      { cursor: "not-a-cursor" },
      { q: "flux", cursor: catalog.search({ q: "pro", limit: 1 }).next_cursor! },
    ];
    for (const f of bad) {
      let caught: unknown;
      try {
        catalog.search({ limit: 5, ...f });
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(GatewayError);
      expect((caught as GatewayError).status).toBe(400);
      expect((caught as GatewayError).param).toBe(Object.keys(f).at(-1));
    }
  });

  it("resolves duplicate ids by provider priority, and provider selects another", () => {
    const dup = cards.find((c) => c.provider === "together" && cards.some((o) => o.modelId === c.modelId && o.provider !== "together"))!;
    const other = cards.find((c) => c.modelId === dup.modelId && c.provider !== "together")!;
    expect(catalog.find(dup.modelId)?.provider).toBe(other.provider);
    expect(catalog.find(dup.modelId, "together")?.provider).toBe("together");
    const reversed = createCatalog(cards, { providerPriority: ["together"] });
    expect(reversed.find(dup.modelId)?.provider).toBe("together");
    expect(() => catalog.get(dup.modelId, "nobody")).toThrow(/not in the catalog/);
    expect(() => catalog.get("no-such-model")).toThrow(GatewayError);
  });
});
