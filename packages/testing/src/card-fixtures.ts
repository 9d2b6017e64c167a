/** Generated model cards for tests and benchmarks (deterministic for a given seed). */
import type { ModelCard } from "@tollgate/core";

const PROVIDERS = ["openai", "google", "mistral", "cohere", "stability", "black-forest-labs", "together", "fal"];
const WORDS = ["flux", "vision", "turbo", "mini", "large", "nano", "ultra", "lite", "pro", "max", "embed", "speech", "whisper", "studio", "fast", "hd", "core", "omni"];
const KINDS = [
  { modality: "image", operation: "generation", unit: "usd_per_image", key: "image" },
  { modality: "image", operation: "edit", unit: "usd_per_image", key: "image" },
  { modality: "embedding", operation: "embedding", unit: "usd_per_1m_tokens", key: "input_tokens" },
  { modality: "audio", operation: "speech", unit: "usd_per_1k_characters", key: "characters" },
  { modality: "audio", operation: "transcription", unit: "usd_per_minute", key: "audio_seconds" },
  { modality: "video", operation: "generation", unit: "usd_per_second", key: "video_seconds" },
  { modality: "text", operation: "chat", unit: "usd_per_1m_tokens", key: "input_tokens" },
] as const;

/** A small deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` synthetic but schema-valid cards. About 1 in 20 public ids is served by two providers;
 * ids mix plain, `/` and `:` forms.
 */
export function generateCards(count: number, seed = 1): ModelCard[] {
  const rand = prng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const cards: ModelCard[] = [];
  for (let i = 0; cards.length < count; i++) {
    const kind = pick(KINDS);
    const words = `${pick(WORDS)}-${pick(WORDS)}`;
    const shape = i % 3;
    const modelId = shape === 0 ? `${words}-${i}` : shape === 1 ? `org-${i % 97}/${words}-${i}` : `${words}-v${i}:0`;
    const providers = i % 20 === 0 ? [pick(PROVIDERS), "together"] : [pick(PROVIDERS)];
    for (const provider of new Set(providers)) {
      if (cards.length >= count) break;
      cards.push({
        modelId,
        provider,
        name: `${words.replace("-", " ")} ${i}`,
        description: `Synthetic ${kind.modality} model ${i} for ${kind.operation} (${pick(WORDS)} ${pick(WORDS)} tier).`,
        modalities: { input: ["text"], output: [kind.modality] },
        operations: [{ modality: kind.modality, operation: kind.operation }],
        pricing: [{ key: kind.key, unit: kind.unit, unitPriceUsd: `0.${String(1 + (i % 999)).padStart(3, "0")}` }],
      });
    }
  }
  return cards;
}
