/**
 * What a chat request's fields may do to its price (docs/chat.md): which the gateway reads
 * itself, which are forwarded as they are, which are counted as prompt, and which are refused
 * because a server may read them as an output cap above the one the call pays for.
 */
import type { ModelCard } from "../catalog/card.js";
import { invalidRequest } from "../errors.js";

/** Fields the gateway reads or sets itself; everything else reaches the upstream as sent. */
const OWN_FIELDS = new Set(["provider", "stream", "stream_options", "model"]);

/** The fields that carry the output cap: the gateway writes them, last, with the cap the call pays for. */
const CAP_FIELDS = new Set(["max_tokens", "max_completion_tokens"]);

/**
 * OpenAI's request fields that carry no prompt text (sampling, logging, tool-call switches), and
 * the sampling knobs of open-weight servers: forwarded and not counted. Every other field the
 * client sends reaches the upstream too, and is counted as prompt (a server may read it into the
 * prompt: vLLM's and Groq's `documents`, a `chat_template`…).
 */
const SMALL_FIELDS = new Set([
  ...OWN_FIELDS,
  ...CAP_FIELDS,
  ..."messages n service_tier modalities prediction temperature top_p frequency_penalty presence_penalty logit_bias logprobs".split(" "),
  ..."top_logprobs seed stop user metadata store parallel_tool_calls reasoning_effort verbosity safety_identifier prompt_cache_key".split(" "),
  ..."top_k min_p repetition_penalty stop_token_ids skip_special_tokens".split(" "),
]);

/**
 * Names of fields a server may read as an output cap or as more work than the quote bounds:
 * llama.cpp's `n_predict`, Ollama's `num_predict` and `options`, TGI's `max_new_tokens`, vLLM's
 * `min_tokens` and `ignore_eos`, Llama's `max_gen_len`, Anthropic's `max_tokens_to_sample`, an
 * `extra_body` or `generation_config` that nests them… An unknown field whose name looks like one
 * is refused, unless the model's card lists it among its parameters.
 */
const CAP_LIKE = /max|min|token|predict|len|eos|option|extra|config|limit|num_/;

/**
 * Refuses (400, naming the field) a field that could lift the output cap: one whose name matches
 * {@link CAP_LIKE} and that neither OpenAI's small fields nor `card`'s parameters name, and any
 * field spelled like a known one in other letter case (a server that matches names without case
 * would read it in place of the gateway's).
 */
export function refuseCapOverrides(body: Record<string, unknown>, card: ModelCard): void {
  for (const field in body) {
    // A field sent as null is absent (OpenAI's SDKs and wrappers send unused parameters so).
    if (SMALL_FIELDS.has(field) || body[field] == null) continue;
    const lower = field.toLowerCase();
    if (lower !== field && (SMALL_FIELDS.has(lower) || card.params?.[lower] !== undefined))
      throw invalidRequest(
        `${field}: send field names as the API spells them (${lower}); some servers read names without case, in place of the gateway's`,
        field,
      );
    if (card.params?.[field] === undefined && CAP_LIKE.test(lower))
      throw invalidRequest(
        `${field}: some servers read it as the output cap, above the one this call pays for; send max_completion_tokens or max_tokens`,
        field,
      );
  }
}

/**
 * What a quote counts as prompt beside the messages: the tool and format definitions, and every
 * field not in {@link SMALL_FIELDS}: their values, counted as JSON.
 */
export function promptExtras(body: Record<string, unknown>): unknown[] {
  const extras: unknown[] = [];
  for (const field in body) if (!SMALL_FIELDS.has(field) && body[field] != null) extras.push(body[field]);
  return extras;
}

/**
 * The body sent upstream: the client's fields, the upstream's model id and the output cap, in the
 * field the client used (reasoning models refuse `max_tokens`; some servers only know it), last.
 */
export function upstreamBody(
  body: { max_tokens?: number | null | undefined; max_completion_tokens?: number | null | undefined } & Record<string, unknown>,
  modelId: string,
  cap: number,
): Record<string, unknown> {
  const out: Record<string, unknown> = { model: modelId };
  for (const field in body) if (!OWN_FIELDS.has(field) && !CAP_FIELDS.has(field) && body[field] !== undefined) out[field] = body[field];
  if (body.max_tokens != null && body.max_completion_tokens == null) out.max_tokens = cap;
  else {
    out.max_completion_tokens = cap;
    if (body.max_tokens != null) out.max_tokens = cap;
  }
  return out;
}
