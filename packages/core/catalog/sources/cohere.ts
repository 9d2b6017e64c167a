/**
 * Cohere models.
 * Prices: https://cohere.com/pricing and https://docs.cohere.com/docs/how-does-cohere-pricing-work
 * (list prices assumed current on 2026-11-21).
 */
import { arr, chatParams, choice, embeddingCard, req, textCard, type CardInput, type Params } from "./types.js";

const P = "cohere";

const chat = (id: string, name: string, description: string, context: number, [input, output]: [string, string], maxOut: number): CardInput =>
  textCard(P, { id, name, description, context, input, output, params: chatParams({ maxTemperature: 1, defaultTemperature: 0.3, maxTokens: maxOut }) });

const INPUT_TYPE = ["search_document", "search_query", "classification", "clustering"];
const DTYPES = ["float", "int8", "uint8", "binary", "ubinary"];
function embedParams(images: boolean, dims?: number[]): Params {
  return {
    input_type: req(choice(images ? [...INPUT_TYPE, "image"] : INPUT_TYPE, null, "What the input is used for; required by v3+ models.")),
    embedding_types: arr(`Vector types to return: any of ${DTYPES.join(", ")} (default float).`),
    truncate: choice(["NONE", "START", "END"], "END", "How to handle inputs longer than the context."),
    ...(dims ? { output_dimension: choice(dims, dims[dims.length - 1] ?? null, "Number of dimensions of the embedding.") } : {}),
  };
}
const embedV3 = (id: string, name: string, description: string, images = false): CardInput =>
  embeddingCard(P, { id, name, description, context: 512, price: "0.10", inputs: images ? ["text", "image"] : ["text"], params: embedParams(images) });

export const cards = [
  chat("command-a-03-2025", "Command A", "Cohere's most performant model for agentic, tool-use, RAG and multilingual enterprise tasks.", 256000, ["2.50", "10.00"], 8000),
  chat("command-r-plus-08-2024", "Command R+ 08-2024", "Cohere model for complex RAG and multi-step tool use.", 128000, ["2.50", "10.00"], 4000),
  chat("command-r-08-2024", "Command R 08-2024", "Cohere model for retrieval-augmented generation and tool use at moderate cost.", 128000, ["0.15", "0.60"], 4000),
  chat("command-r7b-12-2024", "Command R7B", "Small, fast Cohere model for RAG and agents on commodity hardware.", 128000, ["0.0375", "0.15"], 4000),
  embeddingCard(P, {
    id: "embed-v4.0",
    name: "Embed v4",
    description: "Cohere's multimodal, multilingual embedding model for text, images and interleaved documents (price for text input).",
    context: 128000,
    price: "0.12",
    inputs: ["text", "image"],
    params: embedParams(true, [256, 512, 1024, 1536]),
  }),
  embedV3("embed-english-v3.0", "Embed English v3", "Cohere's English embedding model (1024 dimensions) for search and classification; also embeds images.", true),
  embedV3("embed-multilingual-v3.0", "Embed Multilingual v3", "Cohere's multilingual embedding model (1024 dimensions) covering 100+ languages; also embeds images.", true),
  embedV3("embed-english-light-v3.0", "Embed English Light v3", "Smaller, faster English embedding model (384 dimensions)."),
  embedV3("embed-multilingual-light-v3.0", "Embed Multilingual Light v3", "Smaller, faster multilingual embedding model (384 dimensions)."),
] satisfies CardInput[];
