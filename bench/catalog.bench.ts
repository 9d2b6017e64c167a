/**
 * Catalog benchmark: loads 100,000 generated cards and measures index build time and search
 * latency (p50/p99) for text queries and filtered pages, with the memo cache off (every search
 * computed) and on (paging through repeated filters). Baseline in the same run: a plain linear
 * scan with the same semantics, so the ratio survives a noisy shared machine.
 * Run: npm run bench:catalog  (writes its section of docs/benchmarks.md)
 */
import { createCatalog, type CatalogSearch, type ModelCard } from "@tollgate/core";
import { generateCards, prng } from "@tollgate/testing";
import { machine, ms, now, percentile, writeSection } from "./lib.js";

const N = 100_000;
const SEARCHES = 2_000;

function linearScan(cards: readonly ModelCard[], s: CatalogSearch): { total: number; page: ModelCard[] } {
  const tokens = (s.q ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  const hits: ModelCard[] = [];
  for (const c of cards) {
    if (s.provider && c.provider !== s.provider) continue;
    if (s.modality && !c.operations.some((o) => o.modality === s.modality && (!s.operation || o.operation === s.operation))) continue;
    if (tokens.length) {
      const hay = `${c.modelId}\n${c.name}\n${c.provider}\n${c.description}`.toLowerCase();
      if (!tokens.every((t) => hay.includes(t))) continue;
    }
    hits.push(c);
  }
  return { total: hits.length, page: hits.slice(0, s.limit) };
}

function workload(seed: number): CatalogSearch[] {
  const rand = prng(seed);
  const words = ["flux", "vision", "turbo", "mini", "large", "nano", "ultra", "pro", "embed", "whisper", "studio", "hd", "omni", "fl", "ux", "org-4", ":0", "zzz", "synthetic", "tier", "flux turbo", "pro max", "org-12/", "v123", "model 4"];
  const providers = ["openai", "google", "together", "fal", undefined, undefined, undefined];
  const modalities = [["image", "generation"], ["image", "edit"], ["audio", "speech"], ["embedding", undefined], [undefined, undefined], [undefined, undefined]] as const;
  return Array.from({ length: SEARCHES }, () => {
    const [modality, operation] = modalities[Math.floor(rand() * modalities.length)]!;
    const text = rand() < 0.8 ? words[Math.floor(rand() * words.length)] : undefined;
    return { q: text, provider: providers[Math.floor(rand() * providers.length)], modality, operation, limit: 50 };
  });
}

function measure(label: string, run: (s: CatalogSearch) => unknown, searches: CatalogSearch[]): { label: string; p50: number; p99: number; max: number } {
  for (const s of searches.slice(0, 100)) run(s); // warm-up (JIT)
  const times: number[] = [];
  for (const s of searches) {
    const t = now();
    run(s);
    times.push(Number(now() - t) / 1e6);
  }
  return { label, p50: percentile(times, 50), p99: percentile(times, 99), max: Math.max(...times) };
}

const cards = generateCards(N, 11);
let t = now();
const cold = createCatalog(cards, { searchCacheSize: 0 });
const loadMs = Number(now() - t) / 1e6;
const heapMb = process.memoryUsage().heapUsed / 2 ** 20;
const searches = workload(5);
const textOnly = searches.filter((s) => s.q && !s.provider && !s.modality);
const filtered = searches.filter((s) => s.provider || s.modality);

// Page 2..5 of the same filters: what a client paging through results does.
const paging: CatalogSearch[] = [];
for (const s of filtered.slice(0, 400)) {
  let cursor = cold.search(s).next_cursor;
  for (let i = 0; i < 3 && cursor; i++) {
    paging.push({ ...s, cursor });
    cursor = cold.search({ ...s, cursor }).next_cursor;
  }
}

const rows = [
  measure("text queries (index, no cache)", (s) => cold.search(s), textOnly),
  measure("filtered pages (index, no cache)", (s) => cold.search(s), filtered),
  measure("next pages with a cursor (index, no cache)", (s) => cold.search(s), paging),
  measure("text queries (baseline: linear scan)", (s) => linearScan(cold.cards(), s), textOnly),
  measure("filtered pages (baseline: linear scan)", (s) => linearScan(cold.cards(), s), filtered),
];

const ratio = (a: number, b: number) => (b / a).toFixed(1);
const md = `## Catalog search (\`npm run bench:catalog\`)

Machine: ${machine()}. Run: ${new Date().toISOString().slice(0, 10)}.

Method: ${N.toLocaleString("en")} generated cards (\`generateCards\`, seed 11); index build measured once;
${SEARCHES} searches from a fixed random workload (80% with a text query drawn from common words, substrings,
id fragments and misses; filters on provider / modality / operation), limit 50, timed one by one with
\`process.hrtime\` after 100 warm-up searches. "No cache" (\`searchCacheSize: 0\`) computes every search in full,
including the next pages of a search (in production a 256-entry memo serves those). The baseline is a linear scan with the same matching rules,
in the same process, on the same cards.

Index build (load): **${ms(loadMs)} ms** for ${N.toLocaleString("en")} cards; heap after load ${heapMb.toFixed(0)} MiB.

| workload | searches | p50 ms | p99 ms | max ms |
|---|---:|---:|---:|---:|
${rows.map((r, i) => `| ${r.label} | ${[textOnly, filtered, paging, textOnly, filtered][i]!.length} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} |`).join("\n")}

Index vs linear scan, p99: text ×${ratio(rows[0]!.p99, rows[3]!.p99)}, filtered ×${ratio(rows[1]!.p99, rows[4]!.p99)}. Target: p99 under 5 ms per search.`;

console.log(md);
writeSection("catalog", md);
