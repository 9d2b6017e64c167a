import { readFileSync } from "node:fs";
import { describe, it, expect } from "vitest";
import { SOURCE_CARDS } from "../../catalog/sources/index.js";
import { GENERATED_CATALOG_FILE, renderCatalog, sortCards, validateCatalog } from "../../../../scripts/catalog-render.js";
import { catalogSchema, formatIssues, OPERATIONS, type Modality, type ModelCard, type PriceUnit } from "./card.js";
import { NATIVE_CATALOG, NATIVE_CATALOG_VERSION } from "./generated/native-catalog.js";

function validSources(): ModelCard[] {
  const result = validateCatalog(SOURCE_CARDS);
  if (!result.ok) throw new Error(`catalog sources are invalid:\n${result.problems.join("\n")}`);
  return result.cards;
}

/** The unit each metering key must use. */
const KEY_UNITS: Record<string, readonly PriceUnit[]> = {
  input_tokens: ["usd_per_1m_tokens"],
  cached_input_tokens: ["usd_per_1m_tokens"],
  input_image_tokens: ["usd_per_1m_tokens"],
  output_tokens: ["usd_per_1m_tokens"],
  image: ["usd_per_image"],
  characters: ["usd_per_1k_characters"],
  audio_seconds: ["usd_per_minute"],
  video_seconds: ["usd_per_second"],
};

/** For each (modality, operation): sets of keys, any one of which fully meters the operation. */
const METERING: Record<string, readonly (readonly string[])[]> = {
  "text/chat": [["input_tokens", "output_tokens"]],
  "embedding/embedding": [["input_tokens"]],
  "image/generation": [["image"]],
  "image/edit": [["image"]],
  "audio/speech": [["characters"], ["audio_seconds"]],
  "audio/transcription": [["audio_seconds"]],
  "video/generation": [["video_seconds"]],
};

const label = (c: ModelCard): string => `${c.provider}:${c.modelId}`;

