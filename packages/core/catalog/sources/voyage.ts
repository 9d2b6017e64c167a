/**
 * Voyage AI embedding models.
 * Prices: https://docs.voyageai.com/docs/pricing (list prices assumed current on 2026-11-21).
 */
import { bool, choice, embeddingCard, type CardInput, type Params } from "./types.js";

const P = "voyage";

function voyageParams(flexible: boolean): Params {
  return {
    input_type: choice(["query", "document"], null, "Prepends a retrieval prompt for queries or documents; omit for raw embeddings."),
    truncation: bool("Truncate inputs longer than the context instead of failing.", { default: true }),
    ...(flexible
      ? {
          output_dimension: choice([256, 512, 1024, 2048], 1024, "Number of dimensions of the embedding."),
          output_dtype: choice(["float", "int8", "uint8", "binary", "ubinary"], "float", "Precision of the returned vectors."),
        }
      : {}),
  };
}
const voyage = (id: string, name: string, description: string, price: string, context: number, flexible = true): CardInput =>
  embeddingCard(P, { id, name, description, price, context, params: voyageParams(flexible) });

export const cards = [
  voyage("voyage-3.5", "Voyage 3.5", "General-purpose, multilingual retrieval embeddings balancing quality and cost.", "0.06", 32000),
  voyage("voyage-3.5-lite", "Voyage 3.5 Lite", "Latency- and cost-optimized retrieval embeddings.", "0.02", 32000),
  voyage("voyage-3-large", "Voyage 3 Large", "Voyage's best general-purpose and multilingual retrieval embeddings.", "0.18", 32000),
  voyage("voyage-code-3", "Voyage Code 3", "Embeddings optimized for code retrieval.", "0.18", 32000),
  voyage("voyage-finance-2", "Voyage Finance 2", "Embeddings optimized for finance retrieval and RAG (1024 dimensions).", "0.12", 32000, false),
  voyage("voyage-law-2", "Voyage Law 2", "Embeddings optimized for legal and long-context retrieval (1024 dimensions).", "0.12", 16000, false),
] satisfies CardInput[];