describe("native catalog", () => {
  it("the sources validate", () => {
    const result = validateCatalog(SOURCE_CARDS);
    expect(result.ok ? [] : result.problems).toEqual([]);
  });

  it("the committed generated file is what the generator renders from the sources", () => {
    const cards = validSources();
    expect(readFileSync(GENERATED_CATALOG_FILE, "utf8")).toBe(renderCatalog(cards));
    expect(NATIVE_CATALOG).toEqual(sortCards(cards));
    expect(NATIVE_CATALOG_VERSION).toMatch(/^[0-9a-f]{12}$/);
  });

  it("renders deterministically, independent of source order, sorted by (modelId, provider)", () => {
    const cards = validSources();
    expect(renderCatalog([...cards].reverse())).toBe(renderCatalog(cards));
    const keys = NATIVE_CATALOG.map((c) => [c.modelId, c.provider] as const);
    for (let i = 1; i < keys.length; i++) {
      const [a, b] = [keys[i - 1]!, keys[i]!];
      expect(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]), `${a.join("|")} before ${b.join("|")}`).toBe(true);
    }
  });

  it("is large and spread over providers", () => {
    expect(NATIVE_CATALOG.length).toBeGreaterThanOrEqual(70);
    expect(new Set(NATIVE_CATALOG.map((c) => c.provider)).size).toBeGreaterThanOrEqual(7);
  });

  it("serves every (modality, operation) pair", () => {
    const served = new Set(NATIVE_CATALOG.flatMap((c) => c.operations.map((o) => `${o.modality}/${o.operation}`)));
    for (const [modality, ops] of Object.entries(OPERATIONS)) for (const op of ops) expect(served, `${modality}/${op}`).toContain(`${modality}/${op}`);
  });

  it("has public ids under several providers, and ids with / and :", () => {
    const providersById = new Map<string, Set<string>>();
    for (const c of NATIVE_CATALOG) providersById.set(c.modelId, (providersById.get(c.modelId) ?? new Set()).add(c.provider));
    const shared = [...providersById].filter(([, ps]) => ps.size >= 2).map(([id]) => id);
    expect(shared.length).toBeGreaterThanOrEqual(2);
    expect(NATIVE_CATALOG.some((c) => c.modelId.includes("/"))).toBe(true);
    expect(NATIVE_CATALOG.some((c) => c.modelId.includes(":"))).toBe(true);
  });

  it("every card's modalities agree with its operations", () => {
    for (const c of NATIVE_CATALOG) {
      for (const op of c.operations) {
        const output: Modality = op.operation === "transcription" ? "text" : op.modality;
        expect(c.modalities.output, `${label(c)} ${op.modality}/${op.operation}`).toContain(output);
      }
    }
  });

  it("every card has price lines that meter its operations, with the unit each key requires", () => {
    for (const c of NATIVE_CATALOG) {
      const keys = new Set(c.pricing.map((l) => l.key));
      for (const line of c.pricing) expect(KEY_UNITS[line.key], `${label(c)} ${line.key} ${line.unit}`).toContain(line.unit);
      for (const op of c.operations) {
        const options = METERING[`${op.modality}/${op.operation}`] ?? [];
        expect(options.some((set) => set.every((k) => keys.has(k))), `${label(c)} meters ${op.modality}/${op.operation}`).toBe(true);
      }
    }
  });

  it("price variants use the card's params, and every combination of their options has exactly one price", () => {
    for (const c of NATIVE_CATALOG) {
      for (const key of new Set(c.pricing.map((l) => l.key))) {
        const lines = c.pricing.filter((l) => l.key === key);
        const varied = lines.filter((l) => l.when);
        if (varied.length === 0) continue;
        expect(varied.length, `${label(c)} ${key}: no mix of plain and variant lines`).toBe(lines.length);
        const names = Object.keys(varied[0]!.when!).sort();
        let combos: Record<string, string>[] = [{}];
        for (const name of names) {
          const spec = c.params?.[name];
          expect(spec?.options, `${label(c)} price variant param ${name} has options`).toBeDefined();
          combos = combos.flatMap((combo) => spec!.options!.map((o) => ({ ...combo, [name]: String(o) })));
        }
        for (const line of varied) {
          expect(Object.keys(line.when!).sort(), `${label(c)} ${key} variant params`).toEqual(names);
          for (const [name, value] of Object.entries(line.when!)) expect(c.params![name]!.options!.map(String), `${label(c)} ${name}`).toContain(value);
        }
        for (const combo of combos) {
          const matches = varied.filter((l) => Object.entries(l.when!).every(([n, v]) => combo[n] === v));
          expect(matches.length, `${label(c)} ${key} ${JSON.stringify(combo)}`).toBe(1);
        }
      }
    }
  });

  it("marks retired models deprecated", () => {
    const find = (id: string) => NATIVE_CATALOG.find((c) => c.modelId === id);
    expect(find("dall-e-2")?.deprecated).toBe(true);
    expect(find("text-embedding-ada-002")?.deprecated).toBe(true);
    expect(find("gpt-image-1")?.deprecated).toBeUndefined();
  });

  it("rejects invalid cards with readable messages naming the path", () => {
    const good = structuredClone(NATIVE_CATALOG.find((c) => c.modelId === "dall-e-3")!);
    const badPrice = { ...good, modelId: "bad-price", pricing: [{ key: "image", unit: "usd_per_painting", unitPriceUsd: "abc" }] };
    // Cross-field rules (superRefine) only run once the card's shape is valid, so "dance" gets its own card.
    const badOperation = { ...good, modelId: "bad-operation", operations: [{ modality: "image", operation: "dance" }] };
    expect(catalogSchema.safeParse([badPrice]).success).toBe(false);
    expect(catalogSchema.safeParse([badOperation]).success).toBe(false);
    const result = validateCatalog([good, badPrice, badOperation]);
    const problems = result.ok ? [] : result.problems;
    expect(problems).toEqual([
      expect.stringMatching(/^cards\[1\] \(openai:bad-price\)\.pricing\.0\.unit: .*usd_per_image/),
      'cards[1] (openai:bad-price).pricing.0.unitPriceUsd: must be a non-negative decimal string such as "2.50"',
      'cards[2] (openai:bad-operation).operations.0.operation: "dance" is not an operation of image (generation, edit)',
    ]);
    // The plain formatIssues form names the path too.
    const parsed = catalogSchema.safeParse([badOperation]);
    expect(parsed.success ? [] : formatIssues(parsed.error.issues)).toEqual(['0.operations.0.operation: "dance" is not an operation of image (generation, edit)']);
  });

  it("rejects duplicate (provider, modelId) pairs", () => {
    const card = NATIVE_CATALOG[0]!;
    const result = validateCatalog([card, card]);
    expect(result.ok ? [] : result.problems).toEqual([expect.stringContaining(`duplicate card ${card.provider}:${card.modelId}`)]);
  });
});
